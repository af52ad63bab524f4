"""The layers of a GPT, each a `forward(...) -> (out, cache)` / `backward(dout, cache)` pair.

What it is: embedding, LayerNorm, linear, GELU, dropout, causal multi-head self-attention
(with an optional KV cache for generation), the GELU MLP and softmax cross-entropy, in NumPy.
Every backward is the chain rule written out by hand; tests/test_layers.py checks each one
against central finite differences. What it leaves out: fused kernels, attention dropout,
mixed precision. Follows GPT-2 (tanh GELU, pre-LN) and llm.c's forward/backward pairing.
Derivations: theory/07-minigpt-reader.md.

Shape letters: B batch, T query positions, S key positions (S = T in training; past + T when
generating with a KV cache), C model width, H heads, D = C / H head size, F = 4C MLP width,
V vocab, N = B * T rows.
"""

from __future__ import annotations

import math

import numpy as np

# ---------------------------------------------------------------------------------- embedding


def embedding_forward(ids, w):
    """Look up rows of `w`. Example: embedding_forward([[2]], np.eye(3))[0] -> [[[0., 0., 1.]]]"""
    ids = np.asarray(ids)  # [B, T] int
    return w[ids], (ids, w.shape)  # [V, C][B, T] -> [B, T, C]


def embedding_backward(dout, cache):
    # out[b, t] = w[ids[b, t]], so each row of w collects the gradient of every place it was used.
    ids, shape = cache
    dw = np.zeros(shape, dtype=dout.dtype)  # [V, C]
    np.add.at(dw, ids.reshape(-1), dout.reshape(-1, shape[1]))  # scatter-add N rows of [N, C]
    return dw  # [V, C]


# ---------------------------------------------------------------------------------- layernorm


def layernorm_forward(x, g, b, eps=1e-5):
    C = x.shape[-1]
    xc = x - x.sum(axis=-1, keepdims=True) / C  # [..., C] minus the row mean [..., 1]
    var = (xc * xc).sum(axis=-1, keepdims=True) / C  # [..., 1] biased, as in GPT-2
    rstd = 1.0 / np.sqrt(var + eps)  # [..., 1]
    xhat = xc * rstd  # [..., C] zero mean, unit variance per row
    return xhat * g + b, (xhat, rstd, g)  # [..., C]


def layernorm_backward(dout, cache):
    # y = g * xhat + b, xhat = (x - mu) * rstd. With dxhat = dy * g, per row of C entries:
    # dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
    # (the two means are the paths through mu and through rstd).
    xhat, rstd, g = cache
    lead = tuple(range(dout.ndim - 1))  # every axis but the last
    dg = (dout * xhat).sum(axis=lead)  # [C]
    db = dout.sum(axis=lead)  # [C]
    dxhat = dout * g  # [..., C]
    dx = rstd * (
        dxhat  # [..., C]
        - dxhat.mean(axis=-1, keepdims=True)  # [..., 1]
        - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)  # [..., C]
    )  # [..., C]
    return dx, dg, db


# ------------------------------------------------------------------------------------- linear


def linear_forward(x, w, b=None):
    # One 2-D matmul over all rows (BLAS-friendly) instead of a stacked matmul per batch row.
    x2 = x.reshape(-1, x.shape[-1])  # [..., In] -> [N, In]
    out = x2 @ w  # [N, In] @ [In, Out] -> [N, Out]
    if b is not None:
        out = out + b  # [N, Out]
    return out.reshape(*x.shape[:-1], w.shape[1]), (x2, w, x.shape, b is not None)  # [..., Out]


def linear_backward(dout, cache):
    # y = x W + b  =>  dx = dy W^T,  dW = x^T dy,  db = sum over rows of dy.
    x2, w, xshape, has_b = cache
    d2 = dout.reshape(-1, w.shape[1])  # [N, Out]
    dx = (d2 @ w.T).reshape(xshape)  # [N, Out] @ [Out, In] -> [..., In]
    dw = x2.T @ d2  # [In, N] @ [N, Out] -> [In, Out]
    db = d2.sum(axis=0) if has_b else None  # [Out]
    return dx, dw, db


# --------------------------------------------------------------------------------------- GELU

_K = float(np.sqrt(2.0 / np.pi))  # the constant of GPT-2's tanh approximation


def gelu_forward(x):
    # gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
    th = np.tanh(_K * (x + 0.044715 * x * x * x))  # [...] (x * x * x: power() is slow)
    return 0.5 * x * (1.0 + th), (x, th)  # [...]


