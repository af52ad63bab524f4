"""minimodel.layers in isolation: every backward against central finite differences (float64,
explicit tolerances, the max error printed on failure), hand-checked values, a naive
per-head attention loop as the oracle for the batched one, the KV cache against a full
pass, and backward called twice giving identical gradients."""

import math

import numpy as np
import pytest
from gradcheck import numeric_grad
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel import layers as L

RTOL, ATOL = 1e-6, 1e-9  # analytic vs numeric gradient, float64, eps = 1e-6


def check(name, analytic, numeric):
    err = np.abs(analytic - numeric)
    bad = err > ATOL + RTOL * np.abs(numeric)
    assert not bad.any(), f"{name}: max abs error {err.max():.3e} (tolerance {ATOL} + {RTOL}*|g|)"


def proj_loss(out, r):
    """A scalar that depends on every output entry: sum(out * r) for a fixed random r."""
    return float((out * r).sum())


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_embedding_matches_finite_differences_and_accumulates_repeats(rng):
    w = rng.normal(size=(5, 3))
    ids = np.array([[1, 4, 1], [0, 1, 2]])  # id 1 three times
    r = rng.normal(size=(2, 3, 3))
    out, cache = L.embedding_forward(ids, w)
    np.testing.assert_array_equal(out[0, 0], w[1])
    dw = L.embedding_backward(r, cache)
    check("embedding dw", dw, numeric_grad(lambda: proj_loss(L.embedding_forward(ids, w)[0], r), w))
    np.testing.assert_allclose(dw[1], r[0, 0] + r[0, 2] + r[1, 1])  # by hand
    np.testing.assert_array_equal(dw[3], 0.0)  # never used


def test_layernorm_matches_finite_differences(rng):
    x, g, b = rng.normal(size=(2, 3, 6)), rng.normal(size=6), rng.normal(size=6)
    r = rng.normal(size=(2, 3, 6))
    out, cache = L.layernorm_forward(x, g, b)
    dx, dg, db = L.layernorm_backward(r, cache)

    def f():
        return proj_loss(L.layernorm_forward(x, g, b)[0], r)

    check("layernorm dx", dx, numeric_grad(f, x))
    np.testing.assert_allclose(dx.sum(axis=-1), 0.0, atol=1e-12)  # a shifted row is unchanged
    check("layernorm dg", dg, numeric_grad(f, g))
    check("layernorm db", db, numeric_grad(f, b))


@settings(max_examples=25)
@given(st.integers(1, 4), st.integers(2, 9), st.floats(0.1, 100.0))
def test_layernorm_rows_have_zero_mean_unit_variance(n, c, scale):
    x = np.random.default_rng(n * 10 + c).normal(size=(n, c)) * scale
    out, _ = L.layernorm_forward(x, np.ones(c), np.zeros(c), eps=0.0)
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-9)
    np.testing.assert_allclose(out.var(axis=-1), 1.0, rtol=1e-9)


def test_linear_matches_finite_differences(rng):
    x, w, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5)
    r = rng.normal(size=(2, 3, 5))
    out, cache = L.linear_forward(x, w, b)
    np.testing.assert_allclose(out, np.einsum("bti,io->bto", x, w) + b)
    dx, dw, db = L.linear_backward(r, cache)

    def f():
        return proj_loss(L.linear_forward(x, w, b)[0], r)

    check("linear dx", dx, numeric_grad(f, x))
    check("linear dw", dw, numeric_grad(f, w))
    check("linear db", db, numeric_grad(f, b))
    assert L.linear_backward(r, L.linear_forward(x, w)[1])[2] is None  # no bias, no db


def test_gelu_values_and_finite_differences(rng):
    x = rng.normal(size=(3, 7)) * 3
    out, cache = L.gelu_forward(x)
    exact = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))  # the erf definition
    np.testing.assert_allclose(out, exact, atol=1e-3)  # tanh form approximates it
    assert L.gelu_forward(np.array([0.0]))[0][0] == 0.0
    r = rng.normal(size=x.shape)
    check("gelu dx", L.gelu_backward(r, cache),
          numeric_grad(lambda: proj_loss(L.gelu_forward(x)[0], r), x))


