"""The MiniBiEncoder's training pairs, made from the knowledge base itself.

What it is: (pseudo-query, passage) pairs from the KB text only: the inverse cloze task (Lee
et al., ACL 2019: a sentence is the query, its chunk without that sentence the passage),
section heading -> chunk, and template questions about the KB's facts -> the chunk that states
them (pseudo_queries.py); a held-out share of each, chosen by hash, for early stopping; and
BM25-mined hard negatives from other sections. What it leaves out: queries written by a
language model. encoder_train.py trains on them; theory/01 measures each kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from minirag.bm25 import BM25Index, tokenize
from minirag.chunk import Chunk, search_text
from minirag.embed import stable_hash
from minirag.training.eval_filter import eval_filter
from minirag.training.pseudo_queries import fact_queries, kb_facts, split_facts

HELD_FACT_QUERIES = 300  # held-out questions about held-out facts, for early stopping


@dataclass(frozen=True)
class Pair:
    query: str  # the pseudo-query (a sentence, a heading, a question about a fact)
    cut: str  # its chunk's search text without the query sentence
    full: str  # its chunk's search text, as the index holds it
    chunk: int  # index of the chunk


_SENT = re.compile(r"(?<=[.!?])\s+")  # a sentence ends at . ! or ? followed by a space


def sentences(text: str, min_words: int = 4) -> list[str]:
    """Sentences and lines of a chunk with at least `min_words` words (table rows included).
    Example: sentences("Go on. I went there today.\\n| go | went | gone | going |") ->
        ["I went there today.", "| go | went | gone | going |"]"""
    parts = (s.strip() for line in text.splitlines() for s in _SENT.split(line))
    return [s for s in parts if len(tokenize(s)) >= min_words]


def make_pairs(chunks: list[Chunk], holdout: float = 0.05) -> tuple[list[Pair], list[Pair]]:
    """(training pairs, held-out pairs), from the chunks' own text and headings only.

    ICT: each sentence -> its chunk without it (or with it: see keep_sentence). Heading:
    "title section" -> each chunk of the section, header line left out. A `holdout` fraction
    of the sentences, chosen by a hash of their text (so the same ones whatever the config),
    is never a training query; they stay in the passages, as an eval question's words do.
    A query too close to an eval question (eval_filter) is dropped.
    """
    gate = eval_filter()
    train, held = [], []
    for i, c in enumerate(chunks):
        full = search_text(c)
        for s in (s for s in sentences(c.text) if not gate.too_close(s)):
            cut = Chunk(c.id, c.text.replace(s, " ", 1), c.doc_id, c.offset, c.metadata)
            pair = Pair(s, search_text(cut), full, i)
            (held if stable_hash(s) % 10_000 < holdout * 10_000 else train).append(pair)
        heading = f"{c.metadata.get('title', '')} {c.metadata.get('section', '')}"
        if c.metadata.get("section") and not gate.too_close(heading):
            train.append(Pair(heading, c.text, full, i))
    return train, held


def training_pairs(chunks: list[Chunk], cfg) -> tuple[list[Pair], list[Pair], list[Pair]]:
    """(training pairs, held-out sentence pairs, held-out fact questions): make_pairs plus
    questions about the KB's facts (pseudo_queries.py), `fact_share` of the training pairs.
    `cfg` is the training loop's config (encoder_train.TrainConfig): fact_share, holdout, seed.
    A fact question's passage is its chunk as indexed (nothing to cut out)."""
    if not 0 <= cfg.fact_share < 1:
        raise ValueError(f"fact_share must be in [0, 1), got {cfg.fact_share}")
    pairs, held = make_pairs(chunks, cfg.holdout)
    train_facts, held_facts = split_facts(kb_facts(chunks), cfg.holdout)
    row = {c.id: i for i, c in enumerate(chunks)}  # chunk id -> index
    full = [search_text(c) for c in chunks]

    def as_pairs(queries):
        return [Pair(q, full[row[c.id]], full[row[c.id]], row[c.id]) for q, c in queries]

    n = round(len(pairs) * cfg.fact_share / (1 - cfg.fact_share))
    # subtle: two generators, so the held-out questions are the same whatever fact_share is
    return (pairs + as_pairs(fact_queries(train_facts, n, np.random.default_rng([cfg.seed, 2]))),
            held, as_pairs(fact_queries(held_facts, HELD_FACT_QUERIES,
                                        np.random.default_rng([cfg.seed, 3]))))


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
