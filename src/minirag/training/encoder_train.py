"""Training the MiniBiEncoder on pairs made from the knowledge base itself.

What it is: the pairs of encoder_pairs.py (KB sentences, headings and questions about KB
facts -> their chunks) with word dropout, BM25-mined hard negatives and same-section false
negatives masked out of each batch. The tower starts as LSA (a truncated SVD of the chunk x
token matrix: Deerwester et al., 1990; encoder_init.py), or from the teacher's vocabulary
(`init="teacher"`), and is fine-tuned with InfoNCE + AdamW, optionally plus a distillation loss
towards the teacher's similarities (distill.py); early stopping watches held-out KB sentences
and questions about held-out facts. The eval questions are never read here: the MANIFEST
records the held-out KB scores, and `minirag eval` measures the shipped model on the eval sets.
`make models`' builder is build.py. Measurements of each choice: theory/01 and EXPERIMENTS.md.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from minimodel.optim import AdamW, clip_grad_norm, cosine_lr
from minirag.bm25 import tokenize
from minirag.chunk import Chunk, search_text
from minirag.encoders.biencoder import MiniBiEncoder
from minirag.encoders.layers import (
    info_nce_backward,
    info_nce_forward,
    sim_mse_backward,
    sim_mse_forward,
)
from minirag.training.distill import TeacherData, prepare
from minirag.training.encoder_init import lsa_init
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
    init: str = "lsa"  # "teacher": a token table distilled from MiniLM (training/distill.py);
    # "lsa": the tower starts as LSA; "random": random token vectors
    distill: float = 0.0  # weight of the loss matching the teacher's cosines (init "teacher")
    anchor: float = 0.0  # L2 pull of the token table towards its distilled start
    teacher_negatives: int = 0  # extra teacher-mined negative chunks per step (init "teacher")
    lsa_dims: int = 0  # init "teacher": the first lsa_dims token coordinates start as LSA's
    holdout: float = 0.05  # fraction of sentences and fact keys never trained on: early stopping
    eval_every: int = 50  # steps between held-out evaluations
    early_stopping: bool = True  # end with the weights of the best held-out score
    seed: int = 0  # seeds the one np.random.Generator every random choice draws from


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
                 section: np.ndarray, teacher: TeacherData | None = None):
        self.q = [model.token_ids(p.query) for p in pairs]
        self.cut = [model.token_ids(p.cut) for p in pairs]
        self.full = [model.token_ids(p.full) for p in pairs]
        self.chunk_ids = [model.token_ids(search_text(c)) for c in chunks]
        self.pair_chunk = np.array([p.chunk for p in pairs])  # [n_pairs]
        self.negatives = hard_negatives(pairs, chunks)  # [n_pairs][<= 3] chunk indices
        self.section = section  # [N] section number of each chunk
        self.teacher = teacher  # the teacher's targets and negatives (init "teacher"), or None


def train_step(model: MiniBiEncoder, data: PairData, idx: np.ndarray, cfg: TrainConfig,
               rng: np.random.Generator) -> tuple[float, dict]:
    """Loss and gradients of one batch: queries idx vs. their passages + hard negatives."""
    q_ids, q_m = model.batch([data.q[i] for i in idx])  # [B, Tq]
    kept = q_m * (rng.random(q_m.shape) >= cfg.word_dropout)  # [B, Tq] hide some query tokens
    alive = (kept * model.idf[q_ids]).sum(axis=1) > 0  # [B] subtle: never hide a whole query
    q_m = np.where(alive[:, None], kept, q_m)
    # one BM25 negative from some pairs of the batch, unless it is a positive of the batch
    picks = rng.choice(idx, size=min(cfg.hard_negatives, len(idx)), replace=False)
    neg = {data.negatives[i][0] for i in picks if data.negatives[i]}
    if data.teacher is not None and cfg.teacher_negatives:  # and the teacher's best wrong ones
        more = rng.choice(idx, size=min(cfg.teacher_negatives, len(idx)), replace=False)
        neg |= {data.teacher.negatives[i][0] for i in more}
    neg = sorted(neg - set(data.pair_chunk[idx].tolist()))
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
    if data.teacher is not None and cfg.distill:  # the student's cosines -> the teacher's
        t = data.teacher
        tp = t.chunk_t[np.concatenate([data.pair_chunk[idx], np.asarray(neg, dtype=np.int64)])]
        dist, d_cache = sim_mse_forward(q, p, t.query_t[idx], tp)  # [B, P] vs [B, P]
        dq_t, dp_t = sim_mse_backward(d_cache)  # [B, D], [P, D]
        loss, dq, dp = loss + cfg.distill * dist, dq + cfg.distill * dq_t, dp + cfg.distill * dp_t
    gq, gp = model.backward(dq, q_cache), model.backward(dp, p_cache)
    grads = {k: gq[k] + gp[k] for k in gq}  # one tower used twice: the gradients add
    if data.teacher is not None and cfg.anchor:  # d/dE of anchor/2 ||E - start||^2
        grads["tok_emb"] += cfg.anchor * (model.params["tok_emb"] - data.teacher.start)
    return loss, grads


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
    if cfg.init not in ("teacher", "lsa", "random"):
        raise ValueError(f"init must be 'teacher', 'lsa' or 'random', got {cfg.init!r}")
    dev = HeldOut(held, chunks, np.random.default_rng([cfg.seed, 1]), held_facts)
    teacher = None
    if cfg.init == "teacher":  # sets the IDF and the distilled start (TeacherMissing if absent)
        teacher = prepare(model, chunks, [p.query for p in pairs],
                          np.array([p.chunk for p in pairs]), dev.section,
                          lsa_dims=cfg.lsa_dims)
    else:
        model.set_idf([model.token_ids(search_text(c)) for c in chunks])
    if cfg.init == "lsa":
        lsa_init(model, [model.token_ids(search_text(c)) for c in chunks])
    data = PairData(model, pairs, chunks, dev.section, teacher)
    opt = AdamW(model.params, lr=cfg.lr, weight_decay=cfg.weight_decay,
                no_decay=model.no_decay())
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
    hist.update(seconds=round(time.perf_counter() - t0, 2),
                pairs_per_s=round(seen / max(busy, 1e-9), 1),
                best_step=hist["eval_step"][int(np.argmax(scores))] if stopped else cfg.steps,
                config=asdict(cfg))
    return hist
