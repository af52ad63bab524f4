"""Dense, lexical and hybrid retrieval: Reciprocal Rank Fusion of a vector store and BM25.

What it is: `rrf_fuse` (Cormack, Clarke & Buettcher, SIGIR 2009) and a `Retriever` that asks
the FlatVectorStore and the BM25Index and fuses their rankings; with `weights`, each list's
share is scaled by how much it is trusted (weighted RRF: a good dense list is not drowned by a
confidently wrong BM25 list); with `rows`, a third list joins the fusion: the table rows a
question looks up (tables.RowIndex). What it leaves out: fusing raw scores (shown for contrast in
theory/03 and lab 02); the re-ranker itself lives in rerank/.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from minirag.bm25 import BM25Index, tokenize
from minirag.chunk import Chunk
from minirag.store import FlatVectorStore
from minirag.tables import RowIndex, cue_words
from minirag.topk import check_k

Mode = Literal["dense", "bm25", "hybrid"]
MODES = ("dense", "bm25", "hybrid")
MAX_QUERY_CHARS = 10_000  # a question, or a whole chunk pasted as one; not a book


K_RRF = 60  # RRF's constant in the paper: plain RRF, the seed's method and every baseline


def rrf_fuse(rankings: list[list[str]], k_rrf: int = K_RRF, depth: int = 100,
             weights: list[float] | None = None) -> list[tuple[str, float]]:
    """Fuse ranked id lists: RRF(c) = sum over lists r of w_r / (k_rrf + rank_r(c)).

    Ranks are 1-based; each list is cut at `depth`; an id absent from a list gets nothing from
    it; every w_r is 1 unless `weights` says otherwise (one weight >= 0 per list). Ties break by
    id, so the result does not depend on the order of the input lists.

    Example: rrf_fuse([["a", "b"], ["b", "c"]]) ->
        [("b", 1/62 + 1/61), ("a", 1/61), ("c", 1/62)]
    """
    if k_rrf < 0 or depth < 1:
        raise ValueError(f"k_rrf ({k_rrf}) must be >= 0 and depth ({depth}) >= 1")
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings) or min(weights, default=0) < 0:
        raise ValueError(f"weights {weights} must be one number >= 0 per ranking")
    shares: dict[str, list[float]] = {}  # id -> its w / (k_rrf + rank) from each list
    for ranking, w in zip(rankings, weights):
        for rank, cid in enumerate(ranking[:depth], start=1):
            shares.setdefault(cid, []).append(w / (k_rrf + rank))
    # subtle: fsum is exactly rounded, so the sum (and every tie) is the same in any list order
    scores = {cid: math.fsum(s) for cid, s in shares.items()}
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


CUE_WEIGHT = 3  # how many times a fill-in's cue counts: in a BM25 query and in a prompt window


def check_query(query: str) -> None:
    """Reject what no retriever should silently accept: a query that is not text, an empty
    one or an oversized one."""
    if not isinstance(query, str):
        raise ValueError(f"the query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"the query is {len(query):,} characters; the limit is "
                         f"{MAX_QUERY_CHARS:,}")


def lexical_query(query: str) -> str:
    """The query BM25 is asked: a fill-in's cue in brackets counts CUE_WEIGHT times (BM25
    adds a term's share once per occurrence in the query), as it does when a prompt window is
    chosen: "the wolf ___ (howl) at the moon" is about "howl", not "wolf" or "moon".
    Example: lexical_query("a wolf ___ (howl)") -> "a wolf ___ (howl) howl howl"
    """
    return " ".join([query, *cue_words(query) * (CUE_WEIGHT - 1)])


# The fusion of a hybrid that looks rows up, for a query with no cue in brackets: the rows list's
# weight and RRF's constant, chosen on dev and the scratch sets beside it (EXPERIMENTS.md). A
# fill-in's cue looks up its word's rows whatever the columns while its sentence may ask for a
# tense a rule section teaches, so a fill-in fuses the three lists as plain RRF
ROWS_WEIGHT, ROWS_K_RRF = 1.5, 30

# the first stage's say after re-ranking (`rerank_scores`), chosen on dev by MRR@10 (EXPERIMENTS.md)
PRIOR_ON_DEV = 3.0


def rerank_scores(s: np.ndarray, prior: float) -> np.ndarray:
    """The final score of n candidates in first-stage order from the re-ranker's scores s [n]:

        final_i = (s_i - mean s) / std s  -  prior * ln(i)        i = 1 .. n, the first rank

    The re-ranker's scores are put in units of their spread over these candidates, and the
    first stage keeps a say that shrinks with rank: prior = 0 is the re-ranker alone, a large
    prior the first stage's order. Example: rerank_scores([1, 3], 0) -> [-1, 1]."""
    s = np.asarray(s, dtype=np.float64)  # [n]
    z = (s - s.mean()) / (s.std() or 1.0)  # [n]
    return z - prior * np.log(np.arange(1, len(s) + 1))  # [n]


