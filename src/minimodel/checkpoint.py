"""Model checkpoints as .npz: named float arrays plus one JSON header, never a pickle.

What it is: `save_params` writes every parameter array and a header (format name and
version, the config, a sha256 over the arrays) to a temp file, then renames it into place,
so a crash never leaves a half-written checkpoint. `load_params` reads with
`allow_pickle=False` and turns every way a file can be wrong (truncated, tampered, another
format, another tokenizer) into a `CheckpointError` that names the file.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np

from minitokenizer.atomic import atomic_write

FORMAT = "minigpt"
FORMAT_VERSION = 1
_HEADER = "__header__"  # the npz entry holding the JSON header (a 0-d unicode array)
_NPZ_MAGIC = b"PK\x03\x04"  # an .npz is a zip archive: every one starts with these bytes


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file and the reason."""


def params_sha256(params: dict[str, np.ndarray]) -> str:
    """sha256 over the names, dtypes, shapes and bytes of the arrays, in name order."""
    h = hashlib.sha256()
    for name in sorted(params):
        a = np.ascontiguousarray(params[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_params(path, params: dict[str, np.ndarray], config: dict, fmt: str = FORMAT) -> None:
    """Write `params` and a header naming the format `fmt` (MiniGPT's by default; other
    models of the course, the bi-encoder say, store theirs the same way)."""
    if _HEADER in params:
        raise ValueError(f"{_HEADER!r} is reserved")
    header = {"format": fmt, "version": FORMAT_VERSION, "config": config,
              "sha256": params_sha256(params)}
    arrays = {_HEADER: np.array(json.dumps(header, sort_keys=True)), **params}
    atomic_write(path, lambda f: np.savez(f, **arrays))


def load_params(path, tokenizer_sha256: str | None = None, fmt: str = FORMAT
                ) -> tuple[dict[str, np.ndarray], dict]:
    """Return (params, config dict) of a file in format `fmt`. `tokenizer_sha256`: the
    fingerprint the caller's tokenizer has; a checkpoint trained with another is refused."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        with open(path, "rb") as f:
            if f.read(4) != _NPZ_MAGIC:  # else NumPy's own error would suggest unpickling it
                raise zipfile.BadZipFile("not an .npz archive")
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(str(z[_HEADER][()]))
            params = {k: z[k] for k in z.files if k != _HEADER}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{path}: unreadable or not a {fmt} checkpoint ({e})") from e
    if not isinstance(header, dict) or header.get("format") != fmt:
        raise CheckpointError(f"{path}: not a {fmt} checkpoint")
    if header.get("version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: format version {header.get('version')} is not "
                              f"{FORMAT_VERSION}; re-train or convert it")
    if params_sha256(params) != header.get("sha256"):
        raise CheckpointError(f"{path}: checksum mismatch, the parameters were modified")
    config = header.get("config")
    if not isinstance(config, dict):
        raise CheckpointError(f"{path}: header has no config")
    if tokenizer_sha256 is not None and config.get("tokenizer_sha256") != tokenizer_sha256:
        raise CheckpointError(f"{path}: trained with tokenizer {config.get('tokenizer_sha256')!r}"
                              f", not the given one {tokenizer_sha256!r}")
    return params, config


def load_model(cls, config_cls, path, tokenizer_sha256: str | None = None,
               kind: str | None = None):
    """`cls(config_cls(**config), params=...)` from a checkpoint of a MiniGPT or of a model on
    its trunk whose header says `kind` (its save puts {"kind": ..., **config} there). Any file
    whose arrays are not exactly the names, shapes and dtypes `cls(config)` has is refused."""
    params, config = load_params(path, tokenizer_sha256)
    if config.pop("kind", None) != kind:
        raise CheckpointError(f"{path}: not a {kind or 'MiniGPT'} checkpoint")
    try:
        config = config_cls(**config)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: bad config in the header ({e})") from e
    fresh = cls(config).params  # the names, shapes and dtypes this config implies
    spec = {k: (v.shape, v.dtype) for k, v in fresh.items()}
    if {k: (v.shape, v.dtype) for k, v in params.items()} != spec:
        raise CheckpointError(f"{path}: parameter names, shapes or dtypes do not match "
                              "the config in the file")
    return cls(config, params=params)