def test_dropout_is_identity_at_inference_and_linear_given_its_mask(rng):
    x = rng.normal(size=(4, 50))
    assert L.dropout_forward(x, 0.5)[0] is x  # no rng: inference
    assert L.dropout_forward(x, 0.0, rng)[0] is x
    out, keep = L.dropout_forward(x, 0.25, np.random.default_rng(1))
    assert set(np.unique(keep)) <= {0.0, 1 / 0.75}
    np.testing.assert_allclose(out, x * keep)
    r = rng.normal(size=x.shape)

    def f():  # the same seed -> the same mask on every call
        return proj_loss(L.dropout_forward(x, 0.25, np.random.default_rng(1))[0], r)

    check("dropout dx", L.dropout_backward(r, keep), numeric_grad(f, x))


def attention_params(rng, C):
    return (rng.normal(size=(C, 3 * C)) * 0.5, rng.normal(size=3 * C) * 0.1,
            rng.normal(size=(C, C)) * 0.5, rng.normal(size=C) * 0.1)


def naive_attention(x, w_qkv, b_qkv, w_o, b_o, n_head, causal=True, key_mask=None):
    """The oracle: loops over batch rows, heads, query and key positions; a query sees the keys
    j <= t (causal) or all of them, minus those key_mask [B, T] hides."""
    B, T, C = x.shape
    D = C // n_head
    qkv = x @ w_qkv + b_qkv
    y = np.zeros((B, T, C))
    for b in range(B):
        for h in range(n_head):
            q, k, v = (qkv[b, :, j * C + h * D: j * C + (h + 1) * D] for j in range(3))
            for t in range(T):
                seen = [j for j in range(T) if (j <= t or not causal)
                        and (key_mask is None or key_mask[b, j])]
                s = np.array([q[t] @ k[j] / math.sqrt(D) for j in seen])
                a = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
                y[b, t, h * D:(h + 1) * D] = a @ v[seen]
    return y @ w_o + b_o


def test_attention_equals_the_naive_loop(rng):
    x = rng.normal(size=(2, 5, 8))
    p = attention_params(rng, 8)
    out, cache = L.attention_forward(x, *p, n_head=2)
    np.testing.assert_allclose(out, naive_attention(x, *p, n_head=2), rtol=1e-12, atol=1e-12)
    att = cache[-1]  # [B, H, T, T]
    np.testing.assert_allclose(att.sum(axis=-1), 1.0)
    assert np.all(np.triu(att[0, 0], k=1) == 0.0)  # nothing from the future
    # one position attends only to itself: the output is v's projection
    one, _ = L.attention_forward(x[:, :1], *p, n_head=2)
    v = (x[:, :1] @ p[0] + p[1])[..., 16:]
    np.testing.assert_allclose(one, v @ p[2] + p[3])


def test_encoder_attention_sees_both_ways_and_never_a_hidden_key(rng):
    x = rng.normal(size=(2, 5, 8))
    p = attention_params(rng, 8)
    keep = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)  # row 0: 2 padding keys
    out, cache = L.attention_forward(x, *p, n_head=2, causal=False, key_mask=keep)
    want = naive_attention(x, *p, n_head=2, causal=False, key_mask=keep)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    att = cache[-1]  # [B, H, T, T]
    assert np.all(att[0, :, :, 3:] == 0.0) and np.all(att[0, :, :, :3] > 0)
    # what padding holds cannot change a real position's output
    x2 = x.copy()
    x2[0, 3:] = rng.normal(size=(2, 8))
    out2, _ = L.attention_forward(x2, *p, n_head=2, causal=False, key_mask=keep)
    np.testing.assert_allclose(out2[0, :3], out[0, :3], rtol=1e-12, atol=1e-12)
    # a row with no key left sees them all instead of dividing by zero
    none, _ = L.attention_forward(x, *p, n_head=2, causal=False, key_mask=np.zeros((2, 5), bool))
    np.testing.assert_allclose(none, L.attention_forward(x, *p, n_head=2, causal=False)[0])


def test_encoder_attention_matches_finite_differences(rng):
    x = rng.normal(size=(2, 4, 6))
    p = list(attention_params(rng, 6))
    r = rng.normal(size=(2, 4, 6))
    keep = np.array([[1, 1, 0, 1], [1, 1, 1, 1]], dtype=bool)
    run = lambda: L.attention_forward(x, *p, n_head=3, causal=False, key_mask=keep)  # noqa: E731
    grads = L.attention_backward(r, run()[1])
    for name, arr, g in zip(["dx", "dw_qkv", "db_qkv", "dw_o", "db_o"], [x, *p], grads,
                            strict=True):
        check(f"encoder attention {name}", g, numeric_grad(lambda: proj_loss(run()[0], r), arr))


