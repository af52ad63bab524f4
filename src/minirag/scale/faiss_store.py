"""FaissVectorStore: the FlatVectorStore interface on a FAISS index (exact flat, or HNSW).

What it is: the same chunks-plus-unit-vectors store as `minirag.store.FlatVectorStore`
(`add`, `add_vectors`, `search`, `search_vector`, `search_vectors`, `save`/`load`, `len`),
with the vectors held in a FAISS index instead of a NumPy matrix:
- kind="flat": `IndexFlatIP`, an exact scan like ours (SIMD kernels, its own top-k heap);
- kind="hnsw": `IndexHNSWFlat` with the inner-product metric, an approximate graph search
  (Malkov & Yashunin, 2016) whose recall and speed are set by M (links per node) and
  efSearch (the candidate list a query keeps). On unit vectors inner product is cosine.
What it leaves out: IVF and PQ indexes, deletes, GPU. FAISS is an optional extra
(`pip install -e '.[scale]'`): it is imported inside `_faiss()`, so `minirag` imports and runs
without it, and only building or loading this store needs it.
Saved like FlatVectorStore: index.faiss (faiss.write_index, no pickle) + chunks.jsonl +
manifest.json with sha256 sums, written atomically with store.py's helpers.

Letters: N stored vectors, d dimensions, m queries in a batch, k results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from minirag.chunk import Chunk, read_chunks, write_chunks
from minirag.embed import Embedder
from minirag.files.persist import StoreError, check_sha256, sha256_file, write_dir_atomic
from minirag.store import (
    FlatVectorStore,
    check_k,
    check_new_chunks,
    embedder_config,
    read_manifest_json,
    unit_rows,
)

FORMAT = "minirag.FaissVectorStore"
VERSION = 1
KINDS = ("flat", "hnsw")
INSTALL = "pip install -e '.[scale]'"


def _faiss():
    """Import faiss on first use; without it, say how to install it."""
    try:
        import faiss
    except ImportError:
        raise ImportError(f"FaissVectorStore needs faiss-cpu, which is not installed: "
                          f"run `{INSTALL}` (or `pip install faiss-cpu`)") from None
    return faiss


class FaissVectorStore(FlatVectorStore):
    """Cosine search over chunk embeddings in a FAISS index.

    Example:
        store = FaissVectorStore(embedder, kind="hnsw", M=32, ef_search=50); store.add(chunks)
        store.search("past tense of go", k=3) -> [(Chunk(...), 0.83), (Chunk(...), 0.61), ...]
    With kind="flat" the results equal FlatVectorStore's (scores to float32 rounding); with
    kind="hnsw" they are approximate: measure recall against a flat store (lab 04).
    """

    def __init__(self, embedder: Embedder, kind: str = "flat", M: int = 32,
                 ef_search: int = 50, ef_construction: int = 40):
        if kind not in KINDS:
            raise StoreError(f"kind must be one of {KINDS}, got {kind!r}")
        for name, v in (("M", M), ("ef_search", ef_search), ("ef_construction", ef_construction)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise StoreError(f"{name} must be an integer >= 1, got {v!r}")
        faiss = _faiss()
        super().__init__(embedder)
        self.kind = kind  # "flat" (exact) or "hnsw" (approximate)
        self.M = M  # hnsw: links per node per layer (2M on the bottom layer); memory and recall
        self.ef_construction = ef_construction  # hnsw: candidate list while inserting
        if kind == "flat":
            self.index = faiss.IndexFlatIP(self.d)
        else:
            self.index = faiss.IndexHNSWFlat(self.d, M, faiss.METRIC_INNER_PRODUCT)
            self.index.hnsw.efConstruction = ef_construction
        self.ef_search = ef_search

    @property
    def ef_search(self) -> int:
        """hnsw: candidate list a query keeps (>= k); larger is slower and finds more."""
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        self._ef_search = int(value)
        if self.kind == "hnsw":
            self.index.hnsw.efSearch = self._ef_search

    @property
    def vectors(self) -> np.ndarray:
        """The stored unit vectors, [N, d] float32: a read-only copy rebuilt from the index."""
        v = self.index.reconstruct_n(0, len(self)) if len(self) else np.zeros((0, self.d))
        v = np.asarray(v, dtype=np.float32).reshape(len(self), self.d)
        v.flags.writeable = False
        return v

    # ------------------------------------------------------------ adding

    def add_vectors(self, chunks: list[Chunk], vectors: np.ndarray) -> None:
        """Append chunks with precomputed vectors [n, d]; faiss ids continue from len(self)."""
        new_ids = check_new_chunks(chunks, vectors, self.d, self._ids)
        V = unit_rows(vectors, self.d)  # [n, d], normalised once, here
        if len(V):
            self.index.add(V)  # flat: appends rows; hnsw: inserts each into the graph
        self._chunks.extend(chunks)
        self._ids.update(new_ids)

    # ------------------------------------------------------------ searching

    def search_vectors(self, Q: np.ndarray, k: int = 5) -> list[list[tuple[Chunk, float]]]:
        """Batched search: one result list per row of Q [m, d]; a zero query gives []."""
        k = check_k(k)
        Q = unit_rows(Q, self.d, "query")  # [m, d]
        results: list[list[tuple[Chunk, float]]] = [[] for _ in range(len(Q))]
        live = np.flatnonzero(np.abs(Q).sum(axis=1) > 0)  # zero queries keep their []
        if len(self) == 0 or len(live) == 0:
            return results
        kk = min(k, len(self))
        S, ID = self.index.search(Q[live], kk)  # [m', kk] scores and faiss ids (-1: none)
        for r, s, ids in zip(live, S, ID, strict=True):
            ok = ids >= 0  # hnsw may find fewer than kk
            s, ids = s[ok], ids[ok]
            # faiss orders equal scores as its heap left them; we promise insertion order.
            order = np.lexsort((ids, -s))  # by score descending, then id ascending
            results[r] = [(self._chunks[i], float(x)) for i, x in zip(ids[order], s[order])]
        return results

    # ------------------------------------------------------------ saving

    def manifest(self) -> dict[str, Any]:
        """What load() checks: format, kind, parameters, d, count and the embedder."""
        return {"format": FORMAT, "version": VERSION, "kind": self.kind, "M": self.M,
                "ef_construction": self.ef_construction, "ef_search": self.ef_search,
                "d": self.d, "count": len(self),
                "embedder": {"name": self.embedder.name, "config": embedder_config(self.embedder)}}

    def save(self, path) -> None:
        """Write the store to directory `path` atomically (index.faiss, chunks.jsonl, manifest)."""
        faiss = _faiss()

        def write(tmp: Path) -> None:
            faiss.write_index(self.index, str(tmp / "index.faiss"))
            write_chunks(tmp / "chunks.jsonl", self._chunks)
            m = self.manifest() | {"index_sha256": sha256_file(tmp / "index.faiss"),
                                   "chunks_sha256": sha256_file(tmp / "chunks.jsonl")}
            (tmp / "manifest.json").write_text(json.dumps(m, indent=1), encoding="utf-8")

        write_dir_atomic(Path(path), write)

    @classmethod
    def load(cls, path, embedder: Embedder) -> FaissVectorStore:
        """Read a store saved by `save`; every mismatch raises StoreError naming the file."""
        faiss = _faiss()
        path = Path(path)
        mpath = path / "manifest.json"
        m = read_manifest_json(mpath, FORMAT, VERSION, embedder)
        try:
            store = cls(embedder, kind=m.get("kind"), M=m.get("M"),
                        ef_search=m.get("ef_search"), ef_construction=m.get("ef_construction"))
        except StoreError as e:
            raise StoreError(f"{mpath}: {e}") from None
        count = m["count"]
        ipath, cpath = path / "index.faiss", path / "chunks.jsonl"
        check_sha256(path, {"index.faiss": m.get("index_sha256"),
                            "chunks.jsonl": m.get("chunks_sha256")}, mpath)
        try:
            index = faiss.read_index(str(ipath))
        except RuntimeError as e:
            raise StoreError(f"{ipath}: faiss cannot read it ({str(e).splitlines()[0]})") from None
        if (type(index) is not type(store.index) or index.d != store.d or index.ntotal != count
                or index.metric_type != faiss.METRIC_INNER_PRODUCT):
            raise StoreError(f"{ipath}: {type(index).__name__} d={index.d} n={index.ntotal}, "
                             f"expected {type(store.index).__name__} d={store.d} n={count} "
                             f"with the inner-product metric")
        store.index = index
        store.ef_search = store.ef_search  # re-applies efSearch to the loaded graph
        store._chunks = read_chunks(cpath, count)
        store._ids = {c.id for c in store._chunks}
        if len(store._ids) != count:
            raise StoreError(f"{cpath}: duplicate chunk ids")
        return store
