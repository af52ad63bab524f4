"""Training the MiniBiEncoder on pairs made from the knowledge base itself.

What it is: (pseudo-query, passage) pairs from the KB text only -- the inverse cloze task
(Lee et al., "Latent Retrieval for Weakly Supervised Open Domain QA", ACL 2019: a sentence is
the query, its chunk without that sentence the passage) and section heading -> chunk -- with
word dropout, BM25-mined hard negatives, same-section false negatives masked out of each batch,
token vectors initialised from PPMI + truncated SVD of KB co-occurrences (Levy, Goldberg &
Dagan, 2015), and early stopping on held-out KB sentences. The eval questions are never read.
What it leaves out: queries written by a language model, distillation from a cross-encoder.
The builder behind `make models` is in biencoder_build.py.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass

import numpy as np

from minimodel.optim import AdamW, clip_grad_norm, cosine_lr
from minirag.biencoder import MiniBiEncoder, info_nce_backward, info_nce_forward
from minirag.bm25 import BM25Index, tokenize
from minirag.chunk import Chunk, search_text
from minirag.embed import stable_hash


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 600  # optimizer steps
    batch_size: int = 128  # pairs per step; the other pairs' passages are the negatives
    hard_negatives: int = 32  # extra BM25-mined negative chunks per step
    tau: float = 0.05  # InfoNCE temperature: logits are cosines / tau
    lr: float = 3e-3  # peak learning rate (cosine schedule after warm-up)
    min_lr: float = 1e-4  # learning rate at the last step
    warmup: int = 30  # steps of linear warm-up
    weight_decay: float = 0.01  # AdamW decay of the two MLP matrices
    grad_clip: float = 1.0  # max global gradient norm
    word_dropout: float = 0.5  # probability of hiding each query token
    passage_dropout: float = 0.15  # probability of hiding each passage token
    keyword_queries: int = 0  # per chunk: queries of 2-6 random words of it -> the chunk
    keep_sentence: float = 0.5  # ICT: fraction of passages that keep the query sentence
    learn_weights: bool = True  # learn each token's pooling weight (False: IDF only)
    init: str = "lsa"  # "lsa": the tower starts as LSA; "ppmi": token vectors from PPMI + SVD;
    #                    "random": random normal token vectors
    ppmi_window: int = 5  # co-occurrence window (tokens on each side)
    holdout: float = 0.05  # fraction of sentences kept out of the queries, for early stopping
    eval_every: int = 50  # steps between held-out evaluations
    early_stopping: bool = True  # keep the weights of the best held-out score (else the last)
    seed: int = 0


@dataclass(frozen=True)
class Pair:
    query: str  # the pseudo-query (a sentence, a heading)
    cut: str  # its chunk's search text without the query's words
    full: str  # its chunk's search text, as the index holds it
    chunk: int  # index of the chunk


# ------------------------------------------------------------------------------------ pairs

_SENT = re.compile(r"(?<=[.!?])\s+")  # a sentence ends at . ! or ? followed by a space


def sentences(text: str, min_words: int = 4) -> list[str]:
    """Sentences and lines of a chunk with at least `min_words` words (table rows included).
    Example: sentences("Go on. I went there today.\\n| go | went | gone | - |") ->
        ["I went there today.", "| go | went | gone | - |"]"""
    parts = (s.strip() for line in text.splitlines() for s in _SENT.split(line))
    return [s for s in parts if len(tokenize(s)) >= min_words]


def make_pairs(chunks: list[Chunk], cfg: TrainConfig, rng: np.random.Generator
               ) -> tuple[list[Pair], list[Pair]]:
    """(training pairs, held-out pairs), from the chunks' own text and headings.

    ICT: each sentence -> its chunk without it. Heading: "title section" -> each chunk of the
    section, without the header line. A `holdout` fraction of the sentences is never a
    training query; they stay in the passages, as eval questions' words stay in the index.
    """
    train, held = [], []
    for i, c in enumerate(chunks):
        full, rest = search_text(c), c.text  # rest: the text minus held-out sentences
        for s in sentences(c.text):
            pair = Pair(s, search_text(_replace_text(c, c.text.replace(s, " ", 1))), full, i)
            if stable_hash(s) % 10_000 < cfg.holdout * 10_000:  # the same, whatever the config
                held.append(pair)
                rest = rest.replace(s, " ", 1)
            else:
                train.append(pair)
        words = tokenize(rest)
        for _ in range(cfg.keyword_queries if words else 0):
            pick = rng.choice(len(words), size=min(len(words), int(rng.integers(2, 7))),
                              replace=False)
            train.append(Pair(" ".join(words[j] for j in sorted(pick)), full, full, i))
        m = c.metadata
        if m.get("section"):
            train.append(Pair(f"{m.get('title', '')} {m['section']}", c.text, full, i))
    return train, held


def _replace_text(c: Chunk, text: str) -> Chunk:
    return Chunk(c.id, text, c.doc_id, c.offset, c.metadata)


def hard_negatives(pairs: list[Pair], chunks: list[Chunk], k: int = 3) -> list[list[int]]:
    """For each pair, the k best BM25 chunks for its query outside its own section."""
    bm25 = BM25Index()
    bm25.add_tokens(chunks, [tokenize(search_text(c)) for c in chunks])
    section = [(c.doc_id, c.metadata.get("section")) for c in chunks]
    out = []
    for p in pairs:
        rows, _ = bm25.search_ids(bm25.term_ids(tokenize(p.query)), k + 8)
        out.append([int(r) for r in rows if section[r] != section[p.chunk]][:k])
    return out


# ------------------------------------------------------------------ token-vector initialisation


def ppmi_svd(id_lists: list[list[int]], weight: np.ndarray, dim: int, window: int,
             rng: np.random.Generator) -> np.ndarray:
    """Token vectors [V, dim] from co-occurrence counts: PPMI, then a truncated SVD.

    count[i, j] = times ids i and j sit within `window` tokens of each other (ids with a
    pooling weight only); PPMI(i, j) = max(0, log p(i, j) / (p(i) p_0.75(j))), the context
    distribution smoothed by the power 0.75; vectors = U_k sqrt(S_k), scaled to mean row norm 1.
    Ids that never occur get the zero vector.
    """
    V = len(weight)
    count = np.zeros((V, V))  # [V, V]
    for ids in id_lists:
        a = np.asarray([t for t in ids if weight[t] > 0], dtype=np.int64)  # [n] content ids
        for off in range(1, window + 1):
            np.add.at(count, (a[:-off], a[off:]), 1.0)  # every pair (a[t], a[t + off])
    count = count + count.T  # [V, V] symmetric: left and right contexts
    total, row = count.sum(), count.sum(axis=1)  # scalar, [V]
    ctx = row**0.75 / (row**0.75).sum()  # [V] smoothed context distribution
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(count / total) - np.log(row / total)[:, None] - np.log(ctx)[None, :]
    ppmi = np.where(count > 0, np.maximum(pmi, 0.0), 0.0)  # [V, V]
    # randomised SVD (Halko, Martinsson & Tropp, 2011): a basis Q of ppmi's top range, refined
    # by power iterations, then the exact SVD of the small matrix Q^T ppmi
    Q = np.linalg.qr(ppmi @ rng.standard_normal((V, dim + 16)))[0]  # [V, k + 16]
    for _ in range(3):
        Q = np.linalg.qr(ppmi @ (ppmi.T @ Q))[0]  # [V, k + 16]
    u, s, _ = np.linalg.svd(Q.T @ ppmi, full_matrices=False)  # [k + 16, k + 16], [k + 16]
    vec = (Q @ u[:, :dim]) * np.sqrt(s[:dim])  # [V, k]
    seen = row > 0  # [V]
    vec /= np.linalg.norm(vec[seen], axis=1).mean()
    vec[~seen] = 0.0
    return vec


def lsa_init(model: MiniBiEncoder, id_lists: list[list[int]]) -> None:
    """Start the whole tower as LSA (Deerwester et al., 1990): token vectors are the top
    right singular vectors of the chunk x token matrix, and the MLP passes them through.

    X[i, t] = log(1 + tf) idf(t) over chunk i, rows L2-normalised; X = U S V^T; the token
    vectors are the first C columns of V, so the pooled vector of a text is its LSA projection
    (up to length). The MLP is the identity on the first D of those C coordinates, exactly,
    because gelu(x) - gelu(-x) = x: W1 = [I, -I] (C x 2C), W2 = [[I_D], [-I_D]] (2C x D).
    """
    C, D, H = model.cfg.d_embed, model.cfg.d, model.cfg.d_hidden
    if H < 2 * C or D > C:
        raise ValueError(f"lsa init needs d_hidden ({H}) >= 2 * d_embed ({C}) >= 2 * d ({D})")
    X = np.zeros((len(id_lists), len(model.idf)))  # [N, V + K]
    for i, ids in enumerate(id_lists):
        np.add.at(X[i], ids, 1.0)  # term counts
    X = np.log1p(X) * model.idf  # [N, V + K] sublinear tf * idf
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    _, _, vt = np.linalg.svd(X, full_matrices=False)  # [min(N, V + K), V + K]
    emb = vt[:C].T  # [V + K, C] token vectors; ids no chunk uses stay 0
    pooled = (X @ emb) / np.maximum(X.sum(axis=1, keepdims=True), 1e-12)  # [N, C]
    p = model.params
    p["tok_emb"][...] = emb / pooled.std()  # unit-scale pooled vectors for the GELU
    p["w1"][...] = 0.0
    p["w1"][:, :C], p["w1"][:, C:2 * C] = np.eye(C), -np.eye(C)  # [C, H]
    p["w2"][...] = 0.0
    p["w2"][:D], p["w2"][C:C + D] = np.eye(D), -np.eye(D)  # [H, D]
    p["b1"][...], p["b2"][...] = 0.0, 0.0


# --------------------------------------------------------------------------- held-out scores


class HeldOut:
    """Early-stopping yardstick from held-out KB sentences, two ways:
    "cut": the sentence must find its chunk with the sentence cut out (meaning, not words);
    "keywords": half of its words, at random, must find its chunk as indexed (words)."""

    def __init__(self, held: list[Pair], chunks: list[Chunk], rng: np.random.Generator):
        self.held, self.full = held, [search_text(c) for c in chunks]
        self.keywords = []  # one keyword query per held-out pair
        for p in held:
            words = tokenize(p.query)
            self.keywords.append(" ".join([w for w in words if rng.random() < 0.5] or words[:2]))
        sec: dict = {}  # (doc, section) -> a small int
        self.section = np.array([sec.setdefault((c.doc_id, c.metadata.get("section")), len(sec))
                                 for c in chunks])  # [N]
        self.gold = np.array([p.chunk for p in held], dtype=np.int64)  # [n]

    def ranks(self, S: np.ndarray) -> np.ndarray:
        """1-based rank of the first chunk of the gold section in each row of S [n, N]."""
        order = np.argsort(-S, axis=1, kind="stable")[:, :10]  # [n, 10]
        hits = self.section[order] == self.section[self.gold][:, None]  # [n, 10]
        return np.where(hits.any(axis=1), hits.argmax(axis=1) + 1, np.inf)  # [n]

    def scores(self, embedder) -> dict:
        if not self.held:
            return {"score": 0.0}
        P = embedder.embed(self.full)  # [N, D]
        Q = embedder.embed([p.query for p in self.held])  # [n, D]
        S = Q @ P.T  # [n, N]
        cut = embedder.embed([p.cut for p in self.held])  # [n, D] the gold chunk, cut
        S[np.arange(len(self.gold)), self.gold] = (Q * cut).sum(axis=1)
        r_cut = self.ranks(S)
        r_kw = self.ranks(embedder.embed(self.keywords) @ P.T)
        out = {"cut_recall@5": (r_cut <= 5).mean(), "cut_mrr@10": (1 / r_cut).mean(),
               "kw_recall@5": (r_kw <= 5).mean(), "kw_mrr@10": (1 / r_kw).mean()}
        out["score"] = (out["cut_mrr@10"] + out["kw_mrr@10"]) / 2
        return {k: round(float(v), 4) for k, v in out.items()}


# ----------------------------------------------------------------------------------- training


class PairData:
    """Token ids of every pair's query and passages, and of every chunk, computed once."""

    def __init__(self, model: MiniBiEncoder, pairs: list[Pair], chunks: list[Chunk],
                 negatives: list[list[int]], section: np.ndarray):
        self.q = [model.token_ids(p.query) for p in pairs]
        self.cut = [model.token_ids(p.cut) for p in pairs]
        self.full = [model.token_ids(p.full) for p in pairs]
        self.chunk_ids = [model.token_ids(search_text(c)) for c in chunks]
        self.pair_chunk = np.array([p.chunk for p in pairs])  # [n_pairs]
        self.negatives, self.section = negatives, section  # [n_pairs][<= 3], [N]


