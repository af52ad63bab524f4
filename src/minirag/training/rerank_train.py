"""Training the re-ranker: query lists from the KB, hard negatives from the first stage.

What it is: questions generated from the KB's own facts (pseudo_queries.py, every one through
the shared eval filter) and section headings, each with its positive chunk (the one that
states the fact) and `list_size - 1` negatives drawn from the first stage's top N for that
question (the pipeline's hybrid retriever: BM25 and the bi-encoder), never from the positive's
own section; then minimodel's loop on the listwise loss (minimodel/relevance.py), and
`build_reranker`, which saves data/models/reranker.npz and returns its MANIFEST entry.
What it leaves out: scoring (rerank/cross_encoder.py) and its evaluation (eval/harness.py).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from minimodel.mini_gpt import MiniGPTConfig
from minimodel.relevance import RelevanceModel
from minimodel.train import TrainConfig, train
from minirag.chunk import Chunk
from minirag.files.artifacts import kb_sha256, load_tokenizer
from minirag.files.kb import DEFAULT_KB
from minirag.index.cache import IndexConfig, load_or_build_index
from minirag.reader import Reader
from minirag.rerank.cross_encoder import (
    PASSAGE_TOKENS,
    QUERY_TOKENS,
    RERANKER_PATH,
    SEGMENTS,
    CrossEncoder,
)
from minirag.retrieve import Retriever
from minirag.training.eval_filter import eval_filter
from minirag.training.pseudo_queries import fact_questions, kb_facts, split_facts


@dataclass(frozen=True)
class RerankConfig:
    n_train: int = 8000  # training questions about the KB's facts (headings come on top)
    n_eval: int = 240  # held-out questions about held-out facts, for the eval loss
    holdout: float = 0.05  # share of facts whose questions are never trained on
    list_size: int = 8  # rows per list: the positive and list_size - 1 negatives
    first_stage: int = 20  # negatives come from the first stage's top this many
    lists_per_step: int = 12  # lists per optimizer step
    steps: int = 600  # optimizer steps
    n_layer: int = 2  # transformer blocks
    d_model: int = 64  # residual width
    n_head: int = 4  # attention heads
    lr: float = 3e-3  # peak learning rate
    seed: int = 0  # seeds the questions, the negatives, the init and the batches
    init: str = "reader"  # "reader": token table from the shipped reader's; "random"


@dataclass
class Lists:
    queries: list[list[int]]  # each question's ids (CrossEncoder.query_ids)
    rows: np.ndarray  # [n, list_size] chunk indices, the positive first


def section(c: Chunk) -> tuple[str, str]:
    return c.doc_id, c.metadata.get("section", "")


def labelled_questions(chunks: list[Chunk], n: int, facts, seed: int, headings: bool = True
                       ) -> list[tuple[str, int, str]]:
    """(question, index of its positive chunk, its answer or ""): `n` questions about
    `facts`, then, with `headings`, "title section" of every chunk that has a section (the
    eval filter drops a heading too close to an eval question)."""
    row = {c.id: i for i, c in enumerate(chunks)}
    out = [(q, row[f.chunk.id], f.answer)
           for q, f in fact_questions(facts, n, np.random.default_rng([seed, 0]))]
    if not headings:
        return out
    gate = eval_filter()
    for i, c in enumerate(chunks):
        heading = f"{c.metadata.get('title', '')} {c.metadata.get('section', '')}".strip()
        if c.metadata.get("section") and not gate.too_close(heading):
            out.append((heading, i, ""))
    return out


def states_answer(chunk: Chunk, answer: str) -> bool:
    """Does the chunk hold `answer` as whole words? Such a chunk of another section (the
    irregular-verb table and the past-simple page both hold "went") is no negative."""
    return bool(answer) and re.search(rf"\b{re.escape(answer.lower())}\b",
                                      chunk.text.lower()) is not None


def make_lists(labelled: list[tuple[str, int, str]], chunks: list[Chunk],
               retriever: Retriever, ce: CrossEncoder, cfg: RerankConfig,
               rng: np.random.Generator) -> Lists:
    """One list per question: its positive, then negatives drawn without replacement from the
    first stage's top `first_stage` outside the positive's section and not stating the
    answer (random chunks of other sections fill a list the first stage leaves short)."""
    row = {c.id: i for i, c in enumerate(chunks)}
    queries, rows = [], []
    for q, pos, answer in labelled:
        own = section(chunks[pos])
        mined = [row[c.id] for c, _ in retriever.retrieve_scored(q, cfg.first_stage, "hybrid")
                 if section(c) != own and not states_answer(c, answer)]
        need = cfg.list_size - 1
        neg = list(rng.choice(mined, min(need, len(mined)), replace=False)) if mined else []
        while len(neg) < need:
            j = int(rng.integers(len(chunks)))
            if section(chunks[j]) != own and j not in neg:
                neg.append(j)
        queries.append(ce.query_ids(q))
        rows.append([pos, *neg])
    return Lists(queries, np.array(rows, dtype=np.int64))


def batch(lists: Lists, idx: np.ndarray, passages: np.ndarray, ce: CrossEncoder, list_size: int):
    """(ids [B, T], last [B], list_size, segments [B, T]) of the lists `idx`, B = len(idx) *
    list_size: RelevanceModel.loss_and_grads's arguments."""
    rows = lists.rows[idx].reshape(-1)  # [B] chunk indices, list by list
    queries = [lists.queries[i] for i in idx for _ in range(list_size)]
    ids, last, segments = ce.sequences(passages[rows], queries)
    return ids, last, list_size, segments


