"""Sharded search on one machine: scatter a query to S shards, gather and merge their top k.

What it is: the vectors split into S shards (each a FlatVectorStore, or any store with
`search_vector` and `search_vectors`); a query asks every shard for its own k best, and the
S * k candidates are merged by score, ties by global insertion order. The merged list equals an
unsharded search exactly, because
  every member of the global top k is in its own shard's top k
(a shard keeps its rows in global order, so its tie-break agrees with the global one), and the
merge then picks the k best of a superset of the answer. Every distributed vector engine
(Qdrant, Milvus, OpenSearch, Elasticsearch) answers a query this way, with the shards on other
machines and the merge on a coordinator; theory/02 section 10.
What it leaves out: the network, replicas, shards that fail or answer late, and ANN shards
(their merge is exact over what each shard found, so recall is the shards' recall).

Letters: S shards, N vectors in all, d dimensions, m queries, k results.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence

import numpy as np

from minirag.chunk import Chunk
from minirag.embed import Embedder
from minirag.store import FlatVectorStore, StoreError
from minirag.topk import check_k

Hits = list[tuple[Chunk, float]]


def merge_top_k(lists: Sequence[Hits], k: int, position: dict[str, int]) -> Hits:
    """Merge per-shard result lists (each best first) into the k best, ties by `position`.

    `position` maps a chunk id to its global insertion index. Each list must already be
    sorted by (-score, position), which is what a shard returns; heapq.merge then walks
    the S lists like the merge step of merge sort and we stop after k.
    Example: merge_top_k([[(a, .9), (b, .5)], [(c, .7)]], 2, pos) -> [(a, .9), (c, .7)]
    """
    merged = heapq.merge(*lists, key=lambda hit: (-hit[1], position[hit[0].id]))
    return list(itertools.islice(merged, k))


class ShardedStore:
    """S stores searched as one: scatter the query, gather S * k candidates, merge to k.

    Example:
        sharded = ShardedStore.split(embedder, chunks, vectors, n_shards=4)
        sharded.search_vector(q, k=5) == FlatVectorStore-with-everything.search_vector(q, k=5)
    """

    def __init__(self, shards: Sequence, position: dict[str, int]):
        self.shards = list(shards)  # each has search_vector, search_vectors, len, d, embedder
        self.position = position  # chunk id -> global insertion index (the tie-break)
        if not self.shards:
            raise StoreError("a sharded store needs at least one shard")
        n = sum(len(s) for s in self.shards)
        if n != len(position):
            raise StoreError(f"the shards hold {n} chunks, `position` knows {len(position)}")
        self.d = int(self.shards[0].d)
        self.embedder = self.shards[0].embedder

    @classmethod
    def split(cls, embedder: Embedder, chunks: list[Chunk], vectors: np.ndarray, n_shards: int,
              assign: Sequence[int] | None = None,
              make_store: Callable[[Embedder], object] = FlatVectorStore) -> ShardedStore:
        """Deal chunks and their vectors [N, d] to `n_shards` new stores, keeping their order.

        Row i goes to shard `assign[i]` (default: i % n_shards, round robin; engines hash the
        id). Shards may be uneven or empty. Within a shard, rows keep their global order.
        """
        if isinstance(n_shards, bool) or not isinstance(n_shards, int) or n_shards < 1:
            raise StoreError(f"n_shards must be an integer >= 1, got {n_shards!r}")
        vectors = np.asarray(vectors)
        if vectors.shape != (len(chunks), int(embedder.d)):
            raise StoreError(f"vectors have shape {vectors.shape}, expected "
                             f"({len(chunks)}, {embedder.d})")
        assign = np.arange(len(chunks)) % n_shards if assign is None else np.asarray(assign)
        if assign.shape != (len(chunks),) or (len(assign) and not
                                              (0 <= assign.min() and assign.max() < n_shards)):
            raise StoreError(f"assign must give each of the {len(chunks)} rows a shard in "
                             f"0..{n_shards - 1}")
        shards = []
        for s in range(n_shards):
            rows = np.flatnonzero(assign == s)  # [N_s] ascending: global order is kept
            store = make_store(embedder)
            store.add_vectors([chunks[i] for i in rows], vectors[rows])
            shards.append(store)
        position = {c.id: i for i, c in enumerate(chunks)}
        if len(position) != len(chunks):
            raise StoreError("duplicate chunk ids: every chunk may be added once")
        return cls(shards, position)

    def __len__(self) -> int:
        return len(self.position)

    def search(self, query_text: str, k: int = 5) -> Hits:
        """The k chunks most similar to the query text, over every shard, best first."""
        if not query_text or not query_text.strip():
            raise StoreError("query is empty")
        return self.search_vector(self.embedder.embed([query_text])[0], k)

    def search_vector(self, q: np.ndarray, k: int = 5) -> Hits:
        """Scatter q [d] to every shard for its k best, gather, merge to the global k best."""
        k = check_k(k)
        per_shard = [shard.search_vector(q, k) for shard in self.shards]  # S lists of <= k
        return merge_top_k(per_shard, k, self.position)

    def search_vectors(self, Q: np.ndarray, k: int = 5) -> list[Hits]:
        """Batched: each shard answers all m queries at once [m, d], then merge per query."""
        k = check_k(k)
        per_shard = [shard.search_vectors(Q, k) for shard in self.shards]  # [S][m] lists
        return [merge_top_k([res[j] for res in per_shard], k, self.position)
                for j in range(len(Q))]
