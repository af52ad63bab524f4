"""A flat (exact, brute-force) vector store: cosine similarity by one mat-vec and a top-k.

The whole idea, for N chunks with vectors of d numbers:
    V = X / |X|                     # [N, d] unit rows: normalised once, when chunks are added
    s = V @ (q / |q|)               # [N] the cosine of the query with every chunk
    top = argpartition(-s, k)[:k]   # the k best (then sorted, ties by insertion order)
`FlatVectorStore` below is exactly that: its search hands V and the queries to topk.py, whose
`top_k_plain` is the last line, and whose faster `top_k_rows` gives the same exact answer
(benchmarks/bench_store.py measures it against faiss; theory/02 quotes the ratio). One choice
is not in the three lines: V is kept column-major (chunk i's vector is column i of a [d, N]
buffer), the same numbers laid out so that `V @ q` streams them fastest (theory/02 §7). Then
persistence: a directory (vectors.npy + chunks.jsonl + manifest.json), written
atomically, loaded without pickle and checked against the sha256 sums in its manifest.
What it leaves out: approximate search (HNSW, IVF: scale/faiss_store.py), deletes and
updates, metadata filters. Follows DESIGN §3 `minirag.store.FlatVectorStore`.

Letters: N stored vectors, d dimensions, m queries in a batch, k results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from minirag.chunk import Chunk, read_chunks, write_chunks
from minirag.embed import Embedder
from minirag.files.persist import (
    StoreError,
    check_sha256,
    load_npy,
    read_manifest,
    sha256_file,
    write_dir_atomic,
)
from minirag.topk import check_k, top_k_rows

FORMAT = "minirag.FlatVectorStore"
VERSION = 1


class FlatVectorStore:
    """Exact cosine search over chunk embeddings.

    Example:
        store = FlatVectorStore(embedder); store.add(chunks)
        store.search("past tense of go", k=3) -> [(Chunk(...), 0.83), (Chunk(...), 0.61), ...]
    A query whose vector is zero (nothing the embedder recognises) matches nothing: `[]`.
    Other stores with this interface subclass it (scale/faiss_store.py).
    """

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.d = int(embedder.d)
        self._chunks: list[Chunk] = []  # row i of the vectors is chunk i, in insertion order
        self._ids: set[str] = set()
        # [d, capacity]: column i is chunk i's unit vector, columns [:N] are used. V is kept
        # column-major (V = _cols[:, :N].T) because that is the layout in which BLAS's
        # matrix-vector product `V @ q` streams the matrix fastest (topk.top_k_rows)
        self._cols = np.zeros((self.d, 0), dtype=np.float32)

    def __len__(self) -> int:
        return len(self._chunks)

    @property
    def chunks(self) -> list[Chunk]:
        """The stored chunks in insertion order (row i of the vectors). Use add() to grow."""
        return self._chunks

    @property
    def vectors(self) -> np.ndarray:
        """The stored unit vectors, [N, d] float32, as a read-only view (no copy; column-major,
        so np.ascontiguousarray(store.vectors) when a C-ordered array is needed)."""
        v = self._cols[:, : len(self)].T
        v.flags.writeable = False
        return v

    # ------------------------------------------------------------ adding

    def add(self, chunks: list[Chunk]) -> None:
        """Embed the chunks' texts and append them."""
        if chunks:
            self.add_vectors(chunks, self.embedder.embed([c.text for c in chunks]))

    def add_vectors(self, chunks: list[Chunk], vectors: np.ndarray) -> None:
        """Append chunks with precomputed vectors [n, d] (an index cache, a benchmark)."""
        new_ids = check_new_chunks(chunks, vectors, self.d, self._ids)
        v = unit_rows(vectors, self.d)  # [n, d]: normalised once, here, so a search is a dot
        # Grow by doubling: appending n rows costs O(n) amortised, never a vstack of everything.
        n0, n1 = len(self), len(self) + len(chunks)
        if n1 > self._cols.shape[1]:
            grown = np.zeros((self.d, max(n1, 2 * self._cols.shape[1], 16)), dtype=np.float32)
            grown[:, :n0] = self._cols[:, :n0]
            self._cols = grown
        self._cols[:, n0:n1] = v.T
        self._chunks.extend(chunks)
        self._ids.update(new_ids)

    # ------------------------------------------------------------ searching

    def search(self, query_text: str, k: int = 5) -> list[tuple[Chunk, float]]:
        """The k chunks most similar to the query text, best first."""
        if not query_text or not query_text.strip():
            raise StoreError("query is empty")
        return self.search_vector(self.embedder.embed([query_text])[0], k)

    def search_vector(self, q: np.ndarray, k: int = 5) -> list[tuple[Chunk, float]]:
        """The k stored chunks with the highest cosine to q [d], best first."""
        q = np.asarray(q)
        if q.ndim != 1:
            raise StoreError(f"query has shape {q.shape}, expected ({self.d},)")
        return self.search_vectors(q[None, :], k)[0]

    def search_vectors(self, Q: np.ndarray, k: int = 5) -> list[list[tuple[Chunk, float]]]:
        """Batched search: one result list per row of Q [m, d]."""
        k = check_k(k)
        Q = unit_rows(Q, self.d, "query")  # [m, d]; a copy: the caller's array is never scaled
        live = Q.any(axis=1).tolist()  # unit rows or zero rows: a zero query matches nothing
        if len(self) == 0 or not any(live):
            return [[] for _ in live]
        V = self.vectors  # [N, d], column-major, a view
        # subtle: around the scan a search is a handful of calls, each paid with cold caches,
        # so the usual case (every query live) builds no index arrays and copies nothing
        if all(live):
            return [self._hits(top, scores) for top, scores in top_k_rows(Q, V, k)]
        found = iter(top_k_rows(Q[live], V, k))  # the live queries' results, in order
        return [self._hits(*next(found)) if ok else [] for ok in live]

    def _hits(self, rows: np.ndarray, scores: np.ndarray) -> list[tuple[Chunk, float]]:
        """(chunk, score) for rows [k] and scores [k]; tolist() makes every float at once."""
        return [(self._chunks[i], s) for i, s in zip(rows.tolist(), scores.tolist(), strict=True)]

    # ------------------------------------------------------------ saving

    def save(self, path) -> None:
        """Write the store to directory `path` atomically (vectors.npy, chunks.jsonl, manifest)."""

        def write(tmp: Path) -> None:
            np.save(tmp / "vectors.npy", np.ascontiguousarray(self.vectors))  # [N, d], C order
            write_chunks(tmp / "chunks.jsonl", self._chunks)
            manifest = {
                "format": FORMAT, "version": VERSION, "d": self.d, "count": len(self),
                "embedder": {"name": self.embedder.name, "config": embedder_config(self.embedder)},
                "vectors_sha256": sha256_file(tmp / "vectors.npy"),
                "chunks_sha256": sha256_file(tmp / "chunks.jsonl"),
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")

        write_dir_atomic(Path(path), write)

    @classmethod
    def load(cls, path, embedder: Embedder) -> FlatVectorStore:
        """Read a store saved by `save`; every mismatch raises StoreError naming the file."""
        path = Path(path)
        mpath = path / "manifest.json"
        m = read_manifest_json(mpath, FORMAT, VERSION, embedder)
        count = m["count"]
        check_sha256(path, {"vectors.npy": m.get("vectors_sha256"),
                            "chunks.jsonl": m.get("chunks_sha256")}, mpath)
        vectors = load_npy(path / "vectors.npy")
        d = int(embedder.d)
        if vectors.dtype != np.float32 or vectors.shape != (count, d):
            raise StoreError(f"{path / 'vectors.npy'}: {vectors.dtype} {vectors.shape}, "
                             f"expected float32 ({count}, {d})")
        norms = np.linalg.norm(vectors, axis=1)  # [N]
        if not (np.isfinite(vectors).all() and
                np.all((np.abs(norms - 1) < 1e-3) | (norms == 0))):
            raise StoreError(f"{path / 'vectors.npy'}: rows are not unit-norm (or zero)")
        cpath = path / "chunks.jsonl"
        store = cls(embedder)
        store._chunks = read_chunks(cpath, count)
        store._ids = {c.id for c in store._chunks}
        if len(store._ids) != count:
            raise StoreError(f"{cpath}: duplicate chunk ids")
        store._cols = np.ascontiguousarray(vectors.T)  # [d, N]
        return store


# ----------------------------------------------- checks shared with the other stores


def embedder_config(embedder: Embedder) -> dict[str, Any]:
    """The embedder's `config` (a JSON-able dict, or a method returning one), if it has one."""
    cfg = getattr(embedder, "config", None)
    cfg = cfg() if callable(cfg) else cfg
    return json.loads(json.dumps(cfg)) if isinstance(cfg, dict) else {}


def read_manifest_json(mpath: Path, fmt: str, version: int, embedder: Embedder) -> dict:
    """A saved store's manifest.json, checked against what this code and `embedder` expect:
    format, version, dimension, embedder name and config, and a count >= 0."""
    return read_manifest(mpath, {"format": fmt, "version": version, "d": int(embedder.d),
                                 "embedder": {"name": embedder.name,
                                              "config": embedder_config(embedder)}})


def check_new_chunks(chunks: list[Chunk], vectors, d: int, known: set[str]) -> list[str]:
    """The ids of chunks about to be added with `vectors`; refuses a shape that does not match
    (n chunks, d) and an id that is repeated or already stored."""
    shape = np.shape(vectors)
    if shape != (len(chunks), d):
        raise StoreError(f"vectors have shape {shape}, expected ({len(chunks)}, {d}) for "
                         f"{len(chunks)} chunks of dimension {d}")
    new_ids = [c.id for c in chunks]
    if len(set(new_ids)) < len(new_ids) or not known.isdisjoint(new_ids):
        raise StoreError("duplicate chunk ids: every chunk may be added once")
    return new_ids


def unit_rows(X, d: int, what: str = "vectors") -> np.ndarray:
    """X [n, d] checked (shape, finite) and returned as a float32 C-ordered copy with unit
    rows; zero rows stay zero. Stores call it once at add time and once per query batch."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != d:
        raise StoreError(f"{what} has shape {X.shape}, expected (n, {d})")
    if not np.isfinite(X).all():
        raise StoreError(f"{what} contain NaN or inf")
    X = np.array(X, dtype=np.float32, order="C")  # [n, d], a copy we may scale
    # |x| = sqrt(sum of x_j^2): linalg.norm's own sum, without its checks and its extra copy
    norms = np.sqrt((X * X).sum(axis=1, keepdims=True))  # [n, 1]
    np.divide(X, norms, out=X, where=norms > 0)
    return X
