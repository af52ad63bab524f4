"""The bi-encoder's own layers, each a `forward -> (out, cache)` / `backward(dout, cache)`
pair with its gradient written by hand: weighted masked mean pooling, L2 normalisation, the
InfoNCE loss with in-batch negatives (van den Oord et al., 2018; DPR's training loss), the
distillation loss that matches a teacher's similarity matrix (training/distill.py), and an
optional context: position vectors and minimodel's pre-LN blocks run both ways (an encoder,
as BERT's), so a token's vector can depend on its neighbours before the pooling.

What it leaves out: the layers minimodel already has (embedding, linear, GELU). The math, with
each gradient derived: theory/01-embeddings-and-biencoders.md. Finite-difference checks:
tests/test_biencoder.py.
"""

from __future__ import annotations

import numpy as np

from minimodel.mini_gpt import block_backward, block_forward, block_params


def pool_forward(x, weight):
    """Weighted mean of the token vectors of each text; weight 0 masks a position out.

    out[b] = sum_t weight[b, t] x[b, t] / W[b],  W[b] = sum_t weight[b, t]; a text whose
    weights are all 0 gives the zero vector (and no gradient).
    """
    total = weight.sum(axis=1, keepdims=True)  # [B, 1] W
    a = np.divide(weight, total, out=np.zeros_like(weight), where=total > 0)  # [B, T] sums to 1
    out = np.einsum("bt,btc->bc", a, x)  # [B, T] x [B, T, C] -> [B, C]
    return out, (x, a, out, total)


def pool_backward(dout, cache):
    """Returns dx [B, T, C] and dweight [B, T]."""
    # out = sum_t a_t x_t, a_t = w_t / W  =>  dx_t = a_t dout
    # and d out / d w_t = (x_t - out) / W  (raising one weight pulls the mean toward x_t)
    x, a, out, total = cache
    dx = a[:, :, None] * dout[:, None, :]  # [B, T, 1] * [B, 1, C] -> [B, T, C]
    dxo = np.einsum("btc,bc->bt", x, dout) - (out * dout).sum(axis=1, keepdims=True)  # [B, T]
    dweight = np.divide(dxo, total, out=np.zeros_like(dxo), where=total > 0)  # [B, T]
    return dx, dweight


def l2norm_forward(x, eps=1e-12):
    """y = x / ||x|| per row, so y . y' is the cosine of x and x'."""
    norm = np.sqrt((x * x).sum(axis=1, keepdims=True)) + eps  # [B, 1]
    y = x / norm  # [B, D]
    return y, (y, norm)


def l2norm_backward(dout, cache):
    # dy/dx = (I - y y^T) / ||x||: the part of dout along y is removed (scaling x moves nothing)
    y, norm = cache
    return (dout - y * (y * dout).sum(axis=1, keepdims=True)) / norm  # [B, D]


def info_nce_forward(q, p, tau, banned=None):
    """InfoNCE with in-batch negatives: query i's positive is passage i, every other passage
    (the other queries' positives, then any extra hard negatives) is a negative.

    loss = mean_i [ -log( exp(s_ii / tau) / sum_j exp(s_ij / tau) ) ],  s = q p^T
    `banned` [B, P] bool marks columns to leave out of row i's sum (false negatives: passages
    that are also right for query i). Example: q = p = I (2x2), tau = 1 -> log(1 + e^-1) = 0.313
    """
    B = q.shape[0]
    logits = q @ p.T / tau  # [B, D] @ [D, P] -> [B, P]
    if banned is not None:
        logits = np.where(banned, -np.inf, logits)  # [B, P]
    z = logits - logits.max(axis=1, keepdims=True)  # [B, P] shifted for stability
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))  # [B, P] log softmax per row
    loss = float(-logp[np.arange(B), np.arange(B)].mean())
    return loss, (q, p, tau, logp)


def info_nce_backward(cache):
    # dloss/dlogits = (softmax - onehot) / B; logits = q p^T / tau gives the two matmuls
    q, p, tau, logp = cache
    B = q.shape[0]
    dlogits = np.exp(logp)  # [B, P] softmax (exactly 0 in banned columns)
    dlogits[np.arange(B), np.arange(B)] -= 1.0
    dlogits /= B
    dq = dlogits @ p / tau  # [B, P] @ [P, D] -> [B, D]
    dp = dlogits.T @ q / tau  # [P, B] @ [B, D] -> [P, D]
    return dq, dp


def sim_mse_forward(a, b, ta, tb):
    """Similarity-structure distillation: the student's cosines a b^T should equal the
    teacher's ta tb^T, whatever the two widths (128 here, 384 there).

    loss = mean_ij (a_i . b_j - ta_i . tb_j)^2  over the [A, P] matrix
    Example: a = b = ta = tb = I (2x2) -> 0; a = b = [[1, 0], [0, 1]], ta = tb = [[1], [1]]
    -> the off-diagonal cosines are 0 where the teacher says 1: loss = 2 / 4 = 0.5
    """
    err = a @ b.T - ta @ tb.T  # [A, D] @ [D, P] - [A, Dt] @ [Dt, P] -> [A, P]
    return float((err * err).mean()), (a, b, err)


def sim_mse_backward(cache):
    # d loss / d S = 2 err / (A P); S = a b^T gives da = dS b, db = dS^T a. If a and b are
    # the same vectors (one forward pass), the caller adds da and db.
    a, b, err = cache
    dS = 2.0 * err / err.size  # [A, P]
    return dS @ b, dS.T @ a  # [A, P] @ [P, D] -> [A, D], [P, A] @ [A, D] -> [P, D]


def context_params(n_layer: int, C: int, max_tokens: int, rng: np.random.Generator,
                   dtype) -> dict[str, np.ndarray]:
    """Position vectors "wpe" [max_tokens, C] and n_layer blocks "h{i}.*". wpe and the two
    projections that write into the residual stream start at 0, so every block starts as the
    identity: a tower that starts as LSA still does, and training adds the context."""
    p = {"wpe": np.zeros((max_tokens, C))}  # [Tmax, C]
    for i in range(n_layer):
        block = block_params(f"h{i}.", C, n_layer, rng)
        block[f"h{i}.attn.w_o"][:] = 0.0
        block[f"h{i}.mlp.w_proj"][:] = 0.0
        p.update(block)
    return {k: v.astype(dtype) for k, v in p.items()}


def context_forward(x, params, keep, n_layer: int, n_head: int):
    """x [B, T, C] token vectors, keep [B, T] bool (False: padding, which no position attends
    to) -> x + wpe[:T] through n_layer bidirectional blocks [B, T, C], cache."""
    T = x.shape[1]
    x = x + params["wpe"][:T]  # [B, T, C] + [T, C]
    caches = []
    for i in range(n_layer):
        x, c = block_forward(x, params, f"h{i}.", n_head, causal=False, key_mask=keep)
        caches.append(c)
    return x, (caches, T)


def context_backward(dout, cache, params):
    """Returns dx [B, T, C] and the gradients of wpe and every block parameter."""
    caches, T = cache
    g: dict[str, np.ndarray] = {}
    for i in reversed(range(len(caches))):
        dout = block_backward(dout, caches[i], f"h{i}.", g)  # [B, T, C]
    g["wpe"] = np.zeros_like(params["wpe"])  # [Tmax, C]
    g["wpe"][:T] = dout.sum(axis=0)  # broadcast over the batch
    return dout, g
