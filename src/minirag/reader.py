"""The reader: a MiniGPT with a span head that answers from the prompt or abstains.

What it is: training data assembly (facts of the KB, held-out verbs scrubbed, BM25 hard
negatives; reader_data.py makes the examples), training with minimodel's loop, and `Reader`,
which turns a Prompt into an answer: the best span of one chunk's window with that chunk's
[#n] marker, or "I don't know" when the null position outscores every span.
What it leaves out: free-form generation (a pointer cannot invent; see theory/07).
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
from minirag.artifacts import MODELS_DIR, kb_sha256, load_tokenizer
from minirag.bm25 import BM25Index, tokenize
from minirag.chunk import Chunk, load_kb
from minirag.facts import all_facts, held_out_forms, scrub, table_facts
from minirag.kb import DEFAULT_EVAL, DEFAULT_KB, load_questions
from minirag.prompt import IDK_TEXT, Prompt
from minirag.questions import normalise_question
from minirag.reader_data import Example, training_set
from minirag.reader_inputs import N_COLUMNS, token_types, windows
from minirag.special_tokens import PAD

READER_PATH = MODELS_DIR / "reader.npz"
SEPARATORS = frozenset("|,;→\n")  # an answer never crosses one (see Reader._cells)


@dataclass(frozen=True)
class ReaderConfig:
    n_train: int = 80_000  # training examples generated from the KB
    n_eval: int = 512  # held-out examples (same generator, other seed) for the eval loss
    steps: int = 3500  # optimizer steps (5,000 scored no better: theory/07)
    batch_size: int = 64  # examples per step
    n_layer: int = 4  # transformer blocks
    d_model: int = 64  # residual width
    n_head: int = 4  # attention heads
    lr: float = 3e-3  # peak learning rate
    seed: int = 0  # seeds the data, the init and the batches
    max_answer_tokens: int = 8  # longest span the reader may answer with
    n_columns: int = N_COLUMNS  # table-column ids; token types are these x in_question


@dataclass(frozen=True)
class Reading:
    text: str  # "went [#1]" or the abstention sentence
    answer: str | None  # the span's text, None when abstaining
    marker: str | None  # "[#1]" .. "[#4]" of the chunk the span is in
    abstained: bool
    span_score: float  # best start + end score of a span
    null_score: float  # start + end score of the null position (<|a|>)


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


class Reader:
    """Example: Reader.load().read(build_prompt("past of go", chunks)).text -> "went [#1]"."""

    def __init__(self, model: SpanReader, tokenizer, max_answer_tokens: int = 8):
        self.model, self.tokenizer, self.max_len = model, tokenizer, max_answer_tokens

    def scores(self, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Start and end scores [T], [T] of a compact prompt's tokens, with its token types."""
        n_cols = self.model.config.n_segments // 2  # token_types: columns x in_question
        types = np.array([token_types(ids, self.tokenizer, n_cols)]) if n_cols else None  # [1, T]
        start, end, _ = self.model.scores(np.array([ids]), types)  # [1, T], [1, T]
        return start[0], end[0]

    def read(self, prompt: Prompt) -> Reading:
        ids = prompt.token_ids
        start, end = self.scores(ids)  # [T], [T]
        segs = windows(ids, self.tokenizer)
        cells = [c for lo, hi in segs for c in self._cells(ids, lo, hi)]
        s, e, span, null = self.model.best_span(start, end, cells, len(ids) - 1, self.max_len)
        if s >= 0:
            s, e = self._whole_words(ids, s, e, next(w for w in cells if w[0] <= s < w[1]))
        answer = self.tokenizer.decode(ids[s:e + 1]).strip() if s >= 0 else ""
        if s < 0 or null >= span or not answer:
            return Reading(IDK_TEXT, None, None, True, span, null)
        marker = f"[#{next(i for i, (lo, hi) in enumerate(segs) if lo <= s < hi) + 1}]"
        return Reading(f"{answer} {marker}", answer, marker, False, span, null)

    def _cells(self, ids: list[int], lo: int, hi: int) -> list[tuple[int, int]]:
        """A window cut at its separators ("|", ",", ";", "→", a line break): an answer is one
        table cell or one item of a list, never two ("chase | choosen" is two cells)."""
        cuts = [i for i in range(lo, hi) if SEPARATORS & set(self._pieces(ids[i]))]
        bounds = [lo - 1, *cuts, hi]
        return [(a + 1, b) for a, b in zip(bounds, bounds[1:]) if b > a + 1]

    def _pieces(self, token: int) -> list[str]:
        return list(self.tokenizer.vocab[token].decode("utf-8", errors="ignore"))

    def _whole_words(self, ids: list[int], s: int, e: int, window: tuple[int, int]):
        """Widen a span to whole words: "stud" + "ies" is one word, and a reader that
        points at half of it still means all of it. Never leaves the chunk's window."""
        piece = lambda i: self.tokenizer.vocab[ids[i]]  # noqa: E731  the token's bytes
        glued = lambda i: piece(i)[:1].isalpha() and piece(i - 1)[-1:].isalpha()  # noqa: E731
        lo, hi = window
        while s > lo and glued(s):
            s -= 1
        while e + 1 < hi and glued(e + 1):
            e += 1
        return s, e

    @classmethod
    def load(cls, path: Path = READER_PATH, tokenizer=None) -> Reader:
        tokenizer = tokenizer or load_tokenizer()
        return cls(SpanReader.load(path, tokenizer.fingerprint), tokenizer)


def training_data(cfg: ReaderConfig, kb: Path = DEFAULT_KB, tokenizer=None, log=print):
    """(train examples, eval examples) from the KB with the held-out verbs scrubbed out."""
    tokenizer = tokenizer or load_tokenizer()
    chunks = load_kb(kb, tokenizer=tokenizer)
    forms = held_out_forms([f for c in chunks for f in table_facts(c) if f.kind == "verb"])
    pool = [Chunk(c.id, t, c.doc_id, c.offset, c.metadata)
            for c in chunks if (t := scrub(c.text, forms)).strip()]
    facts = all_facts(pool)
    bm25 = BM25Index()
    bm25.add(pool)
    banned = {normalise_question(q["question"]) for name in ("retrieval", "unanswerable")
              for q in load_questions(DEFAULT_EVAL / f"{name}.jsonl")}
    log(f"reader data: {len(pool)} chunks, facts " +
        ", ".join(f"{k} {len(v)}" for k, v in facts.items()))
    # a nonce verb must not be a word of the KB (held-out verbs included)
    real_words = frozenset(w for c in chunks for w in tokenize(c.text)) | forms
    make = lambda n, seed: training_set(facts, pool, bm25, tokenizer, n,  # noqa: E731
                                        np.random.default_rng(seed), banned, real_words)
    return make(cfg.n_train, [cfg.seed, 0]), make(cfg.n_eval, [cfg.seed, 1])


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
