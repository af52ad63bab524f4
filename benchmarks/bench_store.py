"""FlatVectorStore against faiss IndexFlatIP: exact search, d = 64, k = 5, random unit vectors.

Single queries are compared with faiss on one thread (its best for one query on this machine,
DESIGN §7); batches of 100 queries with faiss on its default threads and on one, whichever is
faster. Both return the exact top k, so the ids must be identical. Also printed: the peak memory
a search allocates (tracemalloc), which must stay far below the matrix: no float64, no copy.

Run: python benchmarks/bench_store.py [--quick]   (full: ~1 min and ~2 GB of RAM)
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from common import environment, median_ms, peak_mib, table
from threadpoolctl import threadpool_limits

from minirag.chunk import Chunk
from minirag.embed import VectorsOnly
from minirag.store import FlatVectorStore

D, K, SEED = 64, 5, 0


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    X = rng.standard_normal((n, D), dtype=np.float32)  # [n, d]
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X


def bench_size(n: int, faiss, rng: np.random.Generator, n_queries: int = 200) -> dict:
    X, Q = unit_rows(rng, n), unit_rows(rng, n_queries)  # [n, d], [m, d] float32
    store = FlatVectorStore(VectorsOnly(D))
    store.add_vectors([Chunk(f"{i:012x}", "", "bench", i) for i in range(n)], X)
    index = faiss.IndexFlatIP(D)
    index.add(X)
    del X

    # single queries: ours vs faiss on one thread; and the naive mat-vec + argpartition
    faiss.omp_set_num_threads(1)
    V = store.vectors
    single = median_ms({"ours": lambda q: store.search_vector(q, K),
                        "faiss": lambda q: index.search(q[None], K),
                        "naive": lambda q: np.argpartition(-(V @ q), K)[:K]}, Q)
    with threadpool_limits(1, user_api="blas"):  # the same single thread as faiss
        single1 = median_ms({"ours": lambda q: store.search_vector(q, K),
                             "faiss": lambda q: index.search(q[None], K)}, Q)
    same = all([c.offset for c, _ in store.search_vector(q, K)] ==
               index.search(q[None], K)[1][0].tolist() for q in Q)

    # batches of 100 queries, time per query; faiss at its best of 1 thread and its default
    def faiss_batch(B, threads):
        faiss.omp_set_num_threads(threads)
        return index.search(B, K)

    batches = [Q[i:i + 100] for i in range(0, n_queries - 99, 20)] * 2  # 12 x 100 queries
    batch = median_ms({"ours": lambda B: store.search_vectors(B, K),
                       "faiss1": lambda B: faiss_batch(B, 1),
                       "faiss2": lambda B: faiss_batch(B, 2)}, batches, warmup=2)
    ours_b, ref_b = batch["ours"] / 100, min(batch["faiss1"], batch["faiss2"]) / 100
    faiss.omp_set_num_threads(1)
    same_b = all([c.offset for c, _ in r] == ids.tolist() for r, ids in
                 zip(store.search_vectors(Q[:100], K), index.search(Q[:100], K)[1], strict=True))

    peak = peak_mib(lambda: store.search_vector(Q[0], K))
    peak_b = peak_mib(lambda: store.search_vectors(Q[:100], K))
    return {"n": n, "ours_ms": single["ours"], "faiss_ms": single["faiss"],
            "ratio": single["ours"] / single["faiss"], "naive_argpartition_ms": single["naive"],
            "ours_1thread_ms": single1["ours"], "faiss_ms_again": single1["faiss"],
            "ratio_1thread": single1["ours"] / single1["faiss"],
            "identical": bool(same),
            "ours_batch_ms_per_query": ours_b, "faiss_batch_ms_per_query": ref_b,
            "batch_ratio": ours_b / ref_b, "batch_identical": bool(same_b),
            "matrix_mib": n * D * 4 / 2**20, "peak_single_mib": peak, "peak_batch_mib": peak_b}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="10^4 and 10^5 vectors instead")
    args = p.parse_args(argv)
    import faiss

    env = environment(faiss=faiss.__version__)
    sizes = (10_000, 100_000) if args.quick else (100_000, 1_000_000)
    rng = np.random.default_rng(SEED)
    rows = [bench_size(n, faiss, rng) for n in sizes]
    print(f"\nexact top-{K}, d = {D}, float32 unit vectors, median over 200 queries (ms);"
          " faiss on 1 thread; ours with NumPy's BLAS on its default threads, then on 1")
    print(table(["N", "ours", "faiss", "ours/faiss", "ours 1 thr", "faiss", "ours/faiss",
                 "matvec+argpartition", "same ids"],
                [(f"{r['n']:,}", r["ours_ms"], r["faiss_ms"], r["ratio"], r["ours_1thread_ms"],
                  r["faiss_ms_again"], r["ratio_1thread"], r["naive_argpartition_ms"],
                  r["identical"]) for r in rows]))
    print("\nbatches of 100 queries, ms per query (faiss: best of 1 and 2 threads)")
    print(table(["N", "ours", "faiss", "ours/faiss", "same ids"],
                [(f"{r['n']:,}", r["ours_batch_ms_per_query"], r["faiss_batch_ms_per_query"],
                  r["batch_ratio"], r["batch_identical"]) for r in rows]))
    print("\npeak memory allocated by one search (tracemalloc, MiB)")
    print(table(["N", "matrix", "single query", "batch of 100"],
                [(f"{r['n']:,}", r["matrix_mib"], r["peak_single_mib"], r["peak_batch_mib"])
                 for r in rows]))
    return {"env": env, "rows": rows}


if __name__ == "__main__":
    main(sys.argv[1:])
