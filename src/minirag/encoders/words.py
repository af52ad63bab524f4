"""How the bi-encoder reads text: normalised words, and one hashed bucket per long word.

What it is: `normalise` (lowercase, words only, one leading space, so that a word has one
spelling in BPE ids wherever it stands) and `word_bucket` (a stable hash of a multi-token word's
ids into a fixed number of buckets: the word gets a vector of its own besides its pieces'). What
it leaves out: the BPE itself (minitokenizer) and the vectors (biencoder.py).
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
