"""Okapi BM25 over the word tokens of chunks, with its postings in NumPy arrays.

What it is: a lexical index. A chunk scores high when it contains the query's rare words,
often, and is not long. Postings are CSR-like arrays sorted by term, and each posting's whole
contribution to a score (its "impact") is precomputed, so a query only gathers the postings of
its terms and adds their impacts to their chunks' scores.
What it leaves out: stemming, stopwords, phrase and field queries, deletes; the files a saved
index is made of, and their checks (files/postings.py).
Follows DESIGN §3 `minirag.bm25.BM25Index` (Robertson and Zaragoza's Okapi BM25, Lucene's IDF
and defaults); the formulas and their small-corpus pitfalls are in theory/03.

Letters: N chunks, V distinct terms, P postings ((term, chunk) pairs with tf >= 1).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

import numpy as np

from minirag.chunk import Chunk, read_chunks, write_chunks
from minirag.files.persist import write_dir_atomic
from minirag.files.postings import ARRAYS, CHUNKS, read_postings, write_postings
from minirag.topk import check_k, top_k

IDFS = ("lucene", "okapi")
_WORD = re.compile(r"\w+(?:'\w+)*")  # a run of \w (letters, digits, _), "don't" kept whole


class BM25Error(ValueError):
    """A bad argument or a bad index on disk; the message names the value or the file."""


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens, for chunks and queries alike.

    A token is a run of `\\w` (Unicode letters, digits, underscore), and an apostrophe between
    two runs joins them, so "won't" is not "won" (the past of "win") plus "t"; a curly
    apostrophe counts as a straight one. No stemming, no stopwords: a learner can read exactly
    why a chunk matched, and "went" is not "go".
    Example: tokenize("Don’t say 'goed', say WENT.") -> ["don't", "say", "goed", "say", "went"]
    """
    return _WORD.findall(text.lower().replace("\u2019", "'"))


