"""Shared benchmark helpers: the environment report, median timings, peak memory, a table.

DESIGN §7's rules live here: medians over >= 100 calls after a warm-up, the BLAS kernel printed
(threadpoolctl), and the OpenBLAS variables that change it printed too.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence

import numpy as np

BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def environment(**versions: str) -> dict:
    """Print (and return) Python, NumPy, CPU count, every BLAS/OpenMP pool, and the env vars."""
    env = {"python": platform.python_version(), "numpy": np.__version__,
           "machine": platform.machine(), "cpus": os.cpu_count(), **versions,
           "env": {v: os.environ.get(v) for v in BLAS_VARS}}
    try:
        from threadpoolctl import threadpool_info
        env["pools"] = [f"{p.get('internal_api')} {p.get('version')} "
                        f"kernel={p.get('architecture', '-')} threads={p['num_threads']} "
                        f"({os.path.basename(p['filepath'])})" for p in threadpool_info()]
    except ImportError:
        env["pools"] = ["threadpoolctl not installed"]
    print(f"python {env['python']} | numpy {env['numpy']} | {env['machine']} "
          f"| {env['cpus']} cpus | " + " | ".join(f"{k} {v}" for k, v in versions.items()))
    for pool in env["pools"]:
        print(f"  pool: {pool}")
    print("  env: " + ", ".join(f"{k}={v}" for k, v in env["env"].items()), file=sys.stdout)
    return env


def median_ms(fns: dict[str, Callable], inputs: Sequence, warmup: int = 10) -> dict[str, float]:
    """Median wall time of each fn(x) over `inputs`, in ms, after `warmup` untimed calls each.

    The functions take turns on every input, so a burst of load from another process hits
    them alike instead of whichever happened to be running.
    """
    for x in inputs[:warmup]:
        for fn in fns.values():
            fn(x)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for x in inputs:
        for name, fn in fns.items():
            t = time.perf_counter()
            fn(x)
            times[name].append(time.perf_counter() - t)
    return {name: 1e3 * statistics.median(ts) for name, ts in times.items()}


def best_ms(fn: Callable[[], object], repeats: int = 3) -> float:
    """Fastest of `repeats` runs of fn(), in ms (for one-off costs such as an index build)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * min(times)


def peak_mib(fn: Callable[[], object]) -> float:
    """Peak memory newly allocated while fn() runs, in MiB (NumPy reports to tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def table(headers: Sequence[str], rows: Iterable[Sequence]) -> str:
    """A plain-text table, columns right-aligned except the first; floats to 3 significant."""
    def fmt(v):
        return f"{v:.3g}" if isinstance(v, float) else str(v)
    cells = [list(map(str, headers))] + [[fmt(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [" ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                      enumerate(zip(r, widths, strict=True))) for r in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)
