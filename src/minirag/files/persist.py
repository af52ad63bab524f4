"""How a saved index lives on disk: a directory written atomically, files checked by sha256.
FlatVectorStore, BM25Index and the FAISS store save and load through it (their chunks as JSON
lines: chunk.write_chunks / read_chunks).

What it leaves out: the formats themselves (each index's manifest.json is its own) and pickle,
which is never used: a tampered file must fail a check, not run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np


class StoreError(ValueError):
    """A bad argument or a bad store on disk; the message names the value or the file."""


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks (a 256 MB matrix never sits in memory twice)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def write_dir_atomic(path: Path, write) -> None:
    """Create directory `path` by calling `write(tmp_dir)`, then renaming tmp_dir into place.

    Nothing is ever half-written at `path`: a crash leaves the old directory there, or the new
    one, or (between the two renames of a replacement) the old one parked beside it. An existing
    `path` is replaced only if it is one of ours (has a manifest.json) or is empty.
    """
    path = Path(path)
    if path.exists() and (not path.is_dir() or
                          (any(path.iterdir()) and not (path / "manifest.json").exists())):
        raise StoreError(f"{path} exists and is not a saved index; refusing to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        write(tmp)
        if path.exists():  # subtle: rename() cannot replace a non-empty directory; swap instead
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))
            os.replace(path, old / "x")
            os.replace(tmp, path)
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_manifest(mpath: Path, expect: dict, error: type[ValueError] = StoreError) -> dict:
    """A saved index's manifest.json: a JSON object whose keys in `expect` equal their values
    and whose "count" is an integer >= 0. Anything else raises `error` naming the file."""
    try:
        m = json.loads(Path(mpath).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise error(f"{mpath}: cannot read ({e})") from None
    if not isinstance(m, dict):
        raise error(f"{mpath}: not a JSON object")
    for key, want in expect.items():
        if m.get(key) != want:
            raise error(f"{mpath}: {key} is {m.get(key)!r}, expected {want!r}")
    count = m.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise error(f"{mpath}: count is {count!r}, expected an integer >= 0")
    return m


def check_sha256(path: Path, sums: dict, mpath: Path, error: type[ValueError] = StoreError
                 ) -> None:
    """Every file named in `sums` (file name -> hex sha256) exists in `path` and matches."""
    for name, want in sums.items():
        f = Path(path) / name
        if not f.is_file() or sha256_file(f) != want:
            raise error(f"{f}: missing or sha256 differs from {mpath}")


def load_npy(path: Path, error: type[ValueError] = StoreError) -> np.ndarray:
    """np.load without pickle; an unreadable file raises `error` naming it."""
    try:
        with open(path, "rb") as f:
            plain = f.read(6) == b"\x93NUMPY"  # the .npy magic
        # without it, NumPy's own error would suggest loading the file as a pickle
        X = np.load(path, allow_pickle=False) if plain else None
    except (OSError, ValueError) as e:
        raise error(f"{path}: not a plain .npy array ({e})") from None
    if X is None:
        raise error(f"{path}: not a plain .npy array (no .npy header)")
    return X
