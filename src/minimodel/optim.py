"""AdamW, gradient clipping by global norm, and a cosine learning-rate schedule with warm-up.

What it is: the optimizer nanoGPT uses, written over a flat dict of NumPy arrays.
Follows Loshchilov & Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019): the decay
shrinks the weights directly instead of being added to the gradient, so Adam's per-parameter
scaling does not weaken it. Parameters named in `no_decay` (LayerNorm gains, biases and the
embeddings, as MiniGPT.no_decay() lists them) are never decayed: pulling a gain toward 0 or
a token's vector toward the origin is not the regularisation we want.
What it leaves out: parameter groups beyond decay / no decay, AMSGrad, fused updates.
"""

from __future__ import annotations

import math

import numpy as np


class AdamW:
    """Example (one step from zero state, lr 0.1, no decay): p = 1.0, g = 0.5 gives
    m = 0.05, v = 0.0125, m_hat = 0.5, v_hat = 0.25, p <- 1.0 - 0.1 * 0.5 / 0.5 = 0.9."""

    def __init__(self, params: dict[str, np.ndarray], lr=1e-3, betas=(0.9, 0.95), eps=1e-8,
                 weight_decay=0.1, no_decay: set[str] | frozenset[str] = frozenset()):
        self.params = params  # name -> array, updated in place
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.no_decay = set(no_decay)
        unknown = self.no_decay - params.keys()
        if unknown:
            raise ValueError(f"no_decay names unknown parameters: {sorted(unknown)}")
        self.m = {k: np.zeros_like(v) for k, v in params.items()}  # first moment, like params
        self.v = {k: np.zeros_like(v) for k, v in params.items()}  # second moment, like params
        self.t = 0  # steps taken

    def step(self, grads: dict[str, np.ndarray], lr: float | None = None) -> None:
        """One update of every parameter from `grads` (same names); `lr` overrides self.lr."""
        lr = self.lr if lr is None else lr
        b1, b2 = self.betas
        self.t += 1
        c1, c2 = 1.0 - b1**self.t, 1.0 - b2**self.t  # bias corrections: m, v start at 0
        for k, p in self.params.items():
            g = grads[k]  # same shape as p
            self.m[k] = b1 * self.m[k] + (1.0 - b1) * g  # m = b1 m + (1 - b1) g
            self.v[k] = b2 * self.v[k] + (1.0 - b2) * g * g  # v = b2 v + (1 - b2) g^2
            if self.weight_decay and k not in self.no_decay:
                p *= 1.0 - lr * self.weight_decay  # decoupled decay: p <- p - lr wd p
            # p <- p - lr m_hat / (sqrt(v_hat) + eps), m_hat = m / c1, v_hat = v / c2
            p -= lr * (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + self.eps)


def clip_grad_norm(grads: dict[str, np.ndarray], max_norm: float) -> float:
    """Scale every gradient by min(1, max_norm / ||g||), where ||g|| is the norm of all
    gradients concatenated; in place. Returns the norm before clipping (worth logging)."""
    total = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if total > max_norm:
        scale = max_norm / (total + 1e-12)
        for g in grads.values():
            g *= scale
    return total


def cosine_lr(step: int, max_lr: float, warmup: int, total: int, min_lr: float = 0.0) -> float:
    """Linear warm-up from max_lr / warmup to max_lr over `warmup` steps, then a half cosine
    down to min_lr at step `total`, flat after. Example: cosine_lr(0, 1.0, 10, 100) -> 0.1"""
    if step < warmup:
        return max_lr * (step + 1) / warmup
    if step >= total:
        return min_lr
    progress = (step - warmup) / max(1, total - warmup)  # 0 -> 1 along the decay
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