def train_step(model: MiniBiEncoder, data: PairData, idx: np.ndarray, cfg: TrainConfig,
               rng: np.random.Generator) -> tuple[float, dict]:
    """Loss and gradients of one batch: queries idx vs. their passages + hard negatives."""
    q_ids, q_m = model.batch([data.q[i] for i in idx])  # [B, Tq]
    kept = q_m * (rng.random(q_m.shape) >= cfg.word_dropout)  # [B, Tq] hide some query tokens
    alive = (kept * model.idf[q_ids]).sum(axis=1) > 0  # [B] subtle: never hide a whole query
    q_m = np.where(alive[:, None], kept, q_m)
    # one BM25 negative from some pairs of the batch, unless it is a positive of the batch
    picks = rng.choice(idx, size=min(cfg.hard_negatives, len(idx)), replace=False)
    neg = [data.negatives[i][0] for i in picks if data.negatives[i]]
    neg = sorted(set(neg) - set(data.pair_chunk[idx].tolist()))
    keep = rng.random(len(idx)) < cfg.keep_sentence  # [B] passages that keep the query
    p_ids, p_m = model.batch([data.full[i] if k else data.cut[i] for i, k in zip(idx, keep)]
                             + [data.chunk_ids[n] for n in neg])  # [P, Tp], P = B + negatives
    p_m = p_m * (rng.random(p_m.shape) >= cfg.passage_dropout)  # [P, Tp]
    sec_q = data.section[data.pair_chunk[idx]]  # [B] gold section of each query
    sec_p = np.concatenate([sec_q, data.section[np.asarray(neg, dtype=np.int64)]])  # [P]
    banned = sec_q[:, None] == sec_p[None, :]  # [B, P] the same section is no negative...
    np.fill_diagonal(banned, False)  # ...but the positive itself stays
    q, q_cache = model.forward(q_ids, q_m)  # [B, D]
    p, p_cache = model.forward(p_ids, p_m)  # [P, D]
    loss, cache = info_nce_forward(q, p, cfg.tau, banned)
    dq, dp = info_nce_backward(cache)  # [B, D], [P, D]
    gq, gp = model.backward(dq, q_cache), model.backward(dp, p_cache)
    grads = {k: gq[k] + gp[k] for k in gq}  # one tower, two uses: the gradients add
    if not cfg.learn_weights:
        grads["tok_logw"][...] = 0.0
    return loss, grads