def train_reranker(cfg: RerankConfig = RerankConfig(), kb: Path = DEFAULT_KB, log=print
                   ) -> tuple[CrossEncoder, dict]:
    """Train a cross-encoder on lists made from `kb` against the pipeline's first stage."""
    t0 = time.perf_counter()
    tokenizer = load_tokenizer()
    index = load_or_build_index(kb, IndexConfig(embedder="biencoder"))
    chunks, retriever = index.store.chunks, Retriever(index.store, index.bm25)
    mcfg = MiniGPTConfig(vocab_size=len(tokenizer), block_size=PASSAGE_TOKENS + QUERY_TOKENS,
                         d_model=cfg.d_model, n_head=cfg.n_head, n_layer=cfg.n_layer,
                         n_segments=SEGMENTS, tokenizer_sha256=tokenizer.fingerprint)
    ce = CrossEncoder(RelevanceModel(mcfg, seed=cfg.seed), tokenizer)
    if cfg.init == "reader":  # words the reader learned to match between question and text
        ce.model.params["wte"][:] = Reader.load(tokenizer=tokenizer).model.params["wte"]
    passages = np.array([ce.passage_ids(c) for c in chunks])  # [N, P]
    train_facts, held_facts = split_facts(kb_facts(chunks), cfg.holdout)
    rng = np.random.default_rng([cfg.seed, 1])
    lists = make_lists(labelled_questions(chunks, cfg.n_train, train_facts, cfg.seed), chunks,
                       retriever, ce, cfg, rng)
    held = make_lists(labelled_questions(chunks, cfg.n_eval, held_facts, cfg.seed + 1, False),
                      chunks, retriever, ce, cfg, rng)
    t_data = time.perf_counter() - t0
    log(f"re-ranker data: {len(lists.rows)} lists of {cfg.list_size}, {len(held.rows)} held out"
        f" ({t_data:.0f} s)")
    L, n = cfg.list_size, cfg.lists_per_step
    next_batch = lambda r: batch(lists, r.integers(0, len(lists.rows), n),  # noqa: E731
                                 passages, ce, L)
    eval_batches = [batch(held, np.arange(i, min(i + n, len(held.rows))), passages, ce, L)
                    for i in range(0, len(held.rows), n)]
    tcfg = TrainConfig(steps=cfg.steps, lr=cfg.lr, min_lr=cfg.lr / 10, warmup=30,
                       eval_interval=max(1, cfg.steps // 6), log_interval=max(1, cfg.steps // 20))
    hist = train(ce.model, next_batch, eval_batches, tcfg, rng, log=log)
    hist.update(data_seconds=t_data, train_seconds=time.perf_counter() - t0 - t_data,
                n_params=int(sum(v.size for v in ce.model.params.values())))
    return ce, hist


def build_reranker(cfg: RerankConfig = RerankConfig(), kb: Path = DEFAULT_KB, log=print) -> dict:
    """`make models`: train the re-ranker, save data/models/reranker.npz, return its MANIFEST
    entry."""
    ce, hist = train_reranker(cfg, kb, log)
    ce.save(RERANKER_PATH)
    return {"file": RERANKER_PATH.name,
            "sha256": hashlib.sha256(RERANKER_PATH.read_bytes()).hexdigest(),
            "kb_sha256": kb_sha256(kb), "config": asdict(cfg), "n_params": hist["n_params"],
            "final_eval_loss": round(hist["eval_loss"][-1], 4),
            "data_seconds": round(hist["data_seconds"], 1),
            "train_seconds": round(hist["train_seconds"], 1),
            "tokens_per_s": round(hist["tokens_per_s"])}
