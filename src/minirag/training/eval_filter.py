"""The one gate every generator of training text passes: nothing too close to an eval question.

What it is: `EvalFilter.too_close(text)`, true when a generated question (or any training
query) is near a dev or test question in one of three ways, each on normalised words
(lowercase, apostrophes dropped, runs of letters and digits):
  - identical: the same word sequence;
  - a shared 5-gram: five consecutive words that also occur, in order, in the eval question;
  - token Jaccard >= 0.8: |A & B| / |A | B| over the two sets of words.
Reader questions, the bi-encoder's pseudo-queries and its sentence and heading queries all go
through `eval_filter()`, which reads both splits once. A generator draws again when its
output is too close, so no training text can be, or nearly be, a question the course is
measured on (tests/test_eval_filter.py samples each generator 20,000 times).
What it leaves out: meaning. A paraphrase in other words passes; that is what a blind test
split written by someone else guards against.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from minirag.files.kb import all_eval_questions

NGRAM = 5  # a shared run of this many words is too close
JACCARD = 0.8  # a word overlap at or above this is too close
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Normalised words. Example: words("What's the PAST of go??") -> ["whats", "the", "past",
    "of", "go"]"""
    return _WORD.findall(text.lower().replace("\u2019", "").replace("'", ""))


class EvalFilter:
    """Built once from the eval questions' texts; `too_close` answers in microseconds.

    Letters: Q eval questions, P postings ((word, question) pairs).
    """

    def __init__(self, questions: Iterable[str]):
        seqs = [words(q) for q in questions]
        self.exact = {" ".join(w) for w in seqs if w}  # normalised questions
        self.grams = {tuple(w[i:i + NGRAM]) for w in seqs for i in range(len(w) - NGRAM + 1)}
        sets = [sorted(set(w)) for w in seqs]
        self.vocab = {t: i for i, t in enumerate(sorted({t for s in sets for t in s}))}
        self.sizes = np.array([len(s) for s in sets], dtype=np.float64)  # [Q] |B|
        # postings: for word id v, the questions holding it are q_of[ptr[v]:ptr[v + 1]]
        pairs = sorted((self.vocab[t], q) for q, s in enumerate(sets) for t in s)
        self.q_of = np.array([q for _, q in pairs], dtype=np.int64)  # [P]
        counts = np.bincount([v for v, _ in pairs], minlength=len(self.vocab))  # [V]
        self.ptr = np.concatenate([[0], np.cumsum(counts)])  # [V + 1]

    def too_close(self, text: str) -> bool:
        w = words(text)
        if not w:
            return False
        if " ".join(w) in self.exact:
            return True
        if any(tuple(w[i:i + NGRAM]) in self.grams for i in range(len(w) - NGRAM + 1)):
            return True
        return self.max_jaccard(set(w)) >= JACCARD

    def max_jaccard(self, a: set[str]) -> float:
        """The highest |A & B| / |A | B| between the word set `a` and any eval question's."""
        ids = [self.vocab[t] for t in a if t in self.vocab]
        if not ids or not len(self.sizes):
            return 0.0
        hits = np.concatenate([self.q_of[self.ptr[v]:self.ptr[v + 1]] for v in ids])  # [h]
        inter = np.bincount(hits, minlength=len(self.sizes))  # [Q] |A & B|
        return float(np.max(inter / (len(a) + self.sizes - inter)))  # [Q] -> max Jaccard

    def keep(self, texts: Iterable[str]) -> list[str]:
        """The texts that are not too close, in order."""
        return [t for t in texts if not self.too_close(t)]


@lru_cache(maxsize=1)
def eval_filter() -> EvalFilter:
    """The filter over every dev and test question (data/eval/), built once per process."""
    return EvalFilter(q["question"] for q in all_eval_questions())
