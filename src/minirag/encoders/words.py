"""How the bi-encoder reads text: normalised words, and one hashed bucket per long word.

What it is: `normalise` (lowercase, words only, one leading space, so that a word has one
spelling in BPE ids wherever it stands), `word_bucket` (a stable hash of a multi-token word's
ids into a fixed number of buckets) and `with_word_ids` (each such word's bucket id placed after
its pieces: the word gets a vector of its own besides its pieces'). What it leaves out: the BPE
itself (minitokenizer), truncation and the vectors (biencoder.py).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

_NON_WORD = re.compile(r"(?:[^\w']|_)+")  # what normalise() turns into a single space


def normalise(text: str) -> str:
    """Lowercase, keep words only, one leading space: every word gets its " word" token.

    BPE gives "swim" at the start of a text and " swim" after a space two different ids; with
    punctuation gone and a space before every word, one word has one spelling in token ids.
    Example: normalise("Swim (SWAM), swum! ___") -> " swim swam swum"
    """
    return " " + " ".join(_NON_WORD.sub(" ", text.lower().replace("\u2019", "'")).split())


def word_bucket(token_ids: list[int], buckets: int) -> int:
    """A stable hash of a word's token ids into [0, buckets) (blake2b, never Python's hash)."""
    key = np.asarray(token_ids, dtype="<i4").tobytes()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") % buckets


def with_word_ids(ids: list[int], starts_word: list[bool], vocab_size: int, buckets: int
                  ) -> list[int]:
    """BPE ids with each word of 2+ tokens followed by its word id, vocab_size + its bucket.

    A 2048-token BPE spells most rare words in pieces (" swimming" -> " sw", "im", "ming"),
    and pieces are shared by many words; the word id gives the whole word a vector of its
    own, as fastText's hashed n-grams do (Joulin et al., 2017). `starts_word[t]` says whether
    token t begins a word (its bytes start with a space: normalise() puts one before each).
    Example (V = vocab_size, K = buckets): ids of " go went" -> the same ids; a 3-piece word
    [a, b, c] -> [a, b, c, V + word_bucket([a, b, c], K)].
    """
    out, word = [], []  # out: ids with word ids; word: the tokens of the current word
    for t in [*ids, None]:  # None: the end, which closes the last word
        if t is None or starts_word[t]:
            if len(word) > 1:  # the word just closed had 2+ pieces: add its word id
                out.append(vocab_size + word_bucket(word, buckets))
            word = []
        if t is not None:
            out.append(t)
            word.append(t)
    return out