def gelu_backward(dout, cache):
    # d gelu / dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
    x, th = cache
    local = 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th**2) * _K * (1.0 + 3 * 0.044715 * x**2)  # [...]
    return dout * local  # [...]


# ------------------------------------------------------------------------------------ dropout


def dropout_forward(x, p, rng=None):
    """Inverted dropout: keep each entry with probability 1 - p and scale it by 1 / (1 - p).
    Identity (cache None) when p == 0 or no rng is given, i.e. at inference."""
    if p == 0.0 or rng is None:
        return x, None
    keep = (rng.random(x.shape) >= p).astype(x.dtype) / (1.0 - p)  # [...] 0 or 1/(1-p)
    return x * keep, keep  # [...]


def dropout_backward(dout, cache):
    # y = x * keep with keep fixed by the forward pass  =>  dx = dy * keep.
    return dout if cache is None else dout * cache  # [...]


# ---------------------------------------------------------------------------------- attention


class KVCache:
    """Keys and values of the positions seen so far, one per attention layer, for generation.
    Buffers are allocated once at the full context length; `n` counts the filled positions."""

    def __init__(self, batch, n_head, max_len, head_size, dtype):
        self.k = np.zeros((batch, n_head, max_len, head_size), dtype=dtype)  # [B, H, Tmax, D]
        self.v = np.zeros_like(self.k)  # [B, H, Tmax, D]
        self.n = 0  # positions filled

    def append(self, k, v):
        t = k.shape[2]
        if self.n + t > self.k.shape[2]:
            raise ValueError(f"KV cache full: {self.n} + {t} positions > context {self.k.shape[2]}")
        self.k[:, :, self.n : self.n + t] = k  # [B, H, T, D] into [B, H, Tmax, D]
        self.v[:, :, self.n : self.n + t] = v  # [B, H, T, D]
        self.n += t
        return self.k[:, :, : self.n], self.v[:, :, : self.n]  # [B, H, S, D] each, S = n


def attention_forward(x, w_qkv, b_qkv, w_o, b_o, n_head, kv: KVCache | None = None,
                      causal: bool = True, key_mask=None):
    """Multi-head self-attention, causal by default. With `kv`, the T new positions also attend
    to the positions already in the cache (generation); the cache for backward is then not
    usable. `causal=False`: every position sees every other (an encoder, as BERT's).
    `key_mask` [B, S] bool: False hides a key (padding); a row with no key left sees them all
    (its output is then meaningless, and a padded text's pooling weight is 0 anyway)."""
    B, T, C = x.shape
    D = C // n_head
    qkv, c_qkv = linear_forward(x, w_qkv, b_qkv)  # [B, T, C] -> [B, T, 3C]
    qkv = qkv.reshape(B, T, 3, n_head, D).transpose(2, 0, 3, 1, 4)  # [3, B, H, T, D]
    q, k, v = qkv[0], qkv[1], qkv[2]  # [B, H, T, D] each
    if kv is not None:
        k, v = kv.append(k, v)  # [B, H, S, D]: the past positions, then these T
    S = k.shape[2]
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D)  # [B,H,T,D] @ [B,H,D,S] -> [B,H,T,S]
    if causal:  # query t sits at absolute position (S - T) + t and may see keys j <= that
        future = np.arange(S)[None, :] > np.arange(S - T, S)[:, None]  # [T, S] bool
        scores = np.where(future, -np.inf, scores)  # [B, H, T, S]
    if key_mask is not None:
        keep = np.asarray(key_mask, dtype=bool)  # [B, S]
        keep = keep | ~keep.any(axis=1, keepdims=True)  # a row with no key: see them all
        scores = np.where(keep[:, None, None, :], scores, -np.inf)  # [B, H, T, S]
    att = np.exp(scores - scores.max(axis=-1, keepdims=True))  # [B, H, T, S] (stable softmax)
    att /= att.sum(axis=-1, keepdims=True)  # [B, H, T, S] rows sum to 1, zeros in the future
    y = att @ v  # [B, H, T, S] @ [B, H, S, D] -> [B, H, T, D]
    y = y.transpose(0, 2, 1, 3).reshape(B, T, C)  # re-assemble heads side by side: [B, T, C]
    out, c_o = linear_forward(y, w_o, b_o)  # [B, T, C]
    return out, (c_qkv, c_o, q, k, v, att)


