"""The bi-encoder's file: its arrays and a JSON header in one .npz, written atomically, checked
on the way back in (minimodel.checkpoint's format: no pickle, a sha256 over the arrays).

What it is: the three steps MiniBiEncoder.save/load run, apart from the model so that the
model's file stays about the model: write, read with every check that needs no model, and
the check that the arrays fit the model the header's config builds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from minimodel.checkpoint import CheckpointError, load_params, save_params
from minirag.files.artifacts import ArtifactError

FORMAT = "minirag.biencoder"  # the format name in its checkpoint header (minimodel.checkpoint)


class BiEncoderError(ArtifactError):
    """A bi-encoder file that cannot be used; the message names the file."""


def save_arrays(path, arrays: dict[str, np.ndarray], config: dict) -> None:
    save_params(path, arrays, config, fmt=FORMAT)


def read_arrays(path, tokenizer) -> tuple[dict[str, np.ndarray], dict]:
    """(arrays, config without the tokenizer's fingerprint) of a bi-encoder file made with
    `tokenizer`; a missing, truncated, tampered or foreign file is a BiEncoderError."""
    path = Path(path)
    if not path.is_file():
        raise BiEncoderError(f"{path}: bi-encoder not found; run `minirag train encoder`")
    try:
        arrays, config = load_params(path, tokenizer.fingerprint, fmt=FORMAT)
    except CheckpointError as e:
        raise BiEncoderError(str(e)) from None
    config.pop("tokenizer_sha256", None)
    return arrays, config


def check_arrays(path, arrays: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    """The file's arrays must be exactly `want`'s names, shapes and dtypes (the model its
    config builds), or BiEncoderError."""
    if set(arrays) != set(want):
        raise BiEncoderError(f"{path}: arrays {sorted(arrays)}, the config says {sorted(want)}")
    for name, w in want.items():
        if arrays[name].shape != w.shape or arrays[name].dtype != w.dtype:
            raise BiEncoderError(f"{path}: {name} is {arrays[name].dtype} "
                                 f"{arrays[name].shape}, the config says {w.shape}")
