"""Build the searchable index of a knowledge base, and cache it under .cache/.

What it is: KB folder -> chunks -> (embedder, FlatVectorStore, BM25Index), persisted under
`.cache/index/<key>/` where the key hashes the KB's bytes and the whole configuration, so an
edited KB or a new chunk size rebuilds and an unchanged one loads in milliseconds. A corrupted
cache is rebuilt with a warning, never trusted and never a crash. Follows DESIGN §5.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from minirag.bm25 import BM25Index, tokenize
from minirag.chunk import Chunk, load_kb, search_text
from minirag.embed import Embedder, HashingEmbedder
from minirag.files.artifacts import ArtifactError, kb_sha256, load_tokenizer
from minirag.files.kb import DEFAULT_KB, REPO_ROOT
from minirag.store import FlatVectorStore

# where cached indexes live; MINIRAG_CACHE_DIR moves them (the test suite points it at a tmp dir)
CACHE_DIR = Path(os.environ.get("MINIRAG_CACHE_DIR", REPO_ROOT / ".cache")) / "index"
EMBEDDERS = ("hashing", "biencoder", "minilm")
FORMAT_VERSION = 3  # bump when what gets indexed changes: old caches then rebuild


@dataclass(frozen=True)
class IndexConfig:
    embedder: str = "hashing"  # "hashing" (the control), "biencoder" (trained, data/models)
    # or "minilm" (the pretrained teacher, `make teacher`)
    target_tokens: int = 150  # chunk size in BPE tokens (DESIGN §3 chunk)
    overlap: int = 20  # tokens shared by consecutive chunks of a section


@dataclass
class Index:
    chunks: list[Chunk]
    embedder: Embedder
    store: FlatVectorStore
    bm25: BM25Index
    key: str  # the cache key: sha256 of the KB hash and the config
    loaded_from_cache: bool = False


def make_embedder(name: str, texts: list[str]) -> Embedder:
    """The named embedder, fitted on the indexed texts where it learns from the corpus (IDF)."""
    if name == "hashing":
        return HashingEmbedder().fit(texts)
    if name == "biencoder":
        from minirag.encoders.biencoder import load_biencoder
        return load_biencoder()
    if name == "minilm":
        from minirag.encoders.minilm import MiniLMEmbedder
        return MiniLMEmbedder()
    raise ValueError(f"embedder {name!r} is not one of {', '.join(EMBEDDERS)}")


def cache_key(kb: Path, config: IndexConfig) -> str:
    tok = load_tokenizer()
    parts = {"kb": kb_sha256(kb), "config": config.__dict__, "tokenizer": tok.fingerprint,
             "format": FORMAT_VERSION}
    if config.embedder == "biencoder":
        from minirag.encoders.biencoder import BIENCODER_PATH
        parts["biencoder"] = hashlib.sha256(BIENCODER_PATH.read_bytes()).hexdigest()
    if config.embedder == "minilm":
        from minirag.encoders.minilm import teacher_fingerprint
        parts["minilm"] = teacher_fingerprint()
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def build_index(kb: Path = DEFAULT_KB, config: IndexConfig = IndexConfig(), key: str = ""
                ) -> Index:
    """Chunk, embed and index every file of `kb` (no cache)."""
    chunks = load_kb(Path(kb), config.target_tokens, config.overlap, load_tokenizer())
    texts = [search_text(c) for c in chunks]  # title and section header + the chunk's text
    embedder = make_embedder(config.embedder, texts)
    store = FlatVectorStore(embedder)
    store.add_vectors(chunks, embedder.embed(texts))
    bm25 = BM25Index()
    bm25.add_tokens(chunks, [tokenize(t) for t in texts])
    return Index(chunks, embedder, store, bm25, key or cache_key(Path(kb), config))


def load_or_build_index(kb: Path = DEFAULT_KB, config: IndexConfig = IndexConfig(),
                        cache_dir: Path = CACHE_DIR) -> Index:
    """The cached index for (kb, config) if it is intact, else a fresh build that is cached."""
    kb = Path(kb)
    key = cache_key(kb, config)
    folder = Path(cache_dir) / key
    if folder.is_dir():
        try:
            bm25 = BM25Index.load(folder / "bm25")
            chunks = bm25.chunks
            embedder = make_embedder(config.embedder, [search_text(c) for c in chunks])
            store = FlatVectorStore.load(folder / "store", embedder)
            return Index(chunks, embedder, store, bm25, key, loaded_from_cache=True)
        except (ValueError, OSError, KeyError) as e:
            warnings.warn(f"index cache {folder} is unusable ({e}); rebuilding it", stacklevel=2)
            shutil.rmtree(folder, ignore_errors=True)
    index = build_index(kb, config, key)
    folder.parent.mkdir(parents=True, exist_ok=True)
    # subtle: a temp folder of this process's own. Two processes that build the same index at
    # once (a notebook beside `make eval`) once shared "<key>.tmp" and deleted each other's files.
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=folder.parent))
    try:
        index.store.save(tmp / "store")
        index.bm25.save(tmp / "bm25")
        tmp.rename(folder)  # the folder appears whole or not at all
    except OSError:
        if not folder.is_dir():
            raise
        # another process cached the same (kb, config) first: same bytes, keep theirs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return index


__all__ = ["ArtifactError", "Index", "IndexConfig", "build_index", "load_or_build_index"]