def attention_backward(dout, cache):
    """Returns dx, dw_qkv, db_qkv, dw_o, db_o."""
    c_qkv, c_o, q, k, v, att = cache
    B, H, T, D = q.shape
    dy, dw_o, db_o = linear_backward(dout, c_o)  # [B, T, C]
    dy = dy.reshape(B, T, H, D).transpose(0, 2, 1, 3)  # split heads: [B, H, T, D]
    # y = att v  =>  datt = dy v^T,  dv = att^T dy
    datt = dy @ v.transpose(0, 1, 3, 2)  # [B, H, T, D] @ [B, H, D, S] -> [B, H, T, S]
    dv = att.transpose(0, 1, 3, 2) @ dy  # [B, H, S, T] @ [B, H, T, D] -> [B, H, S, D]
    # softmax per row: dscores = att * (datt - sum_j datt_j att_j). Masked entries have
    # att = 0, so no gradient flows to the future (or to padding), as the -inf intended.
    dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))  # [B, H, T, S]
    dscores *= 1.0 / math.sqrt(D)  # scores = q k^T / sqrt(D)
    dq = dscores @ k  # [B, H, T, S] @ [B, H, S, D] -> [B, H, T, D]
    dk = dscores.transpose(0, 1, 3, 2) @ q  # [B, H, S, T] @ [B, H, T, D] -> [B, H, S, D]
    dqkv = np.stack([dq, dk, dv])  # [3, B, H, T, D]
    dqkv = dqkv.transpose(1, 3, 0, 2, 4).reshape(B, T, 3 * H * D)  # [B, T, 3C]
    dx, dw_qkv, db_qkv = linear_backward(dqkv, c_qkv)  # [B, T, C]
    return dx, dw_qkv, db_qkv, dw_o, db_o


# ---------------------------------------------------------------------------------------- MLP


def mlp_forward(x, w_fc, b_fc, w_proj, b_proj):
    h, c_fc = linear_forward(x, w_fc, b_fc)  # [B, T, C] -> [B, T, F]
    a, c_gelu = gelu_forward(h)  # [B, T, F]
    out, c_proj = linear_forward(a, w_proj, b_proj)  # [B, T, F] -> [B, T, C]
    return out, (c_fc, c_gelu, c_proj)


def mlp_backward(dout, cache):
    """Returns dx, dw_fc, db_fc, dw_proj, db_proj: the three backwards in reverse order."""
    c_fc, c_gelu, c_proj = cache
    da, dw_proj, db_proj = linear_backward(dout, c_proj)  # [B, T, F]
    dh = gelu_backward(da, c_gelu)  # [B, T, F]
    dx, dw_fc, db_fc = linear_backward(dh, c_fc)  # [B, T, C]
    return dx, dw_fc, db_fc, dw_proj, db_proj


# ------------------------------------------------------------------------------ cross-entropy


def cross_entropy_forward(logits, targets, mask=None):
    """Mean of -log softmax(logits)[target] over the positions where mask is 1.
    Example: cross_entropy_forward(np.zeros((1, 1, 4)), np.array([[3]]))[0] -> log(4) = 1.386"""
    targets = np.asarray(targets)  # [B, T] int
    m = np.ones(targets.shape) if mask is None else np.asarray(mask, dtype=np.float64)  # [B, T]
    n = float(m.sum())
    if n == 0:
        raise ValueError("the loss mask selects no position")
    z = logits - logits.max(axis=-1, keepdims=True)  # [B, T, V] shifted for stability
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # [B, T, V] log softmax
    nll = -np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]  # [B, T]
    loss = float((nll * m).sum() / n)
    return loss, (logp, targets, m.astype(logits.dtype), n)


def cross_entropy_backward(cache):
    # d(-log p_target)/dlogits = softmax(logits) - onehot(target); each position weighs mask/n,
    # so a masked position (mask 0) contributes exactly nothing.
    logp, targets, m, n = cache
    dlogits = np.exp(logp)  # [B, T, V] the probabilities
    tgt = targets[..., None]  # [B, T, 1]
    p_tgt = np.take_along_axis(dlogits, tgt, axis=-1)  # [B, T, 1]
    np.put_along_axis(dlogits, tgt, p_tgt - 1.0, axis=-1)  # subtract the one-hot
    return dlogits * (m / n)[..., None]  # [B, T, V]
