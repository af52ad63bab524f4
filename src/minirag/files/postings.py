"""A BM25 index on disk: its postings arrays and vocabulary, in one checked directory.

What it is: the format behind `BM25Index.save` and `BM25Index.load` (bm25.py). A directory
holds indptr.npy, doc.npy, tf.npy and doc_len.npy (the postings, CSR by term), vocab.json (the
terms in id order), chunks.jsonl (written and read by bm25.py, as chunk.py says), and
manifest.json (format, version, BM25's parameters, the chunk count and every file's sha256).
When read, it is checked twice: file by file against the sums, then as a whole, since the
postings must add up to the lengths. It sits below chunk.py, so it never sees a Chunk.
What it leaves out: IDF and the impacts (recomputed at load from the counts, never stored),
scoring, and pickle. Follows files/persist.py, as the vector stores do.

Letters: N chunks, V distinct terms, P postings.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from minirag.files.persist import (
    check_sha256,
    load_npy,
    read_manifest,
    sha256_file,
)

FORMAT = "minirag.BM25Index"
VERSION = 1
ARRAYS = ("indptr", "doc", "tf", "doc_len")  # the postings arrays a saved index holds, as .npy
PARAMS = ("k1", "b", "idf", "epsilon")  # BM25Index's arguments, kept in the manifest
CHUNKS = "chunks.jsonl"  # the chunks, one JSON line each (chunk.py's write_chunks)
FILES = [f"{n}.npy" for n in ARRAYS] + ["vocab.json", CHUNKS]  # what sha256 covers


def write_postings(tmp: Path, params: dict, arrays: dict[str, np.ndarray], vocab: list[str],
                   count: int) -> None:
    """Into the directory being written (`tmp`, which already holds the CHUNKS of `count`
    chunks): the ARRAYS as .npy, the terms (in id order) as JSON, then the manifest with
    `params` and every file's sha256. `files.persist.write_dir_atomic` makes it atomic."""
    for name in ARRAYS:
        np.save(tmp / f"{name}.npy", arrays[name])
    (tmp / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    manifest = {"format": FORMAT, "version": VERSION, **{p: params[p] for p in PARAMS},
                "count": count, "sha256": {f: sha256_file(tmp / f) for f in FILES}}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def read_postings(path: Path, make, error: type[ValueError]
                  ) -> tuple[object, dict[str, np.ndarray], list[str], int]:
    """(make(**params), arrays, vocab, chunk count) of a directory written by `write_postings`,
    where `make` (BM25Index) judges the params; the CHUNKS file is checked against its sum and
    left for the caller to read. A file that is missing, tampered with or inconsistent, or
    params `make` refuses, raise `error` naming the file."""
    path = Path(path)
    mpath = path / "manifest.json"
    m = read_manifest(mpath, {"format": FORMAT, "version": VERSION}, error)
    if not isinstance(m.get("sha256"), dict):
        raise error(f"{mpath}: bad or missing 'sha256': {m.get('sha256')!r}")
    try:
        made = make(**{p: m[p] for p in PARAMS})
    except (KeyError, TypeError, ValueError) as e:
        raise error(f"{mpath}: bad or missing parameters ({e})") from None
    check_sha256(path, {f: m["sha256"].get(f) for f in FILES}, mpath, error)
    arrays = {n: load_npy(path / f"{n}.npy", error) for n in ARRAYS}
    try:
        vocab = json.loads((path / "vocab.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise error(f"{path}: unreadable index file ({e})") from None
    check_postings(path, arrays, vocab, m["count"], error)
    return made, arrays, vocab, m["count"]


def check_postings(path: Path, a: dict[str, np.ndarray], vocab, count: int,
                   error: type[ValueError]) -> None:
    """The postings must describe `count` chunks and `len(vocab)` terms consistently."""
    ip, doc, tf, dl = a["indptr"], a["doc"], a["tf"], a["doc_len"]  # [V + 1], [P], [P], [N]
    if not (isinstance(vocab, list) and all(isinstance(t, str) for t in vocab)
            and len(set(vocab)) == len(vocab)):
        raise error(f"{path / 'vocab.json'}: not a list of distinct terms")
    if not (ip.dtype == np.int64 and ip.shape == (len(vocab) + 1,) and ip[0] == 0
            and np.all(np.diff(ip) >= 0)):
        raise error(f"{path / 'indptr.npy'}: not a CSR pointer over {len(vocab)} terms")
    if not (doc.dtype == tf.dtype == np.int32 and dl.dtype == np.int64
            and doc.shape == tf.shape == (ip[-1],) and dl.shape == (count,)):
        raise error(f"{path / 'doc.npy'}, tf.npy, doc_len.npy: wrong dtype or length")
    # each chunk's tf summed over its postings is its length: sum of tf per doc == doc_len
    if len(doc) and (doc.min() < 0 or doc.max() >= count or tf.min() < 1 or
                     not np.array_equal(np.bincount(doc, tf, minlength=count), dl)):
        raise error(f"{path / 'doc.npy'}: postings do not add up to doc_len.npy")
