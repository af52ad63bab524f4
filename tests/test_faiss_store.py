"""FaissVectorStore in isolation, with a fake embedder: a 5x3 example checked by hand (flat and
HNSW), equality with FlatVectorStore for kind="flat" (ids, and scores to 1e-6; single and
batched), HNSW recall@5 >= 0.95 against exact search on a Gaussian mixture, ties, the defined
answers for an empty store, k > N and a zero query, bad input, the save/load round trip with the
tampers it must catch, and the clear error when faiss is missing (import simulated away).
"""

import json
import subprocess
import sys

import numpy as np
import pytest
from fakes import TableEmbedder, make_chunks

from minirag.chunk import Chunk, chunk_id
from minirag.embed import VectorsOnly
from minirag.store import FlatVectorStore, StoreError

pytest.importorskip("faiss")  # the optional extra `scale`; without it only this file is skipped

from minirag.scale.faiss_store import FaissVectorStore  # noqa: E402


def numbered_chunks(n: int) -> list[Chunk]:
    return make_chunks([f"text {i}" for i in range(n)])


def mixture(rng, n: int, d: int, clusters: int = 20, spread: float = 0.35) -> np.ndarray:
    """n points of a Gaussian mixture [n, d], float32: random unit centres plus noise."""
    C = rng.standard_normal((clusters, d)).astype(np.float32)  # [clusters, d]
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    noise = rng.standard_normal((n, d)).astype(np.float32) * spread / np.sqrt(d)
    return C[rng.integers(0, clusters, n)] + noise  # [n, d]


TABLE = {
    "a": [1, 0, 0], "b": [0, 2, 0], "c": [1, 1, 0], "d": [0, 0, -3], "e": [3, 3, 0.5],
    "q1": [2, 1, 0], "zero": [0, 0, 0],
}


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_five_by_three_by_hand(kind):
    store = FaissVectorStore(TableEmbedder(TABLE, 3), kind=kind)
    chunks = [Chunk(chunk_id("doc.md", i), t, "doc.md", i) for i, t in enumerate("abcde")]
    store.add(chunks[:2])
    store.add(chunks[2:])
    hits = store.search("q1", k=5)
    # cos(q1, .): c 3/sqrt(10) = .949, e 9/sqrt(91.25) = .942, a 2/sqrt(5) = .894,
    # b 1/sqrt(5) = .447, d 0
    assert [c.text for c, _ in hits] == list("ceabd")
    np.testing.assert_allclose([s for _, s in hits],
                               [3 / 10**0.5, 9 / 91.25**0.5, 2 / 5**0.5, 1 / 5**0.5, 0],
                               atol=1e-6)
    assert len(store) == 5 and store.chunks == chunks
    np.testing.assert_allclose(np.linalg.norm(store.vectors, axis=1), 1, atol=1e-6)
    assert store.search("zero", k=3) == []


@pytest.mark.parametrize("k", [1, 5, 50, 400])
def test_flat_equals_flat_vector_store(k):
    rng = np.random.default_rng(1)
    X, Q = np.split(mixture(rng, 330, 16), [300])  # queries from the same clusters
    chunks = numbered_chunks(300)
    ours, theirs = FlatVectorStore(VectorsOnly(16)), FaissVectorStore(VectorsOnly(16), "flat")
    for lo, hi in ((0, 100), (100, 300)):  # two add calls: faiss ids continue across them
        ours.add_vectors(chunks[lo:hi], X[lo:hi])
        theirs.add_vectors(chunks[lo:hi], X[lo:hi])
    np.testing.assert_allclose(theirs.vectors, ours.vectors, atol=1e-7)
    batched = theirs.search_vectors(Q, k)
    for q, got in zip(Q, batched, strict=True):
        want = ours.search_vector(q, k)
        assert theirs.search_vector(q, k) == got
        assert [c.id for c, _ in got] == [c.id for c, _ in want]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
    assert len(batched[0]) == min(k, 300)


def test_hnsw_recall_at_5_on_a_gaussian_mixture():
    rng = np.random.default_rng(2)
    X, Q = np.split(mixture(rng, 3200, 32), [3000])  # queries from the same clusters
    chunks = numbered_chunks(3000)
    exact, ann = FlatVectorStore(VectorsOnly(32)), FaissVectorStore(VectorsOnly(32), "hnsw",
                                                                   M=16, ef_search=50)
    exact.add_vectors(chunks, X)
    ann.add_vectors(chunks, X)
    hits = [len({c.id for c, _ in a} & {c.id for c, _ in e}) for a, e in
            zip(ann.search_vectors(Q, 5), exact.search_vectors(Q, 5), strict=True)]
    recall = sum(hits) / (5 * len(Q))
    assert recall >= 0.95, recall
    assert ann.index.hnsw.efSearch == 50 and ann.index.hnsw.efConstruction == 40


def test_ties_break_by_insertion_order():
    store = FaissVectorStore(VectorsOnly(4), "flat")
    X = np.tile([[1, 2, 0, 0]], (6, 1)).astype(np.float32)
    X[4] = [0, 0, 1, 0]  # one different row among five identical ones
    chunks = numbered_chunks(6)
    store.add_vectors(chunks, X)
    got = store.search_vector(np.array([1, 2, 0, 0], dtype=np.float32), k=5)
    assert [c.offset for c, _ in got] == [0, 1, 2, 3, 5]


