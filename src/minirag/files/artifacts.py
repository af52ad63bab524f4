"""The shipped artifacts in data/models/: where they are, how they are fingerprinted, loading.

What it is: paths, the KB fingerprint the MANIFEST records, and the loader of the project
tokenizer that every stage shares. What it leaves out: training (minirag/training/build.py
builds the artifacts). Follows DESIGN §5.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from functools import lru_cache
from pathlib import Path

from minirag.files.kb import DEFAULT_KB, REPO_ROOT, KBError, kb_files
from minitokenizer import BPETokenizer
from minitokenizer.atomic import atomic_write

MODELS_DIR = REPO_ROOT / "data" / "models"
TOKENIZER_PATH = MODELS_DIR / "tokenizer.json"
MANIFEST_PATH = MODELS_DIR / "MANIFEST.json"


class ArtifactError(ValueError):
    """A missing, truncated or tampered artifact; the message names the file and the fix."""


def kb_sha256(root: Path = DEFAULT_KB) -> str:
    """sha256 over every KB file's doc id and bytes, in doc-id order: the KB's version."""
    h = hashlib.sha256()
    root = Path(root)
    for path in kb_files(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def read_manifest(path: Path = MANIFEST_PATH) -> dict:
    """MANIFEST.json as a dict ({} when there is none yet)."""
    if not Path(path).is_file():
        return {}
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ArtifactError(f"{path}: not valid JSON ({e}); run `make models`") from None


def write_manifest(manifest: dict, path: Path = MANIFEST_PATH) -> None:
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    atomic_write(Path(path), lambda f: f.write(text.encode()))


def warn_if_kb_changed(artifact: str, kb: Path = DEFAULT_KB) -> None:
    """Warn when the KB no longer matches the one `artifact` was trained on (DESIGN §5)."""
    entry = read_manifest().get(artifact, {})
    try:
        current = kb_sha256(kb)
    except KBError:
        return
    if entry.get("kb_sha256") and entry["kb_sha256"] != current:
        warnings.warn(f"{artifact} was trained on another version of the KB; "
                      "run `make models` to retrain it", stacklevel=2)


@lru_cache(maxsize=4)
def load_tokenizer(path: Path = TOKENIZER_PATH) -> BPETokenizer:
    """The project tokenizer (cached per path); missing or broken -> ArtifactError."""
    path = Path(path)
    if not path.is_file():
        raise ArtifactError(f"{path}: tokenizer not found; run `make models` to build it")
    return BPETokenizer.load(path)
