"""Training the MiniBiEncoder on pairs made from the knowledge base itself, and `make models`.

What it is: (pseudo-query, passage) pairs from the KB text only -- the inverse cloze task
(Lee et al., "Latent Retrieval for Weakly Supervised Open Domain QA", ACL 2019: a sentence is
the query, its chunk without that sentence the passage), section heading -> chunk -- plus
BM25-mined hard negatives, same-section false negatives masked out of each batch, word dropout
on queries, token vectors initialised from PPMI + truncated SVD of KB co-occurrences (Levy &
Goldberg, 2014) and early stopping on held-out KB pairs. The eval questions are never read.
What it leaves out: query generation by a language model, distillation from a cross-encoder.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from minirag.bm25 import BM25Index, tokenize
from minirag.biencoder import (
    BIENCODER_PATH,
    BiEncoderConfig,
    MiniBiEncoder,
    info_nce_backward,
    info_nce_forward,
)
from minirag.chunk import Chunk, search_text
from minimodel.optim import AdamW, clip_grad_norm, cosine_lr


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
    passage_dropout: float = 0.0  # probability of hiding each passage token
    keep_sentence: float = 0.5  # ICT: fraction of pairs whose passage keeps the query sentence
    holdout: float = 0.05  # fraction of ICT sentences held out for early stopping
    ppmi_init: bool = True  # token vectors from PPMI + SVD (False: random normal)
    ppmi_window: int = 5  # co-occurrence window (tokens on each side)
    eval_every: int = 50  # steps between held-out evaluations
    early_stopping: bool = True  # keep the weights of the best held-out MRR (else the last)
    seed: int = 0


@dataclass(frozen=True)
class Pair:
    query: str  # the pseudo-query (a sentence, a heading)
    passage: str  # what the query should retrieve: its chunk without the query's words
    passage_full: str  # the chunk with them (used for a `keep_sentence` fraction of steps)
    chunk: int  # index of the chunk it came from
    kind: str  # "ict" | "heading"


# ------------------------------------------------------------------------------------ pairs


def sentences(text: str, min_words: int = 4) -> list[str]:
    """Sentences and lines of a chunk with at least `min_words` words (table rows included)."""
    parts = (s.strip() for line in text.splitlines() for s in _SENT.split(line))
    return [s for s in parts if len(tokenize(s)) >= min_words]


_SENT = __import__("re").compile(r"(?<=[.!?])\s+")


def make_pairs(chunks: list[Chunk], cfg: TrainConfig, rng: np.random.Generator
               ) -> tuple[list[Pair], list[Pair], list[str]]:
    """(training pairs, held-out pairs, the passages the held-out pairs are searched among).

    ICT: each sentence of a chunk -> the chunk's search text without that sentence (kept in a
    `keep_sentence` fraction, so exact matches are not unlearned). Heading: "title section"
    -> every chunk of the section. A held-out sentence is cut out of every passage of its chunk,
    training ones included, so early stopping measures retrieval of text never trained on.
    """
    train, held, held_passages = [], [], []
    for i, c in enumerate(chunks):
        text, sents = c.text, sentences(c.text)
        out = [s for s in sents if rng.random() < cfg.holdout]  # held-out sentences
        for s in out:
            text = text.replace(s, " ", 1)
        held_passages.append(_with_header(c, text))
        for s in out:
            held.append(Pair(s, held_passages[i], held_passages[i], i, "ict"))
        for s in sents:
            if s in out or s.strip() == text.strip():
                continue
            train.append(Pair(s, _with_header(c, text.replace(s, " ", 1)), held_passages[i],
                              i, "ict"))
        m = c.metadata
        if m.get("section"):
            train.append(Pair(f"{m.get('title', '')} {m['section']}", text, held_passages[i],
                              i, "heading"))
    return train, held, held_passages


def _with_header(c: Chunk, text: str) -> str:
    return search_text(Chunk(c.id, text, c.doc_id, c.offset, c.metadata))


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
    """Token vectors [V, dim] from co-occurrence: PPMI, then a truncated (randomised) SVD.

    count[i, j] = times ids i and j sit within `window` tokens of each other (only ids with a
    pooling weight); PPMI(i, j) = max(0, log p(i, j) / (p(i) p_0.75(j))) with context
    smoothing (Levy, Goldberg & Dagan, 2015); vectors = U_k sqrt(S_k), rows scaled to norm ~1.
    Ids that never occur get the zero vector.
    """
    V = len(weight)
    count = np.zeros((V, V))  # [V, V]
    for ids in id_lists:
        a = np.asarray([t for t in ids if weight[t] > 0], dtype=np.int64)  # [n]
        for off in range(1, window + 1):
            np.add.at(count, (a[:-off], a[off:]), 1.0)  # pairs (t, t + off)
    count = count + count.T  # [V, V] symmetric: both directions
    total = count.sum()
    row = count.sum(axis=1)  # [V]
    ctx = row**0.75
    ctx /= ctx.sum()  # [V] smoothed context distribution
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(count / total) - np.log(row / total)[:, None] - np.log(ctx)[None, :]
    ppmi = np.where(count > 0, np.maximum(pmi, 0.0), 0.0)  # [V, V]
    # randomised SVD (Halko et al., 2011): an orthonormal basis Q of ppmi's range, 3 power steps
    Q = np.linalg.qr(ppmi @ rng.standard_normal((V, dim + 16)))[0]  # [V, dim + 16]
    for _ in range(3):
        Q = np.linalg.qr(ppmi @ (ppmi.T @ Q))[0]
    u, s, _ = np.linalg.svd(Q.T @ ppmi, full_matrices=False)  # [dim + 16, dim + 16]
    vec = (Q @ u[:, :dim]) * np.sqrt(s[:dim])  # [V, dim]
    seen = row > 0
    vec /= np.linalg.norm(vec[seen], axis=1).mean()  # mean row norm 1
    vec[~seen] = 0.0
    return vec


# ----------------------------------------------------------------------------------- training


class PairData:
    """Token ids of every pair's query and passage, and of every chunk, computed once."""

    def __init__(self, model: MiniBiEncoder, pairs: list[Pair], chunks: list[Chunk],
                 negatives: list[list[int]]):
        self.q = [model.token_ids(p.query) for p in pairs]
        self.p = [model.token_ids(p.passage) for p in pairs]
        self.p_full = [model.token_ids(p.passage_full) for p in pairs]
        self.chunk_ids = [model.token_ids(search_text(c)) for c in chunks]
        self.pair_chunk = np.array([p.chunk for p in pairs])  # [n_pairs]
        sec = {}  # (doc, section) -> a small int
        self.section = np.array([sec.setdefault((c.doc_id, c.metadata.get("section")), len(sec))
                                 for c in chunks])  # [n_chunks]
        self.negatives = negatives


