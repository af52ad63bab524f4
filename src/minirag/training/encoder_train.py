"""Training the MiniBiEncoder on pairs made from the knowledge base itself, and its builder.

What it is: the pairs of encoder_pairs.py (KB sentences, headings and questions about KB
facts -> their chunks) with word dropout, BM25-mined hard negatives and same-section false
negatives masked out of each batch. The tower starts as LSA (a truncated SVD of the chunk x
token matrix: Deerwester et al., 1990) and is fine-tuned with InfoNCE + AdamW; early stopping
watches held-out KB sentences and questions about held-out facts.
The eval questions are never read here: the MANIFEST records the held-out KB scores, and
`minirag eval` measures the shipped model on the eval sets. What it leaves out: distillation
from a cross-encoder. Measurements of each choice: theory/01 and lab 01.
"""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from minimodel.optim import AdamW, clip_grad_norm, cosine_lr
from minirag.bm25 import tokenize
from minirag.chunk import Chunk, load_kb, search_text
from minirag.encoders.biencoder import BIENCODER_PATH, BiEncoderConfig, MiniBiEncoder
from minirag.encoders.layers import info_nce_backward, info_nce_forward
from minirag.files.artifacts import kb_sha256, load_tokenizer
from minirag.files.kb import DEFAULT_KB, REPO_ROOT
from minirag.training.encoder_pairs import Pair, hard_negatives, training_pairs


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 600  # optimizer steps
    batch_size: int = 128  # pairs per step; the other pairs' passages are the negatives
    hard_negatives: int = 32  # extra BM25-mined negative chunks per step
    tau: float = 0.05  # InfoNCE temperature: logits are cosines / tau
    lr: float = 1e-3  # peak learning rate (cosine schedule after warm-up)
    min_lr: float = 1e-4  # learning rate at the last step
    warmup: int = 30  # steps of linear warm-up
    weight_decay: float = 0.01  # AdamW decay of the two MLP matrices
    grad_clip: float = 1.0  # max global gradient norm
    word_dropout: float = 0.5  # probability of hiding each query token
    passage_dropout: float = 0.15  # probability of hiding each passage token
    keep_sentence: float = 0.5  # ICT: fraction of passages that keep the query sentence
    fact_share: float = 0.3  # share of the training pairs that are questions about KB facts
    init: str = "lsa"  # "lsa": the tower starts as LSA; "random": random token vectors
    holdout: float = 0.05  # fraction of sentences and fact keys never trained on: early stopping
    eval_every: int = 50  # steps between held-out evaluations
    early_stopping: bool = True  # end with the weights of the best held-out score
    seed: int = 0  # seeds the one np.random.Generator every random choice draws from


def lsa_init(model: MiniBiEncoder, id_lists: list[list[int]]) -> None:
    """Start the whole tower as LSA: token vectors are the top right singular vectors of the
    chunk x token matrix, and the MLP passes the first D coordinates through unchanged.

    X[i, t] = log(1 + tf) idf(t) for chunk i, rows L2-normalised; X = U S V^T; token vectors =
    the first C columns of V, so a text's pooled vector is its LSA projection (up to length).
    The MLP is exactly the identity on D of them because gelu(x) - gelu(-x) = x:
    W1 = [I, -I] (C x 2C) and W2 = [[I_D], [-I_D]] (2C x D), zero biases.
    """
    C, D, H = model.cfg.d_embed, model.cfg.d, model.cfg.d_hidden
    if H < 2 * C or D > C:
        raise ValueError(f"lsa init needs d_hidden ({H}) >= 2 * d_embed ({C}) >= 2 * d ({D})")
    X = np.zeros((len(id_lists), len(model.idf)))  # [N, V + K]
    for i, ids in enumerate(id_lists):
        np.add.at(X[i], ids, 1.0)  # term counts
    X = np.log1p(X) * model.idf  # [N, V + K] sublinear tf * idf, as the pooling weighs them
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    vt = np.linalg.svd(X, full_matrices=False)[2]  # [min(N, V + K), V + K]
    emb = vt[:C].T  # [V + K, C]; an id no chunk uses gets the zero vector
    pooled = (X @ emb) / np.maximum(X.sum(axis=1, keepdims=True), 1e-12)  # [N, C]
    p = model.params
    p["tok_emb"][...] = emb / pooled.std()  # pooled vectors of unit scale for the GELU
    p["w1"][...], p["w2"][...], p["b1"][...], p["b2"][...] = 0.0, 0.0, 0.0, 0.0
    p["w1"][:, :C], p["w1"][:, C:2 * C] = np.eye(C), -np.eye(C)  # [C, H]
    p["w2"][:D], p["w2"][C:C + D] = np.eye(D), -np.eye(D)  # [H, D]


