"""Sharded search (minirag.scale.shard) against one unsharded FlatVectorStore: the merged top k
must be identical, ids, scores and tie order, for any number of shards S, any split (uneven,
empty shards), any k (including k larger than every shard), single and batched queries. Checked
by hypothesis on tie-heavy vectors whose scores are exact in float32, and on Gaussian vectors;
plus merge_top_k on a hand-made example and the errors for bad arguments."""

import numpy as np
import pytest
from fakes import make_chunks
from hypothesis import given, settings
from hypothesis import strategies as st

from minirag.chunk import Chunk
from minirag.embed import VectorsOnly
from minirag.scale.shard import ShardedStore, merge_top_k
from minirag.store import FlatVectorStore, StoreError

D = 6


def numbered_chunks(n: int) -> list[Chunk]:
    return make_chunks([f"t{i}" for i in range(n)])


def tie_heavy(rng, n: int) -> np.ndarray:
    """Rows with four entries +-1 and two 0: unit rows are +-0.5, so every dot product is a
    multiple of 0.25, exact in any summation order, and many scores tie."""
    X = rng.choice([-1.0, 1.0], size=(n, D)).astype(np.float32)  # [n, D]
    for row in X:
        row[rng.choice(D, size=2, replace=False)] = 0
    return X


def unsharded(chunks, X) -> FlatVectorStore:
    store = FlatVectorStore(VectorsOnly(D))
    store.add_vectors(chunks, X)
    return store


def as_pairs(hits):
    return [(c.id, s) for c, s in hits]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), n_shards=st.integers(1, 8), k=st.integers(1, 50),
       seed=st.integers(0, 2**32 - 1), random_split=st.booleans())
def test_sharded_equals_unsharded_with_ties(n, n_shards, k, seed, random_split):
    rng = np.random.default_rng(seed)
    X, Q = tie_heavy(rng, n), tie_heavy(rng, 5)
    chunks = numbered_chunks(n)
    assign = rng.integers(0, n_shards, n) if random_split else None  # uneven, often empty
    sharded = ShardedStore.split(VectorsOnly(D), chunks, X, n_shards, assign=assign)
    flat = unsharded(chunks, X)
    assert len(sharded) == n and sum(len(s) for s in sharded.shards) == n
    for q in Q:
        assert as_pairs(sharded.search_vector(q, k)) == as_pairs(flat.search_vector(q, k))
    assert ([as_pairs(h) for h in sharded.search_vectors(Q, k)] ==
            [as_pairs(h) for h in flat.search_vectors(Q, k)])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 300), n_shards=st.integers(1, 6), k=st.integers(1, 20),
       seed=st.integers(0, 2**32 - 1))
def test_sharded_equals_unsharded_on_gaussian_vectors(n, n_shards, k, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, D)).astype(np.float32)
    q = rng.standard_normal(D).astype(np.float32)
    chunks = numbered_chunks(n)
    got = ShardedStore.split(VectorsOnly(D), chunks, X, n_shards).search_vector(q, k)
    want = unsharded(chunks, X).search_vector(q, k)
    assert [c.id for c, _ in got] == [c.id for c, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def test_merge_top_k_by_hand():
    a, b, c, d = numbered_chunks(4)
    position = {x.id: i for i, x in enumerate((a, b, c, d))}
    shard0 = [(a, 0.9), (c, 0.5)]  # each list best first, as a shard returns it
    shard1 = [(b, 0.5), (d, 0.1)]
    assert merge_top_k([shard0, shard1], 3, position) == [(a, 0.9), (b, 0.5), (c, 0.5)]
    assert merge_top_k([shard0, [], shard1], 10, position) == [
        (a, 0.9), (b, 0.5), (c, 0.5), (d, 0.1)]
    assert merge_top_k([[], []], 3, position) == []


def test_round_robin_split_and_k_beyond_every_shard():
    X = np.eye(D, dtype=np.float32)[[0, 1, 2, 0, 1]]  # rows 0 and 3 are the same vector
    sharded = ShardedStore.split(VectorsOnly(D), numbered_chunks(5), X, 3)
    assert [[c.offset for c in s.chunks] for s in sharded.shards] == [[0, 3], [1, 4], [2]]
    got = sharded.search_vector(np.eye(D, dtype=np.float32)[0], k=5)
    assert [(c.offset, s) for c, s in got] == [(0, 1.0), (3, 1.0), (1, 0.0), (2, 0.0), (4, 0.0)]


def test_bad_arguments():
    X = np.ones((3, D), dtype=np.float32)
    with pytest.raises(StoreError, match="n_shards"):
        ShardedStore.split(VectorsOnly(D), numbered_chunks(3), X, 0)
    with pytest.raises(StoreError, match="assign"):
        ShardedStore.split(VectorsOnly(D), numbered_chunks(3), X, 2, assign=[0, 1, 2])
    with pytest.raises(StoreError, match="shape"):
        ShardedStore.split(VectorsOnly(D), numbered_chunks(2), X, 2)
    sharded = ShardedStore.split(VectorsOnly(D), numbered_chunks(3), X, 2)
    with pytest.raises(StoreError, match="k must be"):
        sharded.search_vector(X[0], 0)
    with pytest.raises(StoreError, match="at least one shard"):
        ShardedStore([], {})


def test_shards_may_be_faiss_stores():
    pytest.importorskip("faiss")
    from minirag.scale.faiss_store import FaissVectorStore

    rng = np.random.default_rng(5)
    X, Q = rng.standard_normal((200, D)).astype(np.float32), rng.standard_normal((10, D))
    chunks = numbered_chunks(200)
    sharded = ShardedStore.split(VectorsOnly(D), chunks, X, 4,
                                 make_store=lambda e: FaissVectorStore(e, "flat"))
    flat = unsharded(chunks, X)
    for got, want in zip(sharded.search_vectors(Q, 7), flat.search_vectors(Q, 7), strict=True):
        assert [c.id for c, _ in got] == [c.id for c, _ in want]
