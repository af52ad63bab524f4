"""The k best of N scores: the plain way, then the fast way, with the same exact answer.

What it is: `top_k_plain(s, k)`, one argpartition of all N scores then a sort of the k kept
(ties by lower index); `top_k(s, k)`, which first keeps only the scores above a threshold read
off a sample of them, so that at N = 10^5..10^6 it ranks a few thousand instead of N; and
`top_k_rows(Q, V, k)`, the vector store's search: scores of queries against rows, then the k
best of each, reading V once for a whole batch. What it leaves out: approximate search.
The speed against faiss: benchmarks/bench_store.py (quoted in theory/02).

Letters: N rows (stored vectors), d dimensions, m queries, k results.
"""

from __future__ import annotations

import numpy as np

from minirag.files.persist import StoreError

SAMPLE = 4096  # scores sampled per query to pick the top-k threshold (see top_k)
SORT_MAX = 4096  # top_k sorts at most this many candidates; more are partitioned first
BLOCK_BYTES = 2 << 20  # score block budget for batched search: 2 MiB of float32
SLACK = 1e-4  # a batch's threshold is lowered by this: two BLAS calls may round one dot apart


def check_k(k) -> int:
    """k as an int; anything but an integer >= 1 is a StoreError naming it."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise StoreError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def top_k_plain(s: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores of s [N], best first, ties by lower index: one
    argpartition of all N scores, then a sort of the k it keeps.
    Example: top_k_plain(np.array([0.1, 0.9, 0.5, 0.9]), 3) -> [1, 3, 2]"""
    k = min(k, len(s))
    part = np.argpartition(-s, k - 1)[:k] if k < len(s) else np.arange(len(s))  # [k] any order
    # subtle: argpartition may cut a tie at the k-th score anywhere; keep the lowest indices
    kth = s[part].min()
    above = np.flatnonzero(s > kth)  # [a <= k] strictly better than the k-th
    tied = np.flatnonzero(s == kth)[: k - len(above)]  # the lowest-index ties fill up to k
    keep = np.concatenate([above, tied])
    return keep[np.lexsort((keep, -s[keep]))]  # by score descending, then index ascending


def top_k(s: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores of s [N], best first, ties by lower index. Exact.

    A full argpartition of N scores costs as much as the mat-vec at N = 10^6, so first shrink
    the candidates: take every step-th score (a sample of <= SAMPLE), let t be the k-th largest
    score in the sample. At least k scores of s are >= t (the sampled ones), so the true top k
    (ties included) all survive `s >= t`; only ~k * step of them do, and those are sorted.
    """
    N = len(s)
    k = min(k, N)
    step = max(8, N // SAMPLE)
    if N // step < 8 * k:  # small N (or huge k): the sample would hold too few scores
        return top_k_plain(s, k)
    sample = s[::step]  # [N / step <= SAMPLE], a strided view
    t = np.partition(sample, len(sample) - k)[len(sample) - k]  # k-th largest sampled score
    cand = np.flatnonzero(s >= t)  # [c] candidate rows, c >= k, ascending
    if len(cand) > SORT_MAX:  # many ties at t (zero rows, integer scores): partition them
        return cand[top_k_plain(s[cand], k)]
    # a few calls on a few candidates: a stable sort of them beats partition's many steps,
    # and as cand ascends, stability breaks ties by lower index
    return cand[np.argsort(-s[cand], kind="stable")[:k]]


def top_k_rows(Q: np.ndarray, V: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each query of Q [m, d], its k best rows of V [N, d]: m (indices [k], scores [k])
    pairs, best first, ties by lower index. Exact: the same answer as top_k_plain(V @ q, k).

    One query: s = V @ q, then `top_k`. A batch: each query's threshold t is its k-th best
    score on a sample of rows (lowered by SLACK), V is scored in blocks of rows, and only the
    scores >= t are kept and ranked, so V is read once however many queries there are.
    """
    N, m = len(V), len(Q)
    if m == 1:
        # subtle: with V column-major (the store keeps it so), `V @ q` is BLAS's sgemv adding
        # q[j] times column j into s, a block of s at a time: V is streamed once, with s in
        # cache. Row-major, the same product (or np.vecdot's one dot per row) reads the
        # matrix more slowly here (benchmarks/bench_store.py, EXPERIMENTS.md)
        s = V @ Q[0]  # [N]
        top = top_k(s, k)
        return [(top, s[top])]
    k = min(k, N)
    step = max(8, N // SAMPLE)
    if N // step < 8 * k:  # too few rows for a sample: score blocks of queries, rank each row
        b = max(1, BLOCK_BYTES // (4 * N))
        return [_ranked(s, k) for a in range(0, m, b) for s in Q[a:a + b] @ V.T]
    # every step-th row, gathered: of a column-major V, V[::step] has no unit stride for BLAS
    sample = Q @ np.ascontiguousarray(V[::step]).T  # [m, N / step]
    n_s = sample.shape[1]
    t = np.partition(sample, n_s - k, axis=1)[:, n_s - k] - SLACK  # [m] thresholds
    # the [m, R] score block stays in budget, small enough to be tested while still in cache
    rows_per_block = max(1, BLOCK_BYTES // (4 * m))
    found = []  # (query, row, score) arrays of the scores that clear their threshold
    for a in range(0, N, rows_per_block):
        S = Q @ V[a:a + rows_per_block].T  # [m, R]
        # flat positions, then (query, row): a 2-D np.nonzero walks the block far more slowly
        qi, ri = np.divmod(np.flatnonzero(S >= t[:, None]), S.shape[1])  # [c], [c]
        found.append((qi, ri + a, S[qi, ri]))
    qi, ri, sc = (np.concatenate(x) for x in zip(*found))
    order = np.lexsort((ri, -sc, qi))  # by query, then score descending, then row
    qi, ri, sc = qi[order], ri[order], sc[order]
    starts = np.searchsorted(qi, np.arange(m + 1))  # query i's candidates: [starts[i], starts[i+1])
    out = []
    for i, (a, b) in enumerate(zip(starts, starts[1:])):
        # subtle: the sampled rows alone clear t, so every query has >= k candidates; should
        # rounding ever say otherwise, that query is scored alone
        out.append((ri[a:a + k], sc[a:a + k]) if b - a >= k else top_k_rows(Q[i:i + 1], V, k)[0])
    return out


def _ranked(s: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    top = top_k(s, k)
    return top, s[top]