# --------------------------------------------------------------------------- held-out scores


class HeldOut:
    """The early-stopping yardstick, from held-out KB sentences, two ways, and facts:
    "cut": the sentence must find its chunk with the sentence cut out (meaning, not words);
    "kw": half of its words, at random, must find its chunk as indexed (words);
    "fact": a question about a held-out fact must find the chunk that states it.
    score = the mean of the MRR@10s (gold = any chunk of the gold chunk's section)."""

    def __init__(self, held: list[Pair], chunks: list[Chunk], rng: np.random.Generator,
                 facts: list[Pair] = ()):
        self.held, self.full = held, [search_text(c) for c in chunks]
        self.facts = list(facts)
        self.fact_gold = np.array([p.chunk for p in self.facts], dtype=np.int64)  # [m]
        self.keywords = []  # one keyword query per held-out pair
        for p in held:
            words = tokenize(p.query)
            self.keywords.append(" ".join([w for w in words if rng.random() < 0.5] or words[:2]))
        sec: dict = {}  # (doc, section) -> a small int
        self.section = np.array([sec.setdefault((c.doc_id, c.metadata.get("section")), len(sec))
                                 for c in chunks])  # [N]
        self.gold = np.array([p.chunk for p in held], dtype=np.int64)  # [n]

    def ranks(self, S: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """1-based rank of the first chunk of the gold section in each row of S [n, N]."""
        order = np.argsort(-S, axis=1, kind="stable")[:, :10]  # [n, 10]
        hits = self.section[order] == self.section[gold][:, None]  # [n, 10]
        return np.where(hits.any(axis=1), hits.argmax(axis=1) + 1, np.inf)  # [n]

    def scores(self, embedder) -> dict:
        if not self.held:
            return {"score": 0.0}
        P = embedder.embed(self.full)  # [N, D]
        Q = embedder.embed([p.query for p in self.held])  # [n, D]
        S = Q @ P.T  # [n, N]
        cut = embedder.embed([p.cut for p in self.held])  # [n, D] the gold chunk, cut
        S[np.arange(len(self.gold)), self.gold] = (Q * cut).sum(axis=1)
        ranks = {"cut": self.ranks(S, self.gold),
                 "kw": self.ranks(embedder.embed(self.keywords) @ P.T, self.gold)}
        if self.facts:
            F = embedder.embed([p.query for p in self.facts])  # [m, D]
            ranks["fact"] = self.ranks(F @ P.T, self.fact_gold)
        out = {}
        for name, r in ranks.items():
            out[f"{name}_recall@5"], out[f"{name}_mrr@10"] = (r <= 5).mean(), (1 / r).mean()
        out["score"] = np.mean([out[f"{name}_mrr@10"] for name in ranks])
        return {k: round(float(v), 4) for k, v in out.items()}


# ----------------------------------------------------------------------------------- training


class PairData:
    """Token ids of every pair's query and passages, and of every chunk, computed once."""

    def __init__(self, model: MiniBiEncoder, pairs: list[Pair], chunks: list[Chunk],
                 section: np.ndarray):
        self.q = [model.token_ids(p.query) for p in pairs]
        self.cut = [model.token_ids(p.cut) for p in pairs]
        self.full = [model.token_ids(p.full) for p in pairs]
        self.chunk_ids = [model.token_ids(search_text(c)) for c in chunks]
        self.pair_chunk = np.array([p.chunk for p in pairs])  # [n_pairs]
        self.negatives = hard_negatives(pairs, chunks)  # [n_pairs][<= 3] chunk indices
        self.section = section  # [N] section number of each chunk


def train_step(model: MiniBiEncoder, data: PairData, idx: np.ndarray, cfg: TrainConfig,
               rng: np.random.Generator) -> tuple[float, dict]:
    """Loss and gradients of one batch: queries idx vs. their passages + hard negatives."""
    q_ids, q_m = model.batch([data.q[i] for i in idx])  # [B, Tq]
    kept = q_m * (rng.random(q_m.shape) >= cfg.word_dropout)  # [B, Tq] hide some query tokens
    alive = (kept * model.idf[q_ids]).sum(axis=1) > 0  # [B] subtle: never hide a whole query
    q_m = np.where(alive[:, None], kept, q_m)
    # one BM25 negative from some pairs of the batch, unless it is a positive of the batch
    picks = rng.choice(idx, size=min(cfg.hard_negatives, len(idx)), replace=False)
    neg = sorted({data.negatives[i][0] for i in picks if data.negatives[i]}
                 - set(data.pair_chunk[idx].tolist()))
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
    return loss, {k: gq[k] + gp[k] for k in gq}  # one tower used twice: the gradients add


def train(model: MiniBiEncoder, chunks: list[Chunk], cfg: TrainConfig | None = None,
          log=None) -> dict:
    """Fit IDF, initialise and train `model` in place on pairs from `chunks`; with
    early_stopping, end with the weights of the best held-out score. Returns the history."""
    cfg = cfg or TrainConfig()
    rng = np.random.default_rng(cfg.seed)
    t0 = time.perf_counter()
    pairs, held, held_facts = training_pairs(chunks, cfg)
    if not pairs:
        raise ValueError("no training pairs: the chunks hold no sentence of 4+ words")
    model.set_idf([model.token_ids(search_text(c)) for c in chunks])
    if cfg.init == "lsa":
        lsa_init(model, [model.token_ids(search_text(c)) for c in chunks])
    elif cfg.init != "random":
        raise ValueError(f"init must be 'lsa' or 'random', got {cfg.init!r}")
    dev = HeldOut(held, chunks, np.random.default_rng([cfg.seed, 1]), held_facts)
    data = PairData(model, pairs, chunks, dev.section)
    opt = AdamW(model.params, lr=cfg.lr, weight_decay=cfg.weight_decay,
                no_decay={"tok_emb", "tok_logw", "b1", "b2"})
    hist = {"step": [], "loss": [], "eval_step": [], "held_out": [], "pairs": len(pairs),
            "held_out_pairs": len(held) + len(held_facts),
            "setup_seconds": round(time.perf_counter() - t0, 2)}
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
                f"held-out MRR@10 cut {h.get('cut_mrr@10', 0):.3f} kw {h.get('kw_mrr@10', 0):.3f}"
                f" fact {h.get('fact_mrr@10', 0):.3f}")
    stopped = cfg.early_stopping and bool(held)  # nothing held out: keep the last weights
    if stopped:
        for k, v in best_params.items():
            model.params[k][...] = v
    scores = [h["score"] for h in hist["held_out"]]
    hist.update(seconds=round(time.perf_counter() - t0, 2), pairs_per_s=round(seen / busy, 1),
                best_step=hist["eval_step"][int(np.argmax(scores))] if stopped else cfg.steps,
                config=asdict(cfg))
    return hist