def test_attention_matches_finite_differences(rng):
    x = rng.normal(size=(2, 4, 6))
    p = list(attention_params(rng, 6))
    r = rng.normal(size=(2, 4, 6))
    out, cache = L.attention_forward(x, *p, n_head=3)
    grads = L.attention_backward(r, cache)

    def f():
        return proj_loss(L.attention_forward(x, *p, n_head=3)[0], r)

    for name, arr, g in zip(["dx", "dw_qkv", "db_qkv", "dw_o", "db_o"], [x, *p], grads,
                            strict=True):
        check(f"attention {name}", g, numeric_grad(f, arr))


def test_kv_cache_attention_equals_the_full_pass(rng):
    x = rng.normal(size=(1, 7, 8))
    p = attention_params(rng, 8)
    full, _ = L.attention_forward(x, *p, n_head=4)
    kv = L.KVCache(1, 4, 10, 2, np.float64)
    parts = [L.attention_forward(x[:, a:b], *p, n_head=4, kv=kv)[0]
             for a, b in [(0, 3), (3, 4), (4, 5), (5, 7)]]  # a prompt, then token by token
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-12, atol=1e-12)
    assert kv.n == 7
    with pytest.raises(ValueError, match="KV cache full"):
        L.attention_forward(x[:, :4], *p, n_head=4, kv=kv)


def test_mlp_matches_finite_differences(rng):
    x = rng.normal(size=(2, 3, 4))
    p = [rng.normal(size=(4, 16)), rng.normal(size=16), rng.normal(size=(16, 4)),
         rng.normal(size=4)]
    r = rng.normal(size=(2, 3, 4))
    grads = L.mlp_backward(r, L.mlp_forward(x, *p)[1])

    def f():
        return proj_loss(L.mlp_forward(x, *p)[0], r)

    for name, arr, g in zip(["dx", "dw_fc", "db_fc", "dw_proj", "db_proj"], [x, *p], grads,
                            strict=True):
        check(f"mlp {name}", g, numeric_grad(f, arr))


def test_cross_entropy_hand_values():
    loss, _ = L.cross_entropy_forward(np.zeros((1, 1, 4)), np.array([[3]]))
    assert loss == pytest.approx(math.log(4))
    logits = np.array([[[2.0, 0.0], [0.0, 0.0]]])  # position 0 is confident and right
    loss, _ = L.cross_entropy_forward(logits, np.array([[0, 1]]), mask=np.array([[1, 0]]))
    assert loss == pytest.approx(math.log(1 + math.exp(-2)))
    with pytest.raises(ValueError, match="selects no position"):
        L.cross_entropy_forward(logits, np.array([[0, 1]]), mask=np.zeros((1, 2)))


def test_cross_entropy_matches_finite_differences_and_masks(rng):
    logits = rng.normal(size=(2, 3, 5)) * 2
    targets = rng.integers(0, 5, size=(2, 3))
    mask = np.array([[1, 0, 1], [1, 1, 0]])
    _, cache = L.cross_entropy_forward(logits, targets, mask)
    d = L.cross_entropy_backward(cache)
    check("cross-entropy dlogits", d,
          numeric_grad(lambda: L.cross_entropy_forward(logits, targets, mask)[0], logits))
    np.testing.assert_array_equal(d[mask == 0], 0.0)  # masked positions: no gradient at all
    np.testing.assert_allclose(d.sum(axis=-1), 0.0, atol=1e-15)  # softmax - onehot sums to 0


def test_backward_twice_gives_identical_gradients(rng):
    x = rng.normal(size=(2, 4, 8))
    p = attention_params(rng, 8)
    r = rng.normal(size=(2, 4, 8))
    _, cache = L.attention_forward(x, *p, n_head=2)
    first = L.attention_backward(r, cache)
    second = L.attention_backward(r, cache)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    _, cache = L.layernorm_forward(x, np.ones(8), np.zeros(8))
    for a, b in zip(L.layernorm_backward(r, cache), L.layernorm_backward(r, cache), strict=True):
        np.testing.assert_array_equal(a, b)