def train_step(model, data: PairData, idx: np.ndarray, cfg: TrainConfig, rng):
    """Loss and gradients of one batch: queries idx vs. their passages + hard negatives."""
    q_ids, q_w = model.batch([data.q[i] for i in idx])  # [B, Tq]
    if cfg.word_dropout:
        q_w = q_w * (rng.random(q_w.shape) >= cfg.word_dropout)  # hide some query tokens
        q_w[q_w.sum(axis=1) == 0] = model.batch([data.q[i] for i in idx])[1][
            q_w.sum(axis=1) == 0]  # subtle: never hide a whole query
    neg = [n for i in rng.choice(idx, size=min(cfg.hard_negatives, len(idx)), replace=False)
           for n in data.negatives[i][:1]]
    neg = [n for n in neg if n not in set(data.pair_chunk[idx])]
    keep = rng.random(len(idx)) < cfg.keep_sentence  # [B] passages that keep the query
    p_ids, p_w = model.batch([data.p_full[i] if k else data.p[i] for i, k in zip(idx, keep)]
                             + [data.chunk_ids[n] for n in neg])
    if cfg.passage_dropout:
        p_w = p_w * (rng.random(p_w.shape) >= cfg.passage_dropout)
    sec_q = data.section[data.pair_chunk[idx]]  # [B] gold section of each query
    sec_p = np.concatenate([sec_q, data.section[np.asarray(neg, dtype=np.int64)]])  # [P]
    banned = (sec_q[:, None] == sec_p[None, :])  # [B, P] same section: not a negative...
    np.fill_diagonal(banned, False)  # ...except the positive itself
    q, q_cache = model.forward(q_ids, q_w)  # [B, D]
    p, p_cache = model.forward(p_ids, p_w)  # [P, D]
    loss, cache = info_nce_forward(q, p, cfg.tau, banned)
    dq, dp = info_nce_backward(cache)
    gq, gp = model.backward(dq, q_cache), model.backward(dp, p_cache)
    return loss, {k: gq[k] + gp[k] for k in gq}


