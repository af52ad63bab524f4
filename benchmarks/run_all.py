"""`make bench`: run every benchmarks/bench_*.py in turn (each prints its own table).

Pass --quick to run each at its small size (what a laptop does in a minute).
"""

import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))  # the benchmarks import their shared helpers (common.py)
    for path in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {path.name} {' '.join(argv)}", flush=True)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        t0 = time.perf_counter()
        module.main(argv)
        print(f"=== {path.name} took {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
