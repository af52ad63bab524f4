"""FlatVectorStore in isolation, with a fake embedder: a 5x3 example against a plain Python
loop, faiss IndexFlatIP on random data (single and batched), growth over many add() calls,
ties, the defined answers for an empty store, k > N and a zero query, the errors for bad k,
NaN/inf and wrong dimensions, and the save/load round trip with every tamper it must catch.
"""

import json
import math
from unittest.mock import patch

import numpy as np
import pytest
from fakes import TableEmbedder, make_chunks
from hypothesis import given, settings
from hypothesis import strategies as st

from minirag import topk
from minirag.chunk import Chunk, chunk_id
from minirag.embed import VectorsOnly
from minirag.files.persist import sha256_file
from minirag.store import FlatVectorStore, StoreError
from minirag.topk import top_k, top_k_plain, top_k_rows

# Five 3-d vectors and two queries, small enough to check by hand.
TABLE = {
    "a": [1, 0, 0], "b": [0, 2, 0], "c": [1, 1, 0], "d": [0, 0, -3], "e": [3, 3, 0.5],
    "q1": [2, 1, 0], "q2": [0, 0, 1], "zero": [0, 0, 0],
}


def five() -> tuple[FlatVectorStore, list[Chunk]]:
    store = FlatVectorStore(TableEmbedder(TABLE, 3))
    chunks = make_chunks(list("abcde"))
    store.add(chunks[:2])
    store.add(chunks[2:])
    return store, chunks


def naive_search(vectors, q, k):
    """Cosine of q with every vector by a plain loop, sorted by (-score, insertion order)."""
    def cos(u, v):
        nu, nv = math.sqrt(sum(x * x for x in u)), math.sqrt(sum(x * x for x in v))
        return sum(x * y for x, y in zip(u, v, strict=True)) / (nu * nv)
    scored = [(cos(v, q), i) for i, v in enumerate(vectors)]
    return [(i, s) for s, i in sorted(scored, key=lambda t: (-t[0], t[1]))[:k]]


@pytest.mark.parametrize("query", ["q1", "q2"])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_five_by_three_matches_a_python_loop(query, k):
    store, chunks = five()
    got = store.search(query, k)
    want = naive_search([TABLE[t] for t in "abcde"], TABLE[query], k)
    assert [c.text for c, _ in got] == ["abcde"[i] for i, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def test_five_by_three_by_hand():
    store, _ = five()
    # q1 = (2, 1, 0): c -> 3/sqrt(2 * 5) = 0.949, e -> 9/sqrt(18.25 * 5) = 0.942,
    # a -> 2/sqrt5 = 0.894, b -> 2/sqrt(4 * 5) = 0.447, d -> 0
    got = store.search("q1", 4)
    assert [c.text for c, _ in got] == ["c", "e", "a", "b"]
    np.testing.assert_allclose([s for _, s in got], [3 / math.sqrt(10), 9 / math.sqrt(18.25 * 5),
                                                     2 / math.sqrt(5), 1 / math.sqrt(5)], atol=1e-6)


def test_vectors_are_unit_rows_and_read_only():
    store, chunks = five()
    V = store.vectors
    assert V.shape == (5, 3) and V.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1, atol=1e-6)
    np.testing.assert_allclose(V[1], [0, 1, 0])
    with pytest.raises(ValueError):
        V[0, 0] = 5
    assert store.chunks == chunks and len(store) == 5


