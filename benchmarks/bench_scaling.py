"""Scaling sweep: FlatVectorStore vs faiss IndexFlatIP vs faiss HNSW, N = 10^3 .. 10^6, d = 64, 384.

For each d, one Gaussian mixture (1,000 random unit centres plus isotropic noise of norm 0.35,
rows normalised, float32) and 200 held-out queries from the same mixture; each size N uses its
first N rows. Per N: single-query top-5 latency (medians over 200 queries after 10 warm-ups;
the flat scans take turns on each query, each HNSW search gets its own pass over the queries):
  ours       FlatVectorStore.search_vector (mat-vec + sampled-threshold top k, Python results)
  argpart    the naive NumPy scan: V @ q, np.argpartition, sort the k
  faiss      faiss IndexFlatIP.search (exact, SIMD, heap top k)
  hnsw       faiss IndexHNSWFlat.search, inner product, M = 32, efConstruction 40, efSearch 50
  hnsw store FaissVectorStore(kind="hnsw").search_vector (the same index behind our interface)
plus build times, bytes per vector, and HNSW recall@5 against the exact top 5. The crossover is
where HNSW becomes faster than the flat scan (log-log interpolation between measured sizes),
like for like: our store against FaissVectorStore(hnsw), faiss flat against faiss HNSW, and the
naive NumPy scan against faiss HNSW (both return bare id arrays).
Everything runs on one thread (BLAS via threadpoolctl, faiss.omp_set_num_threads(1)).

Run: python benchmarks/bench_scaling.py [--quick]
     (quick: N <= 2*10^4, ~20 s; full: to 10^6, ~15 min and ~7 GB of RAM on one core)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
from common import environment, median_ms, table
from threadpoolctl import threadpool_limits

from minirag.chunk import Chunk
from minirag.embed import VectorsOnly
from minirag.scale.faiss_store import FaissVectorStore
from minirag.store import FlatVectorStore

K, SEED, N_QUERIES = 5, 0, 200
CLUSTERS, SPREAD = 1000, 0.35  # mixture: centres on the unit sphere, noise of norm ~SPREAD
M, EF_CONSTRUCTION, EF_SEARCH = 32, 40, 50
FULL_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000)


def mixture(rng: np.random.Generator, n: int, d: int, block: int = 100_000) -> np.ndarray:
    """n unit rows [n, d] float32 from a Gaussian mixture, built in blocks to bound memory."""
    C = rng.standard_normal((CLUSTERS, d), dtype=np.float32)  # [CLUSTERS, d] centres
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    X = np.empty((n, d), dtype=np.float32)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        noise = rng.standard_normal((hi - lo, d), dtype=np.float32)  # [b, d]
        X[lo:hi] = C[rng.integers(0, CLUSTERS, hi - lo)] + noise * (SPREAD / math.sqrt(d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X


def hnsw_bytes(index, d: int) -> int:
    """Bytes an IndexHNSWFlat holds: the float32 rows plus the graph (links, offsets, levels)."""
    h = index.hnsw
    return (4 * d * index.ntotal + 4 * h.neighbors.size() + 8 * h.offsets.size()
            + 4 * h.levels.size())


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_size(X: np.ndarray, Q: np.ndarray, chunks: list[Chunk], n: int) -> dict:
    d = X.shape[1]
    V = X[:n]  # [n, d] the first n rows of the mixture, unit float32
    ours = FlatVectorStore(VectorsOnly(d))
    flat = FaissVectorStore(VectorsOnly(d), "flat")
    hnsw = FaissVectorStore(VectorsOnly(d), "hnsw", M=M, ef_search=EF_SEARCH,
                            ef_construction=EF_CONSTRUCTION)
    build_ours = timed(lambda: ours.add_vectors(chunks[:n], V))
    build_flat = timed(lambda: flat.add_vectors(chunks[:n], V))
    build_hnsw = timed(lambda: hnsw.add_vectors(chunks[:n], V))

    W = ours.vectors  # [n, d] read-only view, for the naive scan

    def argpart(q):
        s = W @ q  # [n]
        top = np.argpartition(-s, K)[:K] if n > K else np.arange(n)
        return top[np.argsort(-s[top])]

    # The flat scans take turns on each query (load bursts hit them alike). Each HNSW search
    # gets its own stream of queries instead: run right after a flat scan, it would find the
    # caches flushed by N*d*4 streamed bytes; run right after another HNSW search of the same
    # query, it would find the very nodes it needs already cached. Neither is a query stream.
    ms = median_ms({"ours": lambda q: ours.search_vector(q, K),
                    "argpart": argpart,
                    "faiss": lambda q: flat.index.search(q[None], K)}, Q)
    ms |= median_ms({"hnsw": lambda q: hnsw.index.search(q[None], K)}, Q)
    ms |= median_ms({"hnsw_store": lambda q: hnsw.search_vector(q, K)}, Q)

    exact_s, exact = flat.index.search(Q, K)  # [m, K] true top-5 scores and ids
    approx = hnsw.index.search(Q, K)[1]  # [m, K]
    recall = float(np.mean([len(set(a) & set(e)) / K for a, e in zip(approx, exact)]))
    # ours == faiss flat, ties aside: same ids, or ids that differ only where the scores tie
    # to float32 rounding (the two sum the d products in different orders)
    same = all([c.offset for c, _ in hits] == e.tolist() or
               np.allclose([s for _, s in hits], es, atol=1e-6)
               for hits, es, e in zip(ours.search_vectors(Q, K), exact_s, exact))
    return {"n": n, "d": d, **{f"{k}_ms": v for k, v in ms.items()},
            "faiss_over_ours": ms["faiss"] / ms["ours"], "hnsw_over_ours": ms["hnsw"] / ms["ours"],
            "hnsw_over_faiss": ms["hnsw"] / ms["faiss"],
            "hnsw_store_over_ours": ms["hnsw_store"] / ms["ours"], "recall_at_5": recall,
            "ours_equals_faiss": bool(same),
            "build_s": {"ours": build_ours, "faiss": build_flat, "hnsw": build_hnsw},
            "bytes_per_vector": {"ours": 4 * d, "faiss": 4 * d,
                                 "hnsw": hnsw_bytes(hnsw.index, d) / n}}


def crossover(rows: list[dict], slow: str, fast: str) -> float | None:
    """N where `fast` first beats `slow`, interpolating log(ratio) linearly in log(N).

    None if `fast` never wins; the smallest N measured if it already wins there.
    """
    r = [(row["n"], row[f"{fast}_ms"] / row[f"{slow}_ms"]) for row in rows]
    for (n0, r0), (n1, r1) in zip(r, r[1:]):
        if r0 >= 1 > r1:  # the ratio crosses 1 between n0 and n1
            t = math.log(r0) / (math.log(r0) - math.log(r1))
            return float(math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0))))
    return float(r[0][0]) if r and r[0][1] < 1 else None


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="N up to 2*10^4 (seconds, not minutes)")
    args = p.parse_args(argv)
    import faiss

    faiss.omp_set_num_threads(1)
    env = environment(faiss=faiss.__version__)
    load0 = os.getloadavg()
    print(f"  load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    out: dict = {"env": env, "load_start": load0, "rows": [], "crossover": {}}
    t_start = time.perf_counter()
    with threadpool_limits(1):  # one BLAS thread too: the comparison is core for core
        for d in (64, 384):
            rng = np.random.default_rng(SEED)
            A = mixture(rng, sizes[-1] + N_QUERIES, d)
            X, Q = A[:sizes[-1]], A[sizes[-1]:]  # [N_max, d] stored, [200, d] queries
            chunks = [Chunk(f"{i:012x}", "", "bench", i) for i in range(len(X))]
            rows = []
            for n in sizes:
                rows.append(bench_size(X, Q, chunks, n))
                print(f"  d={d} N={n:,} done ({time.perf_counter() - t_start:.0f} s)", flush=True)
            del A, X, chunks
            out["rows"] += rows
            # like for like: store against store (Python results both), raw index against
            # raw index or raw NumPy (arrays of ids both)
            out["crossover"][d] = {"store": crossover(rows, "ours", "hnsw_store"),
                                   "faiss": crossover(rows, "faiss", "hnsw"),
                                   "argpart": crossover(rows, "argpart", "hnsw")}
    load1 = os.getloadavg()
    out["load_end"] = load1
    for d in (64, 384):
        rows = [r for r in out["rows"] if r["d"] == d]
        print(f"\nd = {d}: top-{K} latency, median over {N_QUERIES} single queries (ms), one "
              f"thread; HNSW M={M} efSearch={EF_SEARCH}; Gaussian mixture, {CLUSTERS} clusters")
        print(table(["N", "ours", "argpart", "faiss", "hnsw", "hnsw store", "faiss/ours",
                     "hnsw store/ours", "hnsw/faiss", "recall@5", "same (ties aside)"],
                    [(f"{r['n']:,}", r["ours_ms"], r["argpart_ms"], r["faiss_ms"], r["hnsw_ms"],
                      r["hnsw_store_ms"], r["faiss_over_ours"], r["hnsw_store_over_ours"],
                      r["hnsw_over_faiss"], r["recall_at_5"], r["ours_equals_faiss"])
                     for r in rows]))
        print(f"\nd = {d}: build time (s) and bytes per vector")
        print(table(["N", "ours", "faiss", "hnsw", "B/vec flat", "B/vec hnsw"],
                    [(f"{r['n']:,}", r["build_s"]["ours"], r["build_s"]["faiss"],
                      r["build_s"]["hnsw"], r["bytes_per_vector"]["ours"],
                      r["bytes_per_vector"]["hnsw"]) for r in rows]))
        c = out["crossover"][d]

        def fmt(x):
            return "never (in the sizes measured)" if x is None else f"N ~ {x:,.0f}"

        print(f"crossover, HNSW faster than the flat scan: store vs store (hnsw store vs ours) "
              f"{fmt(c['store'])}; faiss hnsw vs faiss flat {fmt(c['faiss'])}; "
              f"faiss hnsw vs NumPy argpartition {fmt(c['argpart'])}")
    print(f"\nload average at end: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} "
          f"(2 cores; {time.perf_counter() - t_start:.0f} s in all)")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