def test_empty_store_k_larger_than_n_and_bad_input():
    store = FaissVectorStore(VectorsOnly(3), "hnsw")
    q = np.array([1, 0, 0], dtype=np.float32)
    assert store.search_vector(q, 3) == [] and len(store) == 0
    assert store.vectors.shape == (0, 3)
    store.add_vectors(numbered_chunks(2), np.eye(3, dtype=np.float32)[:2])
    assert [c.offset for c, _ in store.search_vector(q, 10)] == [0, 1]
    for bad_k in (0, -1, 1.5, True):
        with pytest.raises(StoreError, match="k must be"):
            store.search_vector(q, bad_k)
    with pytest.raises(StoreError, match="NaN"):
        store.search_vector(np.array([np.nan, 0, 0]), 1)
    with pytest.raises(StoreError, match="shape"):
        store.search_vector(np.ones(4), 1)
    with pytest.raises(StoreError, match="duplicate"):
        store.add_vectors(numbered_chunks(1), np.ones((1, 3)))
    with pytest.raises(StoreError, match="shape"):
        store.add_vectors(make_chunks(["a", "b"], "x.md"), np.ones((2, 4)))
    with pytest.raises(StoreError, match="kind"):
        FaissVectorStore(VectorsOnly(3), "ivf")
    with pytest.raises(StoreError, match="query is empty"):
        store.search("  ")


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_save_load_round_trip(tmp_path, kind):
    rng = np.random.default_rng(3)
    X, Q = np.split(mixture(rng, 520, 8), [500])
    store = FaissVectorStore(VectorsOnly(8), kind, M=8, ef_search=20)
    store.add_vectors(numbered_chunks(500), X)
    store.save(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [
        "chunks.jsonl", "index.faiss", "manifest.json"]
    back = FaissVectorStore.load(tmp_path / "idx", VectorsOnly(8))
    assert (back.kind, back.M, back.ef_search, len(back)) == (kind, 8, 20, 500)
    assert back.chunks == store.chunks
    np.testing.assert_array_equal(back.vectors, store.vectors)
    assert back.search_vectors(Q, 7) == store.search_vectors(Q, 7)
    store.save(tmp_path / "idx")  # replacing a saved index is allowed


def _saved(tmp_path):
    store = FaissVectorStore(VectorsOnly(4), "flat")
    store.add_vectors(numbered_chunks(10), np.random.default_rng(4).standard_normal((10, 4)))
    store.save(tmp_path / "idx")
    return tmp_path / "idx"


@pytest.mark.parametrize("tamper, message", [
    (lambda p: (p / "index.faiss").write_bytes((p / "index.faiss").read_bytes()[:-8]),
     "index.faiss: missing or sha256"),
    (lambda p: (p / "index.faiss").unlink(), "index.faiss: missing or sha256"),
    (lambda p: (p / "chunks.jsonl").write_text("{}\n", encoding="utf-8"), "chunks.jsonl"),
    (lambda p: _edit_manifest(p, count=11), "index.faiss: IndexFlatIP d=4 n=10"),
    (lambda p: _edit_manifest(p, kind="hnsw"), "expected IndexHNSWFlat"),
    (lambda p: _edit_manifest(p, kind="ivf"), "kind must be one of"),
    (lambda p: _edit_manifest(p, d=5), "d is 5"),
    (lambda p: _edit_manifest(p, format="minirag.FlatVectorStore"), "format"),
    (lambda p: (p / "manifest.json").write_text("{", encoding="utf-8"), "cannot read"),
])
def test_tampered_files_are_refused(tmp_path, tamper, message):
    path = _saved(tmp_path)
    tamper(path)
    with pytest.raises(StoreError, match=message):
        FaissVectorStore.load(path, VectorsOnly(4))


def _edit_manifest(path, **changes):
    m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    m.update(changes)
    (path / "manifest.json").write_text(json.dumps(m), encoding="utf-8")


def test_a_corrupt_index_with_a_matching_sha_is_refused(tmp_path):
    path = _saved(tmp_path)
    (path / "index.faiss").write_bytes(b"not an index at all")
    _edit_manifest(path, index_sha256=__import__("hashlib").sha256(
        b"not an index at all").hexdigest())
    with pytest.raises(StoreError, match="faiss cannot read it"):
        FaissVectorStore.load(path, VectorsOnly(4))


def test_missing_faiss_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)  # `import faiss` now raises ImportError
    with pytest.raises(ImportError, match=r"pip install -e '\.\[scale\]'"):
        FaissVectorStore(VectorsOnly(3))


def test_minirag_imports_and_runs_without_faiss():
    code = ("import sys; sys.modules['faiss'] = None\n"
            "import numpy as np\n"
            "import minirag.scale.faiss_store, minirag.scale.shard\n"
            "from minirag.store import FlatVectorStore\n"
            "from minirag.chunk import Chunk\n"
            "class E: name, d = 'e', 2\n"
            "s = FlatVectorStore(E()); s.add_vectors([Chunk('a', 'a', 'd', 0)], np.ones((1, 2)))\n"
            "print(len(s.search_vector(np.ones(2), 1)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