def train(model: MiniBiEncoder, chunks: list[Chunk], cfg: TrainConfig = TrainConfig(),
          log=None) -> dict:
    """Train `model` in place on pairs from `chunks`; with early_stopping, end with the
    weights of the best held-out score. Returns the history (losses, held-out scores...)."""
    rng = np.random.default_rng(cfg.seed)
    t0 = time.perf_counter()
    pairs, held = make_pairs(chunks, cfg, rng)
    model.set_idf([model.token_ids(search_text(c)) for c in chunks])
    if cfg.init == "ppmi":
        ids = [model.token_ids(c.text) for c in chunks]
        model.params["tok_emb"][...] = ppmi_svd(ids, model.idf, model.cfg.d_embed,
                                                cfg.ppmi_window, rng)
    elif cfg.init == "lsa":
        lsa_init(model, [model.token_ids(search_text(c)) for c in chunks])
    dev = HeldOut(held, chunks, np.random.default_rng([cfg.seed, 1]))
    data = PairData(model, pairs, chunks, hard_negatives(pairs, chunks), dev.section)
    opt = AdamW(model.params, lr=cfg.lr, weight_decay=cfg.weight_decay,
                no_decay={"tok_emb", "tok_logw", "b1", "b2"})
    hist = {"step": [], "loss": [], "eval_step": [], "held_out": [], "pairs": len(pairs),
            "held_out_pairs": len(held), "setup_seconds": round(time.perf_counter() - t0, 2)}
    best, best_params, busy, seen = -1.0, None, 0.0, 0
    order, pos = rng.permutation(len(pairs)), 0
    for step in range(cfg.steps + 1):
        if step % cfg.eval_every == 0 or step == cfg.steps:
            hist["eval_step"].append(step)
            hist["held_out"].append(dev.scores(model))
            if hist["held_out"][-1]["score"] > best:
                best = hist["held_out"][-1]["score"]
                best_params = {k: v.copy() for k, v in model.params.items()}
        if step == cfg.steps:
            break
        if pos + cfg.batch_size > len(order):
            order, pos = rng.permutation(len(pairs)), 0  # a new epoch
        idx, pos = order[pos: pos + cfg.batch_size], pos + cfg.batch_size
        t1 = time.perf_counter()
        loss, grads = train_step(model, data, idx, cfg, rng)
        clip_grad_norm(grads, cfg.grad_clip)
        opt.step(grads, cosine_lr(step, cfg.lr, cfg.warmup, cfg.steps, cfg.min_lr))
        busy, seen = busy + time.perf_counter() - t1, seen + len(idx)
        hist["step"].append(step)
        hist["loss"].append(loss)
        if log and (step % 25 == 0 or step == cfg.steps - 1):
            h = hist["held_out"][-1]
            log(f"step {step:4d}/{cfg.steps} | loss {loss:.4f} | {seen / busy:5.0f} pairs/s | "
                f"held-out MRR@10 cut {h.get('cut_mrr@10', 0):.3f} "
                f"keywords {h.get('kw_mrr@10', 0):.3f}")
    if cfg.early_stopping and best_params is not None:
        for k, v in best_params.items():
            model.params[k][...] = v
    best_at = hist["eval_step"][int(np.argmax([h["score"] for h in hist["held_out"]]))]
    hist.update(seconds=round(time.perf_counter() - t0, 2), pairs_per_s=round(seen / busy, 1),
                best_step=best_at if cfg.early_stopping else cfg.steps, config=asdict(cfg))
    return hist