class Retriever:
    """One query in, the k best chunks out, by dense search, BM25, or their RRF fusion; with a
    `reranker`, that search is the first stage: its top `first_stage` are re-scored by the
    re-ranker (rerank/cross_encoder.py: anything with `score(query, chunks) -> [n]`), combined
    with their first-stage rank by `rerank_scores` (weight `prior`), then cut to k. A
    re-ranker can only reorder what the first stage found. With `rows`, the hybrid fuses a
    third list, the table rows the query looks up (`RowIndex`): with weight ROWS_WEIGHT and,
    unless `k_rrf` is given, RRF's constant ROWS_K_RRF, except for a fill-in, whose cue looks
    rows up whatever its sentence asks (weight 1, K_RRF: `fusion`). With a
    `thesaurus` (encoders/thesaurus.py: anything with `expand(words) -> words`), the hybrid's
    dense and BM25 lists read the query with the KB words that stand in for the words the KB
    lacks; the row lookup reads the query as it is."""

    def __init__(self, store: FlatVectorStore, bm25: BM25Index | None = None,
                 k_rrf: int | None = None, depth: int = 100,
                 weights: tuple[float, float] = (1.0, 1.0), reranker=None,
                 first_stage: int = 20, prior: float = PRIOR_ON_DEV,
                 rows: bool = False, thesaurus=None):
        if first_stage < 1:
            raise ValueError(f"first_stage ({first_stage}) must be >= 1")
        self.store, self.bm25 = store, bm25
        self.k_rrf = k_rrf  # RRF's constant; None: chosen per query (`fusion`)
        self.depth = depth  # how deep each list is read before fusing
        self.weights = weights  # (dense, bm25) shares in the fusion: (1, 1) is plain RRF
        self.reranker = reranker
        self.first_stage = first_stage  # candidates the re-ranker sees
        self.prior = prior  # the first stage's say after re-ranking (rerank_scores)
        self.rows = rows  # fuse the table rows the query looks up (RowIndex)
        self.thesaurus = thesaurus  # expands the hybrid's query (None: as it is)
        # (store size it was built at, the RowIndex): built now, not in the first query's time
        self._row_index = (len(store), RowIndex(store.chunks)) if rows else None

    def retrieve(self, query: str, k: int = 3, hybrid: bool = False) -> list[Chunk]:
        return [c for c, _ in self.retrieve_scored(query, k, "hybrid" if hybrid else "dense")]

    def retrieve_scored(self, query: str, k: int = 3, mode: Mode = "hybrid"
                        ) -> list[tuple[Chunk, float]]:
        """(chunk, score) best first; the score is cosine, BM25 or RRF according to `mode`,
        or `rerank_scores`' when there is a re-ranker."""
        k = check_k(k)
        n = max(k, self.first_stage) if self.reranker else k  # the first stage's candidates
        first = self.first_stage_scored(query, n, mode)
        if self.reranker is None or not first:
            return first
        s = rerank_scores(self.reranker.score(query, [c for c, _ in first]), self.prior)  # [n]
        order = sorted(range(len(first)), key=lambda i: (-s[i], i))  # ties: first-stage order
        return [(first[i][0], float(s[i])) for i in order[:k]]

    def first_stage_scored(self, query: str, k: int, mode: Mode = "hybrid"
                           ) -> list[tuple[Chunk, float]]:
        """The k best (chunk, score) by `mode` alone, never re-ranked."""
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        k = check_k(k)
        check_query(query)
        if mode != "dense" and self.bm25 is None:
            raise ValueError(f"mode {mode!r} needs a BM25 index")
        if mode == "dense":
            return self.store.search(query, k)
        if mode == "bm25":
            return self.bm25.search(lexical_query(query), k)
        by_id, lists = self._lists(query)
        k_rrf, weights = self.fusion(query)
        fused = rrf_fuse(lists, k_rrf, self.depth, weights)
        return [(by_id[cid], s) for cid, s in fused[:k]]

    def fusion(self, query: str) -> tuple[int, list[float]]:
        """RRF's constant and the weights of the lists the hybrid fuses for `query`: plain RRF
        (K_RRF, each list's weight 1 or `weights`) unless the rows are looked up for a query
        with no cue in brackets (ROWS_K_RRF, the rows' weight ROWS_WEIGHT); a given `k_rrf`
        always. Example, with rows: fusion("past of swim") -> (30, [1.0, 1.0, 1.5])"""
        plain = not self.rows or bool(cue_words(query))
        k = self.k_rrf if self.k_rrf is not None else K_RRF if plain else ROWS_K_RRF
        rows = [] if not self.rows else [1.0 if plain else ROWS_WEIGHT]
        return k, [*self.weights, *rows]

    def row_index(self) -> RowIndex:
        """The store's RowIndex, rebuilt when chunks were added since it was built."""
        if self._row_index is None or self._row_index[0] != len(self.store):
            self._row_index = (len(self.store), RowIndex(self.store.chunks))
        return self._row_index[1]

    def _lists(self, query: str) -> tuple[dict[str, Chunk], list[list[str]]]:
        """Chunk by id, and the id lists the hybrid fuses: dense, BM25 [, looked-up rows]."""
        depth = min(self.depth, len(self.store)) or 1
        text = self.expanded(query)
        found = [[c for c, _ in self.store.search(text, depth)],
                 [c for c, _ in self.bm25.search(lexical_query(text), depth)]]
        if self.rows:
            found.append(self.row_index().lookup(query, self.bm25.idf_of))
        by_id = {c.id: c for cs in found for c in cs}
        return by_id, [[c.id for c in cs] for cs in found]

    def expanded(self, query: str) -> str:
        """The text the hybrid's dense and BM25 lists read: the query, followed by the
        thesaurus's KB words for the words the KB lacks (the query as it is without one).
        Example, with Thesaurus({"tale": ["story"]}): expanded("a tale") -> "a tale story"
        """
        extra = [] if self.thesaurus is None else self.thesaurus.expand(tokenize(query))
        return " ".join([query, *extra]) if extra else query

    def explain(self, query: str, chunk_id: str, mode: Mode = "hybrid") -> dict:
        """Each fused list's 1-based rank of `chunk_id` (None if outside `depth`) and RRF share
        (dense, bm25, and rows when the retriever looks rows up); with a re-ranker also its
        first-stage rank (by `mode`), the re-ranker's own score, the final score (`rerank_scores`)
        and rank (all None outside the first stage's top `first_stage`)."""
        _, lists = self._lists(query)
        k_rrf, weights = self.fusion(query)
        out = {}
        for name, ranking, w in zip(("dense", "bm25", "rows"), lists, weights):
            rank = ranking.index(chunk_id) + 1 if chunk_id in ranking[:self.depth] else None
            out[name] = {"rank": rank, "contribution": w / (k_rrf + rank) if rank else 0.0}
        out["rrf"] = math.fsum(v["contribution"] for v in out.values())
        if self.reranker is None:
            return out
        first = [c for c, _ in self.first_stage_scored(query, self.first_stage, mode)]
        ids = [c.id for c in first]
        if chunk_id not in ids:
            out["rerank"] = dict.fromkeys(("first_stage_rank", "reranker_score", "score", "rank"))
            return out
        raw = self.reranker.score(query, first)  # [n]
        final = rerank_scores(raw, self.prior)  # [n]
        i = ids.index(chunk_id)
        rank = 1 + int(sum((-final[j], j) < (-final[i], i) for j in range(len(ids))))
        out["rerank"] = {"first_stage_rank": i + 1, "reranker_score": float(raw[i]),
                         "score": float(final[i]), "rank": rank}
        return out
