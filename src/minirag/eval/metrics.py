"""Retrieval and reading metrics, as pure functions of ranked lists and gold labels.

Relevance is judged at the (doc_id, section) level: a retrieved chunk counts for the section
it sits in, so gold labels survive re-chunking (theory/04). Definitions follow BEIR
(Thakur et al., 2021), which takes them from TREC's trec_eval, with binary relevance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

Key = tuple[str, str]  # (doc_id, section)


def _dedup(retrieved: Sequence[Key]) -> list[Key]:
    """Keys in first-seen order: two chunks of one section count once, at the better rank."""
    return list(dict.fromkeys(retrieved))


def _check(k: int) -> None:
    if k < 1:
        raise ValueError(f"k ({k}) must be >= 1")


def recall_at_k(retrieved: Sequence[Key], gold: set[Key], k: int) -> float:
    """|gold found in the top k sections| / |gold|.

    Example: recall_at_k([("a", "x"), ("b", "y")], {("b", "y")}, 1) -> 0.0, with k=2 -> 1.0
    """
    _check(k)
    if not gold:
        raise ValueError("recall needs at least one gold section")
    return len(set(_dedup(retrieved)[:k]) & gold) / len(gold)


def hit_at_k(retrieved: Sequence[Key], gold: set[Key], k: int) -> float:
    """1.0 if any gold section is in the top k, else 0.0 (success@k)."""
    _check(k)
    return float(bool(set(_dedup(retrieved)[:k]) & gold))


def mrr(retrieved: Sequence[Key], gold: set[Key], k: int = 10) -> float:
    """1 / rank of the first gold section within the top k (1-based), 0 if none: MRR@k."""
    _check(k)
    for rank, key in enumerate(_dedup(retrieved)[:k], start=1):
        if key in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(retrieved: Sequence[Key], gold: set[Key], k: int = 10) -> float:
    """DCG@k / IDCG@k with binary gains: DCG = sum over hits of 1 / log2(rank + 1)."""
    _check(k)
    if not gold:
        raise ValueError("nDCG needs at least one gold section")
    dcg = sum(1.0 / math.log2(r + 1)
              for r, key in enumerate(_dedup(retrieved)[:k], start=1) if key in gold)
    idcg = sum(1.0 / math.log2(r + 1) for r in range(1, min(k, len(gold)) + 1))
    return dcg / idcg


def normalise_answer(text: str) -> str:
    """Lowercase and keep only word characters, one space apart: "Went!" -> "went"."""
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def exact_match(prediction: str, gold: str) -> float:
    """1.0 if the normalised gold answer occurs as whole words in the normalised prediction.

    A gold answer that lists alternatives ("learnt / learned") matches any one of them.
    Example: exact_match("learnt [#1]", "learnt / learned") -> 1.0
    """
    p = f" {normalise_answer(prediction)} "
    golds = [f" {normalise_answer(g)} " for g in gold.split(" / ")]
    return float(any(g.strip() != "" and g in p for g in golds))


def mean_of(rows: Sequence[dict], key: str) -> float:
    """The mean of `key` over per-question rows, rounded once, to 6 places: every rate a
    report prints goes through here, so a printed 3-place figure is the value's own rounding.
    Example: mean_of([{"em": 1.0}, {"em": 0.0}, {"em": 0.0}], "em") -> 0.333333"""
    return round(math.fsum(r[key] for r in rows) / len(rows), 6)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between order statistics."""
    if not values:
        raise ValueError("percentile of no values")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