@pytest.mark.parametrize("seed, n", [(0, 300), (1, 20_000)])  # 20k uses the sampled threshold
def test_equals_faiss_index_flat_ip(seed, n):
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(seed)
    d = 16
    X = rng.standard_normal((n, d)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Q = rng.standard_normal((20, d)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    store = FlatVectorStore(TableEmbedder({}, d))
    chunks = make_chunks([str(i) for i in range(n)])
    for a in range(0, n, 7_000):  # several add() calls: the buffer grows
        store.add_vectors(chunks[a:a + 7_000], X[a:a + 7_000])
    ref = faiss.IndexFlatIP(d)
    ref.add(X)
    D, I = ref.search(Q, 10)  # noqa: E741  [20, 10]
    batched = store.search_vectors(Q, 10)
    for qi in range(len(Q)):
        single = store.search_vector(Q[qi], 10)  # mat-vec (sgemv), batched: sgemm
        for got in (single, batched[qi]):
            assert [c.offset for c, _ in got] == I[qi].tolist()
            np.testing.assert_allclose([s for _, s in got], D[qi], atol=1e-6)


def test_growth_is_by_doubling_and_keeps_every_row():
    store = FlatVectorStore(TableEmbedder({}, 2))
    capacities, rows = [], []
    for i in range(100):
        v = np.array([[np.cos(i), np.sin(i)]], np.float32)
        store.add_vectors(make_chunks([str(i)], doc=f"{i}.md"), v)
        capacities.append(store._cols.shape[1])
        rows.append(v[0])
    assert sorted(set(capacities)) == [16, 32, 64, 128]
    np.testing.assert_allclose(store.vectors, np.array(rows), atol=1e-6)


def test_ties_break_by_insertion_order():
    n = 40_000  # large enough for the sampled-threshold path, and every score is a tie
    store = FlatVectorStore(TableEmbedder({}, 2))
    X = np.tile(np.array([[1, 0]], np.float32), (n, 1))
    X[[5, 30_000]] = [0, 1]  # two rows that lose
    store.add_vectors(make_chunks([str(i) for i in range(n)]), X)
    assert [c.offset for c, _ in store.search_vector(np.array([1, 0]), 7)] == [0, 1, 2, 3, 4, 6, 7]
    assert [c.offset for c, _ in store.search_vector(np.array([0, 1]), 3)] == [5, 30_000, 0]


def test_top_k_plain_worked_example():
    assert top_k_plain(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist() == [1, 3, 2]
    assert top_k_plain(np.array([0.2, 0.2, 0.2]), 2).tolist() == [0, 1]  # ties: lower index
    assert top_k_plain(np.array([0.3]), 5).tolist() == [0]  # k > N: all of them


@given(st.lists(st.integers(-3, 3), min_size=1, max_size=600), st.integers(1, 70))
def test_top_k_is_a_stable_sort_prefix(values, k):
    """Exact, ties by index, for the plain and the fast version (N >= 64 k uses the sampled
    threshold)."""
    s = np.array(values, dtype=np.float32)
    want = sorted(range(len(s)), key=lambda i: (-s[i], i))[:k]
    assert top_k_plain(s, k).tolist() == want
    assert top_k(s, k).tolist() == want


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_top_k_rows_is_the_plain_top_k_of_every_query(m, k, seed):
    """The batch path (sampled thresholds, blocks of rows) and the one-query path return
    exactly top_k_plain(V @ q, k): small integer vectors make scores exact and ties common."""
    rng = np.random.default_rng(seed)
    V = rng.integers(-2, 3, size=(3000, 4)).astype(np.float32)  # [N, d]
    Q = rng.integers(-2, 3, size=(m, 4)).astype(np.float32)  # [m, d]
    for q, (top, scores) in zip(Q, top_k_rows(Q, V, k), strict=True):
        want = top_k_plain(V @ q, k)
        assert top.tolist() == want.tolist() and scores.tolist() == (V @ q)[want].tolist()


@settings(max_examples=80, deadline=None)
@given(st.integers(64, 3000), st.integers(1, 9), st.integers(0, 4), st.integers(0, 2**32 - 1),
       st.sampled_from([0, 16, topk.SORT_MAX]))
def test_top_k_equals_top_k_plain(n, k, levels, seed, sort_max):
    """The fast top_k (a sampled threshold, then its candidates sorted, or partitioned when
    there are more than SORT_MAX) returns exactly top_k_plain's indices, on continuous scores
    (levels = 0) and on scores of 2..5 distinct values, where ties at the threshold abound."""
    rng = np.random.default_rng(seed)
    s = (rng.integers(0, 1 + levels, n) if levels else rng.standard_normal(n)).astype(np.float32)
    with patch.object(topk, "SORT_MAX", sort_max):
        assert topk.top_k(s, k).tolist() == top_k_plain(s, k).tolist()


def test_top_k_sampled_threshold_on_a_big_vector():
    rng = np.random.default_rng(3)
    s = rng.integers(0, 50, size=100_000).astype(np.float32)  # many ties at the top
    for k in (1, 5, 100):
        want = np.lexsort((np.arange(len(s)), -s))[:k]
        assert top_k(s, k).tolist() == want.tolist()


# ---------------------------------------------------------------- defined edge cases


def test_a_store_of_precomputed_vectors_searches_by_vector_only():
    store = FlatVectorStore(VectorsOnly(3))
    store.add_vectors([Chunk(chunk_id("v.md", i), "", "v.md", i) for i in range(2)],
                      np.array([[1, 0, 0], [0, 2, 0]], dtype=np.float32))
    assert [c.offset for c, _ in store.search_vector(np.array([0, 1, 0], np.float32), 1)] == [1]
    with pytest.raises(ValueError, match="search_vector"):
        store.search("past of go", 1)


def test_empty_store_returns_nothing():
    store = FlatVectorStore(TableEmbedder(TABLE, 3))
    assert store.search("q1") == [] and len(store) == 0
    assert store.search_vectors(np.ones((2, 3)), 3) == [[], []]
    assert store.vectors.shape == (0, 3)


def test_k_larger_than_n_returns_every_chunk():
    store, _ = five()
    assert len(store.search("q1", k=50)) == 5


def test_zero_query_vector_matches_nothing():
    """A zero vector has no direction, so no cosine: the defined answer is no results."""
    store, _ = five()
    assert store.search("zero", 3) == []
    got = store.search_vectors(np.array([[0, 0, 0], [0, 0, 1]]), 1)
    assert got[0] == [] and got[1][0][0].text == "e"
    got = store.search_vectors(np.array([[0, 0, 1], [0, 0, 0], [2, 1, 0]]), 1)  # [] in between
    assert [[c.text for c, _ in hits] for hits in got] == [["e"], [], ["c"]]


def test_zero_rows_are_kept_and_score_zero():
    store = FlatVectorStore(TableEmbedder(TABLE, 3))
    store.add(make_chunks(["zero", "a"]))
    np.testing.assert_array_equal(store.vectors[0], [0, 0, 0])
    assert [(c.text, s) for c, s in store.search("q2", 2)] == [("zero", 0.0), ("a", 0.0)]


@pytest.mark.parametrize("k", [0, -2, 2.5, True, None])
def test_bad_k_is_an_error(k):
    store, _ = five()
    with pytest.raises(StoreError, match="k must be"):
        store.search("q1", k)


@pytest.mark.parametrize("q", [[1, 0], [1, 0, 0, 0], [[1, 0, 0]], [np.nan, 0, 0], [np.inf, 1, 1]])
def test_bad_query_vectors_are_errors(q):
    store, _ = five()
    with pytest.raises(StoreError, match="shape|NaN"):
        store.search_vector(np.array(q, dtype=np.float32), 3)


def test_bad_vectors_at_add_are_errors():
    store, _ = five()
    with pytest.raises(StoreError, match="shape"):
        store.add_vectors(make_chunks(["x"], "x.md"), np.ones((1, 4)))
    with pytest.raises(StoreError, match="NaN"):
        store.add_vectors(make_chunks(["x"], "x.md"), np.array([[1, np.nan, 0]]))
    with pytest.raises(StoreError, match="duplicate"):
        store.add(make_chunks(["a"]))
    with pytest.raises(StoreError, match="empty"):
        store.search("  ")
    assert len(store) == 5


# ---------------------------------------------------------------- save / load


def test_save_load_round_trip(tmp_path):
    store, _ = five()
    store.save(tmp_path / "s")
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [
        "chunks.jsonl", "manifest.json", "vectors.npy"]
    back = FlatVectorStore.load(tmp_path / "s", store.embedder)
    np.testing.assert_array_equal(back.vectors, store.vectors)
    assert back.chunks == store.chunks
    assert [c.metadata for c in back.chunks] == [c.metadata for c in store.chunks]
    assert back.search("q1", 5) == store.search("q1", 5)
    back.add(make_chunks(["a"], "more.md"))  # a loaded store can still grow
    assert len(back) == 6
    store.save(tmp_path / "s")  # overwriting a saved store is fine
    assert not [p for p in tmp_path.iterdir() if p.name != "s"]  # no temp dirs left behind
    FlatVectorStore(store.embedder).save(tmp_path / "empty")
    assert len(FlatVectorStore.load(tmp_path / "empty", store.embedder)) == 0


def test_vectors_are_kept_column_major_and_saved_row_by_row(tmp_path):
    """The layout that makes `V @ q` fast (theory/02 §7) is the store's, not the file's: a
    saved vectors.npy is the plain C-ordered [N, d] array, whatever the buffer's capacity."""
    store, _ = five()  # 5 rows in a buffer of 16 columns
    V = store.vectors
    assert V.shape == (5, 3) and V.strides[0] == V.itemsize  # column-major view, no copy
    store.save(tmp_path / "s")
    saved = np.load(tmp_path / "s" / "vectors.npy")
    assert saved.flags.c_contiguous and not np.isfortran(saved)
    np.testing.assert_array_equal(saved, V)
    back = FlatVectorStore.load(tmp_path / "s", store.embedder)
    assert back.vectors.strides[0] == V.itemsize


@pytest.mark.parametrize("field, value", [
    ("format", "pickle"), ("version", 0), ("d", 4), ("count", 4), ("count", "5"),
    ("embedder", {"name": "other", "config": {"entries": 8}}),
    ("embedder", {"name": "table", "config": {"entries": 9}}),
    ("vectors_sha256", "0" * 64), ("chunks_sha256", None),
])
def test_tampered_manifest_fields_are_caught(tmp_path, field, value):
    store, _ = five()
    store.save(tmp_path / "s")
    mpath = tmp_path / "s" / "manifest.json"
    m = json.loads(mpath.read_text())
    m[field] = value
    mpath.write_text(json.dumps(m))
    with pytest.raises(StoreError, match=r"manifest\.json|vectors\.npy"):
        FlatVectorStore.load(tmp_path / "s", store.embedder)


def test_another_embedder_is_refused(tmp_path):
    store, _ = five()
    store.save(tmp_path / "s")
    with pytest.raises(StoreError, match="manifest.json: d is 3, expected 4"):
        FlatVectorStore.load(tmp_path / "s", TableEmbedder(TABLE, 4))


@pytest.mark.parametrize("name", ["vectors.npy", "chunks.jsonl", "manifest.json"])
def test_truncated_or_missing_files_are_caught(tmp_path, name):
    store, _ = five()
    store.save(tmp_path / "s")
    f = tmp_path / "s" / name
    f.write_bytes(f.read_bytes()[:-5])
    with pytest.raises(StoreError, match=name.replace(".", r"\.")):
        FlatVectorStore.load(tmp_path / "s", store.embedder)
    f.unlink()
    with pytest.raises(StoreError, match=name.replace(".", r"\.")):
        FlatVectorStore.load(tmp_path / "s", store.embedder)


def resign(folder, **sums):
    """Redo the manifest's sha256 sums, as a careless hand-edit (or a crafted file) would."""
    m = json.loads((folder / "manifest.json").read_text())
    m.update(vectors_sha256=sha256_file(folder / "vectors.npy"),
             chunks_sha256=sha256_file(folder / "chunks.jsonl"), **sums)
    (folder / "manifest.json").write_text(json.dumps(m))


def test_consistent_but_wrong_files_are_caught(tmp_path):
    store, _ = five()
    s = tmp_path / "s"
    store.save(s)
    np.save(s / "vectors.npy", np.full((5, 3), 2, np.float32))  # not unit rows
    resign(s)
    with pytest.raises(StoreError, match="vectors.npy: rows are not unit-norm"):
        FlatVectorStore.load(s, store.embedder)
    np.save(s / "vectors.npy", np.array([None] * 15, dtype=object).reshape(5, 3),
            allow_pickle=True)  # a pickle inside an .npy is never loaded
    resign(s)
    with pytest.raises(StoreError, match="vectors.npy: not a plain .npy"):
        FlatVectorStore.load(s, store.embedder)
    (s / "vectors.npy").write_text("garbage\n")
    resign(s)
    with pytest.raises(StoreError, match=r"vectors.npy: not a plain .npy array \(no .npy head"
                       ) as e:
        FlatVectorStore.load(s, store.embedder)
    assert "pickle" not in str(e.value)
    store.save(s)
    lines = (s / "chunks.jsonl").read_text().splitlines()
    (s / "chunks.jsonl").write_text("\n".join(lines[:4]) + "\n")  # a truncated chunks.jsonl
    resign(s)
    with pytest.raises(StoreError, match="chunks.jsonl: 4 lines, manifest says 5"):
        FlatVectorStore.load(s, store.embedder)
    (s / "chunks.jsonl").write_text("\n".join(lines[:4] + ['{"id": 1}']) + "\n")
    resign(s)
    with pytest.raises(StoreError, match="chunks.jsonl:5: not a chunk record"):
        FlatVectorStore.load(s, store.embedder)


def test_save_refuses_to_replace_a_foreign_directory(tmp_path):
    store, _ = five()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "thesis.md").write_text("years of work")
    with pytest.raises(StoreError, match="refusing to overwrite"):
        store.save(tmp_path / "docs")
    assert (tmp_path / "docs" / "thesis.md").read_text() == "years of work"


@pytest.mark.parametrize("field", ["format", "version", "d", "count", "embedder",
                                   "vectors_sha256", "chunks_sha256"])
def test_missing_manifest_fields_are_caught(tmp_path, field):
    store, _ = five()
    store.save(tmp_path / "s")
    mpath = tmp_path / "s" / "manifest.json"
    m = json.loads(mpath.read_text())
    del m[field]
    mpath.write_text(json.dumps(m))
    with pytest.raises(StoreError, match=r"manifest\.json"):
        FlatVectorStore.load(tmp_path / "s", store.embedder)
