"""A MiniGPT trunk with a small head of its own: what SpanReader and RelevanceModel share.

What it is: `TrunkWithHead` holds the trunk (`self.gpt`) and one params dict with the trunk's
arrays and the head's; a subclass names its head's arrays and shapes (`head_shapes`) and its
checkpoint kind (`KIND`). Head weights (".w") start at N(0, 0.02) from their own generator,
biases (".b") at 0; `no_decay`, `astype`, `save` and `load` are the same for every head.
What it leaves out: the head's forward and backward (each subclass writes its own).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .checkpoint import load_model, save_params
from .mini_gpt import MiniGPT, MiniGPTConfig


class TrunkWithHead:
    KIND = ""  # the checkpoint's "kind": a file of one head is refused by another

    @staticmethod
    def head_shapes(config: MiniGPTConfig) -> dict[str, tuple[int, ...]]:
        raise NotImplementedError

    def __init__(self, config: MiniGPTConfig, seed: int = 0, params: dict | None = None):
        self.gpt = MiniGPT(config, seed=seed, params=params)
        self.config = config
        self.params = self.gpt.params  # one dict: the trunk's arrays and the head's
        if params is None:
            rng = np.random.default_rng([seed, 1])  # the head's own draws: the trunk's stay
            for name, shape in self.head_shapes(config).items():
                w = rng.normal(0.0, 0.02, shape) if name.endswith(".w") else np.zeros(shape)
                self.params[name] = w.astype(config.dtype)

    def no_decay(self) -> set[str]:
        return self.gpt.no_decay() | {n for n in self.head_shapes(self.config) if n.endswith(".b")}

    def astype(self, dtype: str):
        return type(self)(replace(self.config, dtype=dtype),
                          params={k: v.astype(dtype) for k, v in self.params.items()})

    def save(self, path) -> None:
        save_params(path, self.params, {"kind": self.KIND, **vars(self.config)})

    @classmethod
    def load(cls, path, tokenizer_sha256: str | None = None):
        return load_model(cls, MiniGPTConfig, path, tokenizer_sha256, kind=cls.KIND)
