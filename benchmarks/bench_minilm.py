"""all-MiniLM-L6-v2 by our NumPy code (minimodel.teacher) against sentence-transformers on
torch, when that is importable: sentences per second on short and on chunk-long texts.

Texts: the KB's own, two kinds. Lines: its prose lines of 4+ words (~40 WordPiece ids each).
Chunks: `search_text` of the index's chunks (~120 ids each), what `minirag index --embedder
minilm` embeds. Each implementation embeds the whole set once (after a warm-up), with BLAS
(or torch) on 1 and on 2 threads; the max abs difference between the two is printed too. Then
ours on every fifth chunk at three batch sizes.

sentence-transformers and torch are not dependencies of this project: to time them too, use
the throwaway venv tests/fixtures/make_minilm_reference.py describes, with our code on the path
(it times sentence-transformers at its default batch of 32, ours at teacher.BATCH_SIZE):
    PYTHONPATH=src "$ST/bin/python" benchmarks/bench_minilm.py
Run: python benchmarks/bench_minilm.py [--quick]   (full: ~5 min; needs `make teacher`)
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from common import environment, table
from threadpoolctl import threadpool_limits

from minimodel.teacher import BATCH_SIZE, TeacherMissing, load_teacher, teacher_dir
from minirag.chunk import load_kb, search_text
from minirag.files.artifacts import load_tokenizer
from minirag.files.kb import DEFAULT_KB


def kb_texts(n_lines: int, n_chunks: int) -> dict[str, list[str]]:
    lines = [line.strip() for f in sorted(DEFAULT_KB.glob("*.md"))
             for line in f.read_text(encoding="utf-8").split("\n")
             if len(line.split()) >= 4 and not line.startswith(("|", "#"))]
    chunks = [search_text(c) for c in load_kb(DEFAULT_KB, 150, 20, load_tokenizer())]
    return {"KB lines": lines[:n_lines], "KB chunks": chunks[:n_chunks]}


def timed(fn) -> tuple[float, np.ndarray]:
    """Seconds fn() takes, and its output (one run: a whole set takes seconds to a minute)."""
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def theirs():
    """sentence-transformers on the same files, or None if it is not importable."""
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the files are local: never a hub
        # torch's OpenMP threads otherwise spin on the cores for a while after each call,
        # slowing whatever runs next in this process (our rows)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    model = SentenceTransformer(str(teacher_dir()), device="cpu")

    def embed(texts, threads):
        torch.set_num_threads(threads)
        with torch.inference_mode():
            return model.encode(texts, batch_size=32, convert_to_numpy=True)

    return embed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 texts of each kind (~1 min)")
    args = ap.parse_args(argv)
    try:
        ours = load_teacher()
    except TeacherMissing as e:
        print(f"skipped: {e}")
        return
    ref = theirs()
    versions = {}
    if ref is not None:
        import sentence_transformers
        import torch
        versions = {"torch": torch.__version__, "sentence-transformers":
                    sentence_transformers.__version__}
    environment(**versions)
    sets = kb_texts(*((64, 64) if args.quick else (512, 10_000)))
    rows = []
    for name, texts in sets.items():
        n_ids = sum(len(ours.tokenizer.encode(t, ours.max_len)) for t in texts)
        ours.embed(texts[:8])  # warm-up: page in the weights
        for threads in (1, 2):
            with threadpool_limits(threads):
                s, X = timed(lambda t=texts: ours.embed(t))
            rows.append([f"{name} (n={len(texts)}, {n_ids / len(texts):.0f} ids): ours",
                         threads, len(texts) / s, n_ids / s, s, "-"])
            if ref is not None:
                ref(texts[:8], threads)
                s, R = timed(lambda t=texts, k=threads: ref(t, k))
                rows.append([f"{name}: sentence-transformers", threads, len(texts) / s,
                             n_ids / s, s, f"{np.abs(X - R).max():.1e}"])
    print(table(["texts: implementation", "threads", "sentences/s", "ids/s", "seconds",
                 "max |ours - theirs|"], rows))

    # ours on the chunks by batch size (teacher.BATCH_SIZE is the default), one BLAS thread
    texts, sweep = sets["KB chunks"][::5], []
    for batch in (1, 8, 32):
        with threadpool_limits(1):
            s, _ = timed(lambda b=batch: ours.embed(texts, b))
        sweep.append([f"batch {batch}" + (" (default)" if batch == BATCH_SIZE else ""),
                      len(texts) / s, s])
    print("\n" + table(["ours, KB chunks, 1 thread", "sentences/s", "seconds"], sweep))


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
