"""Text -> unit vectors: the `Embedder` protocol and the HashingEmbedder control.

What it is: signed feature hashing (Weinberger et al., 2009) of words and their character
trigrams into d buckets, sublinear TF (log1p), optional IDF fitted on the corpus, L2 norm. No
training, no vocabulary: the control a trained encoder must beat (theory/01).
What it leaves out: stemming, stopwords, anything learned.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import Protocol

import numpy as np

WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")  # lowercase words; "don't" stays one word


class Embedder(Protocol):
    """Anything that turns texts into rows of a float32 matrix, each row unit-norm or zero."""

    name: str  # short name used in config strings and manifests ("hashing", "biencoder")
    d: int  # output dimension

    def embed(self, texts: list[str]) -> np.ndarray:  # [n] -> [n, d] float32
        ...


class VectorsOnly:
    """The embedder of a store whose vectors come from elsewhere (random unit vectors in a
    benchmark, another model's output): it knows their width and embeds no text, so the store
    is filled with `add_vectors` and asked with `search_vector`.
    Example: FlatVectorStore(VectorsOnly(64)).add_vectors(chunks, X)  # X [n, 64]
    """

    name = "vectors-only"

    def __init__(self, d: int):
        self.d = d

    def embed(self, texts: list[str]) -> np.ndarray:
        raise ValueError(f"this store holds precomputed {self.d}-d vectors and embeds no "
                         "text: add them with add_vectors and search with search_vector")


def stable_hash(feature: str) -> int:
    """A 64-bit hash that is the same in every process (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")


class HashingEmbedder:
    """Signed feature hashing of words (weight 1) and character trigrams (weight `char_weight`).

    Each feature f goes to bucket h(f) mod d with sign +1 or -1 from another bit of h(f), so
    colliding features cancel on average instead of piling up. Row = sum over features of
    sign * log1p(tf) * idf * weight, then L2-normalised; a text with no word gives a zero row.

    Example: HashingEmbedder(d=8).embed(["go went gone"]).shape == (1, 8)
    """

    name = "hashing"

    def __init__(self, d: int = 1024, char_weight: float = 0.5, use_idf: bool = True):
        if d < 1:
            raise ValueError(f"d ({d}) must be >= 1")
        self.d = d  # output dimension (number of hash buckets)
        self.char_weight = char_weight  # weight of a trigram relative to a whole word
        self.use_idf = use_idf  # multiply by idf(feature) once `fit` has seen a corpus
        self.idf: dict[str, float] = {}  # feature -> ln((1 + N) / (1 + df)) + 1
        self.idf_unseen = 1.0  # idf of a feature the corpus never had (a rare one)
        self._buckets: dict[str, tuple[int, float]] = {}  # feature -> (bucket, sign): the cache

    @property
    def config(self) -> dict:
        return {"d": self.d, "char_weight": self.char_weight, "use_idf": self.use_idf,
                "fitted_on": len(self.idf)}

    def features(self, text: str) -> Counter:
        """Feature counts of one text: words, and "#tri" trigrams of "<word>" (with edges)."""
        feats: Counter = Counter()
        for w in WORD.findall(text.lower()):
            feats[w] += 1
            padded = f"<{w}>"
            for i in range(len(padded) - 2):
                feats["#" + padded[i:i + 3]] += 1
        return feats

    def fit(self, texts: list[str]) -> HashingEmbedder:
        """Learn idf(f) = ln((1 + N) / (1 + df(f))) + 1 from a corpus (sklearn's smooth idf)."""
        df: Counter = Counter()
        for t in texts:
            df.update(self.features(t).keys())
        n = len(texts)
        self.idf = {f: math.log((1 + n) / (1 + c)) + 1 for f, c in df.items()}
        self.idf_unseen = math.log(1 + n) + 1
        return self

    def _bucket(self, feature: str) -> tuple[int, float]:
        hit = self._buckets.get(feature)
        if hit is None:
            h = stable_hash(feature)
            hit = self._buckets[feature] = (h % self.d, 1.0 if (h >> 63) & 1 else -1.0)
        return hit

    def embed(self, texts: list[str]) -> np.ndarray:  # [n] -> [n, d] float32
        if isinstance(texts, str):
            raise TypeError("embed takes a list of texts, not one str")
        rows, cols, vals = [], [], []  # one entry per (text, feature): built in Python...
        for r, text in enumerate(texts):
            for f, tf in self.features(text).items():
                bucket, sign = self._bucket(f)
                idf = self.idf.get(f, self.idf_unseen) if (self.use_idf and self.idf) else 1.0
                weight = self.char_weight if f[0] == "#" else 1.0
                rows.append(r)
                cols.append(bucket)
                vals.append(sign * math.log1p(tf) * idf * weight)
        X = np.zeros((len(texts), self.d), dtype=np.float64)  # ...then scattered at once
        np.add.at(X, (np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)),
                  np.asarray(vals, dtype=np.float64))
        norms = np.linalg.norm(X, axis=1, keepdims=True)  # [n, 1]
        X = np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)  # zero rows stay zero
        return X.astype(np.float32)