def retrieval_scores(model, queries: list[str], passages: list[str], gold: list[int],
                     section: np.ndarray, k: int = 5) -> dict:
    """Recall@k (a passage of the gold section in the top k) and MRR@10 of queries."""
    P, Q = model.embed(passages), model.embed(queries)  # [N, D], [n, D]
    order = np.argsort(-(Q @ P.T), axis=1, kind="stable")[:, :10]  # [n, 10]
    hits = section[order] == section[np.asarray(gold)][:, None]  # [n, 10]
    first = np.where(hits.any(axis=1), hits.argmax(axis=1) + 1, np.inf)  # [n] 1-based rank
    return {f"recall@{k}": float((first <= k).mean()), "mrr@10": float((1 / first).mean())}


def train(model: MiniBiEncoder, chunks: list[Chunk], cfg: TrainConfig = TrainConfig(),
          log=None) -> dict:
    """Train `model` in place on pairs from `chunks`; keep the weights of the best held-out
    MRR. Returns the history: losses, held-out scores, seconds, pairs/s."""
    rng = np.random.default_rng(cfg.seed)
    t0 = time.perf_counter()
    pairs, held, held_passages = make_pairs(chunks, cfg, rng)
    model.set_idf([model.token_ids(search_text(c)) for c in chunks])
    if cfg.ppmi_init:
        ids = [model.token_ids(c.text) for c in chunks]
        vec = ppmi_svd(ids, model.pool_weight, model.cfg.d_embed, cfg.ppmi_window, rng)
        model.params["tok_emb"][...] = vec
    data = PairData(model, pairs, chunks, hard_negatives(pairs, chunks))
    held_args = ([p.query for p in held], held_passages, [p.chunk for p in held], data.section)
    opt = AdamW(model.params, lr=cfg.lr, weight_decay=cfg.weight_decay,
                no_decay={"tok_emb", "b1", "b2"})
    hist = {"step": [], "loss": [], "eval_step": [], "held_out": [], "pairs": len(pairs),
            "held_out_pairs": len(held)}
    best, best_params, order, pos, seen, busy = -1.0, None, rng.permutation(len(pairs)), 0, 0, 0.0
    for step in range(cfg.steps):
        if step % cfg.eval_every == 0 or step == cfg.steps - 1:
            score = retrieval_scores(model, *held_args) if held else {"mrr@10": 0.0}
            hist["eval_step"].append(step)
            hist["held_out"].append(score)
            if score["mrr@10"] > best:
                best, best_params = score["mrr@10"], {k: v.copy() for k, v in model.params.items()}
        if pos + cfg.batch_size > len(order):
            order, pos = rng.permutation(len(pairs)), 0  # a new epoch
        idx = order[pos: pos + cfg.batch_size]
        pos += cfg.batch_size
        t1 = time.perf_counter()
        loss, grads = train_step(model, data, idx, cfg, rng)
        clip_grad_norm(grads, cfg.grad_clip)
        opt.step(grads, cosine_lr(step, cfg.lr, cfg.warmup, cfg.steps, cfg.min_lr))
        busy += time.perf_counter() - t1
        seen += len(idx)
        hist["step"].append(step)
        hist["loss"].append(loss)
        if log and (step % 25 == 0 or step == cfg.steps - 1):
            h = hist["held_out"][-1]
            log(f"step {step:4d}/{cfg.steps} | loss {loss:.4f} | {seen / busy:6.0f} pairs/s | "
                f"held-out R@5 {h.get('recall@5', 0):.3f} MRR@10 {h['mrr@10']:.3f}")
    if cfg.early_stopping and best_params is not None:
        for k, v in best_params.items():
            model.params[k][...] = v
    hist.update(seconds=round(time.perf_counter() - t0, 2), pairs_per_s=round(seen / busy, 1),
                best_held_out_mrr=round(best, 4), config=asdict(cfg))
    return hist


def plot_loss(hist: dict, path: Path) -> Path:
    """The training loss and the held-out MRR@10 against step, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(hist["step"], hist["loss"], lw=1, label="InfoNCE loss (one batch)")
    ax.set(xlabel="step", ylabel="loss", title="MiniBiEncoder training")
    ax2 = ax.twinx()
    ax2.plot(hist["eval_step"], [h["mrr@10"] for h in hist["held_out"]], "o-", color="C1",
             label="held-out MRR@10")
    ax2.set(ylabel="held-out MRR@10", ylim=(0, 1))
    fig.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


__all__ = ["BIENCODER_PATH", "BiEncoderConfig", "Pair", "TrainConfig", "make_pairs", "train",
           "sys"]