class BM25Index:
    """BM25 over chunks: score(q, c) = sum over query tokens t of idf(t) * tfc(t, c).

    Example:
        index = BM25Index(); index.add(chunks)
        index.search("past tense of go", k=3) -> [(Chunk(...), 4.71), (Chunk(...), 2.02), ...]
    Only chunks that contain at least one query term are returned. A repeated query word counts
    once per repetition (as in rank_bm25 and bm25s); words the index has never seen count 0.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75, idf: str = "lucene",
                 epsilon: float = 0.25):
        if not k1 >= 0 or not 0 <= b <= 1:
            raise BM25Error(f"need k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}")
        if idf not in IDFS:
            raise BM25Error(f"idf must be one of {IDFS}, got {idf!r}")
        self.k1, self.b, self.idf_kind, self.epsilon = float(k1), float(b), idf, float(epsilon)
        self.vocab: dict[str, int] = {}  # term -> term id, in first-seen order
        self.chunks: list[Chunk] = []  # row i of every [N] array
        self._row: dict[str, int] = {}  # chunk id -> row
        self.doc_len = np.zeros(0, np.int64)  # [N] tokens per chunk
        # Postings, CSR by term: the chunks holding term t are doc[indptr[t]:indptr[t + 1]],
        # ascending, and tf[...] says how often t occurs in each.
        self.indptr = np.zeros(1, np.int64)  # [V + 1]
        self.doc = np.zeros(0, np.int32)  # [P] chunk row of each posting
        self.tf = np.zeros(0, np.int32)  # [P] term frequency of each posting
        self._derive()

    def __len__(self) -> int:
        return len(self.chunks)

    # ------------------------------------------------------------ building

    def add(self, chunks: list[Chunk]) -> None:
        """Index more chunks (may be called many times; IDF and lengths are then recomputed)."""
        self.add_tokens(chunks, [tokenize(c.text) for c in chunks])

    def add_tokens(self, chunks: list[Chunk], token_lists: Sequence[list[str]]) -> None:
        """`add` for chunks whose texts are already tokenised (a cache, a benchmark)."""
        if len(chunks) != len(token_lists):
            raise BM25Error(f"{len(chunks)} chunks but {len(token_lists)} token lists")
        ids = [c.id for c in chunks]
        if len(set(ids)) < len(ids) or any(i in self._row for i in ids):
            raise BM25Error("duplicate chunk ids: every chunk may be added once")
        if not chunks:
            return
        n0, n1 = len(self), len(self) + len(chunks)
        # 1. Map every token of the batch to a term id, minting ids for new terms in first-seen
        #    order. (chain, fromkeys and map run in C: no Python bytecode per token.)
        flat = list(chain.from_iterable(token_lists))  # [T] every token of the batch
        vocab = self.vocab
        for t in dict.fromkeys(flat):  # distinct tokens, first-seen order
            if t not in vocab:
                vocab[t] = len(vocab)
        term = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))  # [T]
        lens = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(chunks))  # [n]
        row = np.repeat(np.arange(n0, n1), lens)  # [T] the chunk each token sits in
        # 2. Count each (term, chunk) pair: encode it as one integer key = term * n1 + row;
        #    np.unique sorts the keys (by term, then chunk) and counts repeats = tf.
        key_new, tf_new = np.unique(term * n1 + row, return_counts=True)  # [P_new]
        # 3. Merge with the old postings, re-keyed for the new n1, and sort all the keys again:
        #    by term, then by chunk. That is the CSR layout.
        old_term = np.repeat(np.arange(len(self.indptr) - 1), np.diff(self.indptr))  # [P_old]
        keys = np.concatenate([old_term * n1 + self.doc, key_new])  # [P]
        tf = np.concatenate([self.tf, tf_new.astype(np.int32)])  # [P]
        if n0:  # (a first add is sorted already)
            order = np.argsort(keys)
            keys, tf = keys[order], tf[order]
        self.tf = tf
        self.doc = (keys % n1).astype(np.int32)  # [P]
        df = np.bincount(keys // n1, minlength=len(vocab))  # [V] chunks containing each term
        self.indptr = np.concatenate([[0], np.cumsum(df)])  # [V + 1]
        self.doc_len = np.concatenate([self.doc_len, lens])  # [N]
        self.chunks.extend(chunks)
        self._row.update((c, n0 + i) for i, c in enumerate(ids))
        self._derive()

    def _derive(self) -> None:
        """Recompute IDF and every posting's impact from N, df, tf and the chunk lengths."""
        N = len(self.doc_len)
        df = np.diff(self.indptr)  # [V]
        if self.idf_kind == "lucene":
            # idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))  -- Lucene; never negative; theory/03
            idf = np.log1p((N - df + 0.5) / (df + 0.5))  # [V]
        else:
            # idf(t) = ln((N - df + 0.5) / (df + 0.5)), negatives -> epsilon * mean idf -- rank_bm25
            idf = np.log(N - df + 0.5) - np.log(df + 0.5)  # [V]
            if len(idf):
                idf[idf < 0] = self.epsilon * idf.mean()  # subtle: idf == 0 stays 0, as there
        self.idf = idf
        # tfc(t, c) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(c) / avgdl))  -- Okapi BM25
        avgdl = self.doc_len.mean() if N and self.doc_len.any() else 1.0  # no tokens: no postings
        norm = self.k1 * (1 - self.b + self.b * self.doc_len / avgdl)  # [N]
        term = np.repeat(np.arange(len(df)), df)  # [P] the term of each posting
        tf = self.tf.astype(np.float64)  # [P]
        self.impact = idf[term] * tf * (self.k1 + 1) / (tf + norm[self.doc])  # [P]

    # ------------------------------------------------------------ scoring

    def query_tokens(self, query: str) -> list[str]:
        """The query's tokens; a query without a single word is an error, not an empty result."""
        if not isinstance(query, str):
            raise BM25Error(f"the query must be a str, got {type(query).__name__}")
        tokens = tokenize(query)
        if not tokens:
            raise BM25Error(f"query has no word tokens: {query[:80]!r}")
        return tokens

    def idf_of(self, term: str) -> float:
        """idf of one (lowercase) term; a term no chunk contains gets the idf of df = 0."""
        t = self.vocab.get(term)
        if t is not None:
            return float(self.idf[t])
        ratio = (len(self) + 0.5) / 0.5  # (N - df + 0.5) / (df + 0.5) at df = 0
        return float(np.log1p(ratio) if self.idf_kind == "lucene" else np.log(ratio))

    def term_ids(self, tokens: list[str]) -> np.ndarray:
        """Term ids of the tokens the index knows, repeats kept, unknown ones dropped. [<= q]"""
        return np.array([self.vocab[t] for t in tokens if t in self.vocab], dtype=np.int64)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for the query, [N] float64 (0 where no term matches)."""
        return self.scores_ids(self.term_ids(self.query_tokens(query)))

    def scores_ids(self, term_ids: np.ndarray) -> np.ndarray:
        """`scores` for a pre-tokenised query given as term ids (repeats count). [N] float64"""
        s = np.zeros(len(self))  # [N]
        for t in term_ids:  # a loop over the query's words, never over chunks
            # the chunks holding t and their impacts: add each impact to its chunk's score
            a, z = self.indptr[t], self.indptr[t + 1]
            np.add.at(s, self.doc[a:z], self.impact[a:z])  # [df(t)] rows, [df(t)] impacts
        return s

    def search_ids(self, term_ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top k chunk rows [<= k] and their scores for a query given as term ids."""
        k = check_k(k)
        term_ids = np.asarray(term_ids, dtype=np.int64)  # [q]
        s = self.scores_ids(term_ids)  # [N]
        # Only chunks holding a query word are results. When every idf > 0 (always, under
        # Lucene's IDF) they are exactly the chunks with s > 0.
        if len(term_ids) == 0:
            return term_ids, s[term_ids]
        if self.idf[term_ids].min() > 0:
            n_postings = int((self.indptr[term_ids + 1] - self.indptr[term_ids]).sum())
            if 4 * n_postings < len(s):
                # Mostly zeros: a top-k over them costs as much as a sort (a partition over
                # many equal values), so rank the few non-zero scores only.
                cand = np.flatnonzero(s)  # [c] ascending rows
                rows = cand[top_k(s[cand], k)]
            else:
                rows = top_k(s, k)  # mostly non-zero: rank them all...
                rows = rows[s[rows] > 0]  # ...and drop any chunk that holds no query word
        else:
            # okapi IDF can be 0 or negative: read the chunks holding a query word off the postings
            cand = np.unique(np.concatenate([self.doc[self.indptr[t]:self.indptr[t + 1]]
                                             for t in term_ids]))  # [c] ascending rows
            rows = cand[top_k(s[cand], k)]
        return rows, s[rows]  # ties: lower row (earlier insertion) first

    def search(self, query: str, k: int = 5) -> list[tuple[Chunk, float]]:
        """The k best chunks holding a query word, best first, ties in insertion order."""
        rows, s = self.search_ids(self.term_ids(self.query_tokens(query)), k)
        return [(self.chunks[r], float(x)) for r, x in zip(rows, s, strict=True)]

    def explain(self, query: str, chunk_id: str) -> dict[str, float]:
        """Each query word's share of one chunk's score; the shares sum to its `scores` entry.

        Example (chunks "go went", "go go", "gone"; lucene IDF, k1 = 1.2, b = 0.75):
            explain("went gone", id_of_chunk_0) -> {"went": 0.906649, "gone": 0.0}
        """
        if chunk_id not in self._row:
            raise BM25Error(f"no chunk with id {chunk_id!r} in the index")
        row = self._row[chunk_id]
        tokens = self.query_tokens(query)
        # a word's share is its score alone (its impact in the chunk, or 0) times its count
        return {term: float(self.scores_ids(self.term_ids([term]))[row] * tokens.count(term))
                for term in dict.fromkeys(tokens)}  # in query order

    # ------------------------------------------------------------ saving

    def save(self, path) -> None:
        """Write the index to directory `path` atomically (the format: files/postings.py)."""
        params = {"k1": self.k1, "b": self.b, "idf": self.idf_kind, "epsilon": self.epsilon}

        def write(tmp: Path) -> None:
            write_chunks(tmp / CHUNKS, self.chunks)
            write_postings(tmp, params, {n: getattr(self, n) for n in ARRAYS}, list(self.vocab),
                           len(self))

        write_dir_atomic(Path(path), write)

    @classmethod
    def load(cls, path) -> BM25Index:
        """Read an index saved by `save`; every mismatch raises BM25Error naming the file."""
        index, a, vocab, count = read_postings(Path(path), cls, BM25Error)
        index.vocab = {t: i for i, t in enumerate(vocab)}
        index.indptr, index.doc, index.tf, index.doc_len = (a[n] for n in ARRAYS)
        index.chunks = read_chunks(Path(path) / CHUNKS, count)
        index._row = {c.id: i for i, c in enumerate(index.chunks)}
        index._derive()  # IDF and impacts are never stored: they follow from the counts
        return index
