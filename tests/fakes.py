"""Fakes shared by the isolation tests of the vector stores."""

import numpy as np


class TableEmbedder:
    """A fake embedder: looks each text up in a table of vectors (not normalised on purpose)."""

    name = "table"

    def __init__(self, table: dict[str, list[float]], d: int):
        self.table, self.d = table, d
        self.config = {"entries": len(table)}

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.table[t] for t in texts], dtype=np.float32).reshape(-1, self.d)
