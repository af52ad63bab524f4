"""`make models`: rebuild every shipped artifact in data/models/ and its MANIFEST entry.

Deterministic: the same KB and code give the same bytes (DESIGN §5). The vocabulary size
was chosen by measurement (lab 05, theory/06): see VOCAB_SIZE.
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

from minirag.files.artifacts import (
    MANIFEST_PATH,
    TOKENIZER_PATH,
    kb_sha256,
    load_tokenizer,
    read_manifest,
    write_manifest,
)
from minirag.files.kb import DEFAULT_KB, read_kb
from minirag.files.special_tokens import SPECIAL_TOKENS
from minitokenizer import BPETokenizer

VOCAB_SIZE = 2048  # merges + 256 bytes + specials; the measurement is in theory/06


def kb_text(kb: Path = DEFAULT_KB) -> str:
    """The training text of the tokenizer: every KB document, in doc-id order."""
    return "\n\n".join(d.text for d in read_kb(kb))


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.split()) >= 3]


def build_tokenizer(kb: Path = DEFAULT_KB, vocab_size: int = VOCAB_SIZE,
                    out: Path = TOKENIZER_PATH) -> dict:
    """Train the project tokenizer on the KB, save it, and return its MANIFEST entry."""
    text = kb_text(kb)
    t0 = time.perf_counter()
    tok = BPETokenizer.train(text, vocab_size, SPECIAL_TOKENS)
    seconds = time.perf_counter() - t0
    tok.save(out)
    load_tokenizer.cache_clear()
    sents = sentences(text)
    return {"file": Path(out).name, "sha256": hashlib.sha256(Path(out).read_bytes()).hexdigest(),
            "kb_sha256": kb_sha256(kb), "vocab_size": vocab_size,
            "special_tokens": SPECIAL_TOKENS, "train_seconds": round(seconds, 2),
            "tokens_per_kb_sentence": round(
                sum(tok.token_count(s) for s in sents) / len(sents), 2)}


def build_biencoder() -> dict:
    from minirag.training.encoder_train import build_biencoder as build
    return build()


def build_reader() -> dict:
    from minirag.training.reader_train import build_reader as build
    return build()


# in dependency order: the encoder and the reader both use the tokenizer
BUILDERS = {"tokenizer": build_tokenizer, "biencoder": build_biencoder, "reader": build_reader}


def build(names: list[str], log=print) -> dict:
    """Build the named artifacts in order ("all" = every one), updating MANIFEST.json."""
    for name in (list(BUILDERS) if "all" in names else names):
        log(f"building {name} ...")
        entry = BUILDERS[name]()
        manifest = read_manifest(MANIFEST_PATH)  # read now: a build can take many minutes
        manifest[name] = entry
        write_manifest(manifest, MANIFEST_PATH)
        log(f"  {name}: {entry}")
    return read_manifest(MANIFEST_PATH)
