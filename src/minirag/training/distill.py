"""Distilling the teacher (all-MiniLM-L6-v2) into the MiniBiEncoder: what it is taught, cached.

What it is: everything the bi-encoder's training needs from the teacher, computed once per
build and cached under .cache/teacher/ (keyed by the teacher's fingerprint and the exact texts):
- the vocabulary pass: each id of the tower through the teacher. A BPE token is embedded as
  its text (" swim" -> "swim"); a word bucket as the mean of the words that hash to it, the
  KB's multi-token words and the teacher's own whole words (so a word the KB never shows, but
  a query may, still lands in a bucket that means something). encoder_init.teacher_init
  reduces these to the tower's width;
- the teacher's embeddings of every chunk and every training query, the targets of the
  similarity loss (encoders/layers.sim_mse_forward);
- teacher-mined hard negatives: the teacher's top chunks for a query outside its section.
The shipped encoder needs none of this at run time: it is NumPy only.
What it leaves out: distilling from a cross-encoder; texts beyond the KB and its queries.
Follows Model2Vec (the vocabulary pass) and Reimers and Gurevych 2020 (matching a teacher).

Shape letters: n texts, N chunks, V + K the tower's ids, E the teacher's width (384).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minirag.chunk import Chunk, search_text
from minirag.encoders.biencoder import MiniBiEncoder
from minirag.encoders.words import normalise, word_bucket
from minirag.index.cache import CACHE_DIR
from minitokenizer.atomic import atomic_write

TEACHER_CACHE = CACHE_DIR.parent / "teacher"  # .cache/teacher/<key>.npy
_WORD = re.compile(r"[a-z]{2,}")  # a teacher vocabulary entry that is a whole word


def teacher_vectors(texts: list[str], teacher, cache_dir: Path = TEACHER_CACHE) -> np.ndarray:
    """teacher.embed(texts) [n, E] float32, from the cache when the same teacher has embedded
    the same texts before (key: sha256 of its fingerprint and the texts), else computed and
    cached (minitokenizer's atomic write: a temp file of our own, then os.replace)."""
    h = hashlib.sha256(teacher.config["fingerprint"].encode())
    for t in texts:
        h.update(t.encode("utf-8") + b"\x00")
    path = Path(cache_dir) / f"{h.hexdigest()[:24]}.npy"
    if path.is_file():
        try:
            X = np.load(path, allow_pickle=False)  # [n, E]
            if X.shape[0] == len(texts):
                return X
        except (OSError, ValueError):
            pass  # a broken cache file is recomputed, never trusted
    X = np.ascontiguousarray(teacher.embed(list(texts)), dtype=np.float32)  # [n, E]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: np.save(f, X))
    return X


def vocab_items(model: MiniBiEncoder, texts: list[str], words: list[str] = ()
                ) -> list[list[str]]:
    """What the teacher reads for each id of the tower: [V + K] lists of texts.

    A BPE id: its own text, stripped, if it holds a letter or digit (" swim" -> ["swim"]).
    A word bucket: the words of 2+ BPE tokens, of `texts` (the KB) and of `words` (the
    teacher's vocabulary), whose token ids hash to it, sorted. An empty list: no vector.
    """
    items: list[list[str]] = []
    for i, b in enumerate(model.tokenizer.vocab):
        text = b.decode("utf-8", errors="ignore").strip()
        ok = model.idf[i] > 0 and re.search(r"[a-z0-9]", text.lower())
        items.append([text] if ok else [])
    buckets: list[set[str]] = [set() for _ in range(model.cfg.word_buckets)]
    vocab = {w for t in texts for w in normalise(t).split()} | set(words)
    for w in sorted(vocab):
        ids = model.tokenizer.encode(" " + w)
        if len(ids) > 1 and model.cfg.word_buckets:
            buckets[word_bucket(ids, model.cfg.word_buckets)].add(w)
    return items + [sorted(b) for b in buckets]


def item_vectors(items: list[list[str]], teacher, cache_dir: Path = TEACHER_CACHE
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(vectors [V + K, E], known [V + K] bool): each id's teacher vector, the mean of its
    texts' (a bucket of several words holds their average meaning); 0 and False if none."""
    texts = sorted({t for its in items for t in its})
    row = {t: i for i, t in enumerate(texts)}
    T = teacher_vectors(texts, teacher, cache_dir) if texts else np.zeros((0, 1))  # [n, E]
    out = np.zeros((len(items), T.shape[1]), dtype=np.float32)  # [V + K, E]
    for i, its in enumerate(items):
        if its:
            out[i] = T[[row[t] for t in its]].mean(axis=0)
    return out, np.array([bool(its) for its in items])


def teacher_words(teacher) -> list[str]:
    """The teacher's whole-word vocabulary entries (WordPiece's, no "##" pieces), sorted."""
    return sorted(w for w in teacher.encoder.tokenizer.vocab if _WORD.fullmatch(w))


def mined_negatives(query_t: np.ndarray, chunk_t: np.ndarray, gold: np.ndarray,
                    section: np.ndarray, k: int = 3) -> list[list[int]]:
    """For each query, the teacher's k best chunks outside its gold chunk's section.
    query_t [n, E], chunk_t [N, E] unit rows; gold [n] chunk index; section [N] ids.
    Example: the teacher ranks chunks [4, 1, 7] for a query of chunk 1 (section of 4 and 1
    the same) -> [7, ...]."""
    S = query_t @ chunk_t.T  # [n, E] @ [E, N] -> [n, N]
    S[section[None, :] == section[gold][:, None]] = -np.inf  # the gold section is no negative
    top = np.argsort(-S, axis=1, kind="stable")[:, :k]  # [n, k]
    return [[int(c) for c in row] for row in top]


@dataclass
class TeacherData:
    start: np.ndarray  # [V + K, C] the distilled token table training stays near
    query_t: np.ndarray  # [n_pairs, E] the teacher's vector of each training query
    chunk_t: np.ndarray  # [N, E] the teacher's vector of each chunk (as indexed)
    negatives: list[list[int]]  # [n_pairs][k] teacher-mined hard negatives


def prepare(model: MiniBiEncoder, chunks: list[Chunk], queries: list[str], gold: np.ndarray,
            section: np.ndarray, k: int = 3, lsa_dims: int = 0,
            cache_dir: Path = TEACHER_CACHE) -> TeacherData:
    """Set the model's IDF and distilled start, and return the teacher's targets: the one
    place a build loads the teacher (TeacherMissing, a ValueError, if it is not installed)."""
    from minirag.encoders.minilm import MiniLMEmbedder
    from minirag.training.encoder_init import teacher_init

    teacher = MiniLMEmbedder()
    texts = [search_text(c) for c in chunks]
    id_lists = [model.token_ids(t) for t in texts]
    vectors, known = item_vectors(vocab_items(model, texts, teacher_words(teacher)), teacher,
                                  cache_dir)
    model.set_idf(id_lists, known)
    start = teacher_init(model, vectors, known, id_lists, lsa_dims)
    chunk_t = teacher_vectors(texts, teacher, cache_dir)  # [N, E]
    query_t = teacher_vectors(queries, teacher, cache_dir)  # [n, E]
    return TeacherData(start, query_t, chunk_t,
                       mined_negatives(query_t, chunk_t, gold, section, k))
