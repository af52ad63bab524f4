"""Training the reader: examples from the KB, minimodel's loop, and `make models`' builder.

What it is: training data assembly (facts of the KB, held-out verbs scrubbed, BM25 hard
negatives; reader_data.py makes the examples, every question through the shared eval filter),
batches with token types, training with minimodel's loop, and `build_reader`, which saves
data/models/reader.npz and returns its MANIFEST entry. What it leaves out: reading
(minirag/reader.py) and its evaluation (minirag/eval/reading.py).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from minimodel.mini_gpt import MiniGPTConfig
from minimodel.span_reader import SpanReader
from minimodel.train import TrainConfig, train
from minirag.bm25 import BM25Index, tokenize
from minirag.chunk import Chunk, load_kb
from minirag.files.artifacts import kb_sha256, load_tokenizer
from minirag.files.kb import DEFAULT_KB
from minirag.files.special_tokens import PAD
from minirag.reader import READER_PATH, Reader
from minirag.reader_inputs import N_COLUMNS, token_types, windows
from minirag.training.facts import Fact, all_facts, held_out_forms, scrub, table_facts
from minirag.training.prose_facts import prose_facts
from minirag.training.reader_data import Example, training_set


@dataclass(frozen=True)
class ReaderConfig:
    n_train: int = 80_000  # training examples generated from the KB
    n_eval: int = 512  # held-out examples (same generator, other seed) for the eval loss
    steps: int = 6000  # optimizer steps (why 6,000 with the prose share: EXPERIMENTS.md)
    batch_size: int = 64  # examples per step
    n_layer: int = 4  # transformer blocks
    d_model: int = 64  # residual width
    n_head: int = 4  # attention heads
    lr: float = 3e-3  # peak learning rate
    seed: int = 1  # seeds the data, the init and the batches (why 1, not 0: EXPERIMENTS.md)
    max_answer_tokens: int = 8  # longest span the reader may answer with
    n_columns: int = N_COLUMNS  # table-column ids; token types are these x in_question


def to_batch(examples: list[Example], tokenizer, n_columns: int = N_COLUMNS):
    """ids [B, T] right-padded with <|pad|>, spans [B, 2], allowed [B, T] (windows + null),
    types [B, T] (`token_types`)."""
    T = max(len(e.ids) for e in examples)
    pad = tokenizer.encode_special(PAD)[0]
    ids = np.full((len(examples), T), pad, dtype=np.int64)  # [B, T]
    allowed = np.zeros((len(examples), T), dtype=bool)  # [B, T]
    types = np.zeros((len(examples), T), dtype=np.int64)  # [B, T]
    for b, e in enumerate(examples):
        ids[b, :len(e.ids)] = e.ids
        types[b, :len(e.ids)] = token_types(e.ids, tokenizer, n_columns)
        for lo, hi in windows(e.ids, tokenizer):
            allowed[b, lo:hi] = True
        allowed[b, len(e.ids) - 1] = True  # the <|a|> position: "no answer here"
    spans = np.array([[e.start, e.end] for e in examples], dtype=np.int64)  # [B, 2]
    return ids, spans, allowed, types


@dataclass(frozen=True)
class ReaderWorld:
    """What every reader example is drawn from: the KB's chunks with the held-out verbs
    scrubbed out (`pool`), their facts by kind, a BM25 index of the pool (distractors) and
    the words a nonce verb may not be (`real_words`: the KB's, held-out verbs included)."""
    pool: list[Chunk]
    facts: dict[str, list[Fact]]
    bm25: BM25Index
    real_words: frozenset[str]


def reader_world(kb: Path = DEFAULT_KB, tokenizer=None) -> ReaderWorld:
    tokenizer = tokenizer or load_tokenizer()
    chunks = load_kb(kb, tokenizer=tokenizer)
    forms = held_out_forms([f for c in chunks for f in table_facts(c) if f.kind == "verb"])
    pool = [Chunk(c.id, t, c.doc_id, c.offset, c.metadata)
            for c in chunks if (t := scrub(c.text, forms)).strip()]
    bm25 = BM25Index()
    bm25.add(pool)
    real_words = frozenset(w for c in chunks for w in tokenize(c.text)) | forms
    facts = all_facts(pool) | {"prose": [f for c in pool for f in prose_facts(c)]}
    return ReaderWorld(pool, facts, bm25, real_words)


def mixed_examples(world: ReaderWorld, tokenizer, n: int, seed) -> list[Example]:
    """`n` examples of the shipped reader's training mix (reader_data.MIX), drawn with `seed`."""
    return training_set(world.facts, world.pool, world.bm25, tokenizer, n,
                        np.random.default_rng(seed), world.real_words)


def training_data(cfg: ReaderConfig, kb: Path = DEFAULT_KB, tokenizer=None, log=print):
    """(train examples, eval examples) from the KB with the held-out verbs scrubbed out."""
    tokenizer = tokenizer or load_tokenizer()
    world = reader_world(kb, tokenizer)
    log(f"reader data: {len(world.pool)} chunks, facts " +
        ", ".join(f"{k} {len(v)}" for k, v in world.facts.items()))
    return (mixed_examples(world, tokenizer, cfg.n_train, [cfg.seed, 0]),
            mixed_examples(world, tokenizer, cfg.n_eval, [cfg.seed, 1]))


def train_reader(cfg: ReaderConfig = ReaderConfig(), kb: Path = DEFAULT_KB,
                 out_dir: Path | None = None, log=print) -> tuple[Reader, dict]:
    tokenizer = load_tokenizer()
    t0 = time.perf_counter()
    train_ex, eval_ex = training_data(cfg, kb, tokenizer, log)
    t_data = time.perf_counter() - t0
    mcfg = MiniGPTConfig(vocab_size=len(tokenizer), block_size=64, d_model=cfg.d_model,
                         n_head=cfg.n_head, n_layer=cfg.n_layer, n_segments=2 * cfg.n_columns,
                         tokenizer_sha256=tokenizer.fingerprint)
    model = SpanReader(mcfg, seed=cfg.seed)
    rng = np.random.default_rng([cfg.seed, 2])
    next_batch = lambda r: to_batch(  # noqa: E731
        [train_ex[i] for i in r.integers(0, len(train_ex), cfg.batch_size)], tokenizer,
        cfg.n_columns)
    eval_batches = [to_batch(eval_ex[i:i + cfg.batch_size], tokenizer, cfg.n_columns)
                    for i in range(0, len(eval_ex), cfg.batch_size)]
    tcfg = TrainConfig(steps=cfg.steps, lr=cfg.lr, min_lr=cfg.lr / 10, warmup=100,
                       eval_interval=max(1, cfg.steps // 10), log_interval=max(1, cfg.steps // 30))
    hist = train(model, next_batch, eval_batches, tcfg, rng, out_dir=out_dir, log=log)
    hist.update(data_seconds=t_data, train_seconds=time.perf_counter() - t0 - t_data,
                n_params=int(sum(v.size for v in model.params.values())))
    return Reader(model, tokenizer, cfg.max_answer_tokens), hist


def build_reader(cfg: ReaderConfig = ReaderConfig(), kb: Path = DEFAULT_KB, log=print) -> dict:
    """`make models`: train the reader, save data/models/reader.npz, return its MANIFEST entry."""
    reader, hist = train_reader(cfg, kb, log=log)
    reader.model.save(READER_PATH)
    digest = hashlib.sha256(READER_PATH.read_bytes()).hexdigest()
    return {"file": READER_PATH.name, "sha256": digest,
            "kb_sha256": kb_sha256(kb), "config": asdict(cfg), "n_params": hist["n_params"],
            "final_eval_loss": round(hist["eval_loss"][-1], 4),
            "data_seconds": round(hist["data_seconds"], 1),
            "train_seconds": round(hist["train_seconds"], 1),
            "tokens_per_s": round(hist["tokens_per_s"])}