def plot_loss(hist: dict, path: Path) -> Path:
    """The training loss and the held-out scores against step, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    ax.plot(hist["step"], hist["loss"], lw=0.8, alpha=0.8, label="InfoNCE loss (one batch)")
    ax.set(xlabel="step", ylabel="loss", title="MiniBiEncoder training")
    ax2 = ax.twinx()
    for i, (key, label) in enumerate((("cut_mrr@10", "held-out MRR@10, cut"),
                                      ("kw_mrr@10", "... keywords"), ("fact_mrr@10", "... facts"))):
        ax2.plot(hist["eval_step"], [h.get(key, 0) for h in hist["held_out"]], "o-", ms=3,
                 label=label, color=f"C{i + 1}")
    ax2.set(ylabel="held-out MRR@10", ylim=(0, 1))
    fig.legend(loc="upper center", fontsize=8, ncol=3)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


# ------------------------------------------------------------------------------- `make models`


def build_biencoder(kb: Path = DEFAULT_KB, out: Path = BIENCODER_PATH,
                    arch: BiEncoderConfig | None = None, cfg: TrainConfig | None = None,
                    log=lambda s: print(s, file=sys.stderr, flush=True)) -> dict:
    """Train the bi-encoder on the KB, save it, plot its loss, and return its MANIFEST entry.
    Progress lines (loss, pairs/s, held-out scores) go to `log`: stderr by default."""
    arch, cfg, tok = arch or BiEncoderConfig(), cfg or TrainConfig(), load_tokenizer()
    model = MiniBiEncoder(replace(arch, vocab_size=len(tok)), tok,
                          np.random.default_rng(cfg.seed))
    hist = train(model, load_kb(kb, tokenizer=tok), cfg, log)
    model.save(out)
    png = plot_loss(hist, REPO_ROOT / "results" / "biencoder_loss.png")
    log(f"saved {out} (loss curve: {png})")
    return {"file": Path(out).name, "sha256": hashlib.sha256(Path(out).read_bytes()).hexdigest(),
            "kb_sha256": kb_sha256(kb), "config": model.config, "train": asdict(cfg),
            "train_seconds": hist["seconds"], "pairs": hist["pairs"],
            "pairs_per_s": hist["pairs_per_s"], "best_step": hist["best_step"],
            "final_loss": round(float(np.mean(hist["loss"][-25:])), 4),
            "held_out": hist["held_out"][hist["eval_step"].index(hist["best_step"])]}
