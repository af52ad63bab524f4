"""The reader: a MiniGPT with a span head that answers from the prompt or abstains.

What it is: `Reader`, which turns a Prompt into an answer: the best span of one chunk's
window with that chunk's [#n] marker, or "I don't know" when the null position outscores every
span. What it leaves out: free-form generation (a pointer cannot invent; see theory/07) and
training (minirag/training/reader_train.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minimodel.span_reader import SpanReader
from minirag.files.artifacts import MODELS_DIR, load_tokenizer
from minirag.prompt import IDK_TEXT, Prompt
from minirag.reader_inputs import token_types, windows

READER_PATH = MODELS_DIR / "reader.npz"
SEPARATORS = frozenset("|,;→\n")  # an answer never crosses one (see Reader._cells)


@dataclass(frozen=True)
class Reading:
    text: str  # "went [#1]" or the abstention sentence
    answer: str | None  # the span's text, None when abstaining
    marker: str | None  # "[#1]" .. "[#4]" of the chunk the span is in
    abstained: bool
    span_score: float  # best start + end score of a span
    null_score: float  # start + end score of the null position (<|a|>)


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
