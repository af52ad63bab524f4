"""Text -> unit vectors: the `Embedder` protocol and the HashingEmbedder control."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Anything that turns texts into rows of a float32 matrix, each row unit-norm or zero."""

    name: str  # short name used in config strings and manifests ("hashing", "biencoder")
    d: int  # output dimension

    def embed(self, texts: list[str]) -> np.ndarray:  # [n] -> [n, d] float32
        ...
