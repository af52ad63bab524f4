"""minimodel.lora in isolation, on random ids and hand-built weights, for both models an
adapter wraps (MiniGPT and SpanReader): a 2 x 2 example worked by hand (s A B, dA, dB,
merge), a fresh adapter changes nothing, dL/dA and dL/dB against central finite differences
in float64, training moves A and B and not one byte of the base, merge against the adapted
forward and unmerge back to the base, the parameter
count (a hypothesis property, and the shipped reader's shape), a planted rank-r change
recovered on one linear layer (and, at rank r - 1, the best rank-(r - 1) approximation:
Eckart-Young), and adapter files: round trip, another base, tampered, misshapen, bad config."""

from dataclasses import replace

import numpy as np
import pytest
from gradcheck import worst_sampled_error
from hypothesis import given
from hypothesis import strategies as st

from minimodel.checkpoint import CheckpointError, params_sha256, save_params
from minimodel.lora import TARGETS, LoRA, LoRAConfig, adapted_model, train_lora
from minimodel.mini_gpt import MiniGPT, MiniGPTConfig
from minimodel.span_reader import SpanReader

TINY = MiniGPTConfig(vocab_size=11, block_size=10, d_model=8, n_head=2, n_layer=2,
                     n_segments=3)
EVERY_TARGET = LoRAConfig(rank=2, targets=TARGETS)
MODELS = [MiniGPT, SpanReader]


def perturbed(cls, dtype="float32", seed=0):
    """A base away from its init (init gradients are too small to check well)."""
    model = cls(replace(TINY, dtype=dtype), seed=seed)
    rng = np.random.default_rng(seed + 100)
    for p in model.params.values():
        p += rng.normal(0.0, 0.3, size=p.shape).astype(dtype)
    return model


def batch(cls, rng, B=3, T=9):
    """The model's own loss_and_grads inputs."""
    ids = rng.integers(0, TINY.vocab_size, (B, T))
    if cls is MiniGPT:
        return ids, rng.integers(0, TINY.vocab_size, (B, T))
    allowed = np.zeros((B, T), bool)
    allowed[:, 3:] = True
    return ids, np.array([[3, 4], [5, 8], [8, 8]]), allowed, rng.integers(0, 3, (B, T))


def outputs(model, b):
    """The forward pass: next-token logits, or the reader's start and end scores."""
    if isinstance(model, MiniGPT):
        return model.forward(b[0])  # [B, T, V]
    start, end, _ = model.scores(b[0], b[3])
    return np.stack([start, end])  # [2, B, T]


def randomise_b(lora, rng, std=0.3):
    """A trained-looking adapter: B away from 0, so s A B (and dL/dA) are not 0."""
    for k, v in lora.params.items():
        if k.endswith(".B"):
            v += rng.normal(0.0, std, size=v.shape).astype(v.dtype)


# --------------------------------------------------------------------------- the adapter


def test_a_hand_checked_example():
    # rank 1, alpha 3: s = 3. A = [1, 2]^T, B = [1, -1], so s A B = 3 [[1, -1], [2, -2]].
    W = np.array([[1.0, 0.0], [0.0, 1.0]])  # [In, Out]
    lora = LoRA({"attn.w_o": W}, LoRAConfig(rank=1, alpha=3.0, targets=("attn.w_o",)))
    lora.params["attn.w_o.A"][:] = [[1.0], [2.0]]  # [2, 1]
    lora.params["attn.w_o.B"][:] = [[1.0, -1.0]]  # [1, 2]
    assert lora.scale == 3.0 and lora.n_params == 4
    assert np.array_equal(lora.adapted({"attn.w_o": W})["attn.w_o"], [[4.0, -3.0], [6.0, -5.0]])
    # dW = I: dA = s dW B^T = 3 [1, -1]^T, dB = s A^T dW = 3 [1, 2]
    g = lora.grads({"attn.w_o": np.eye(2)})
    assert np.array_equal(g["attn.w_o.A"], [[3.0], [-3.0]])
    assert np.array_equal(g["attn.w_o.B"], [[3.0, 6.0]])
    params = {"attn.w_o": W.copy()}
    lora.merge(params)
    assert np.array_equal(params["attn.w_o"], [[4.0, -3.0], [6.0, -5.0]])
    lora.unmerge(params)
    assert np.array_equal(params["attn.w_o"], W)  # exact here: small integers round to none


@pytest.mark.parametrize("cls", MODELS)
def test_a_fresh_adapter_changes_nothing(cls):
    model, rng = perturbed(cls), np.random.default_rng(1)
    lora, b = LoRA(model.params, EVERY_TARGET, seed=1), batch(cls, rng)
    assert len(lora.targets) == 4 * TINY.n_layer and "span.w" not in lora.targets
    params = lora.adapted(model.params)
    assert params["wte"] is model.params["wte"]  # untouched weights are shared, not copied
    assert np.array_equal(outputs(adapted_model(model, lora), b), outputs(model, b))
    # B = 0 gives dA = s dW B^T = 0, but A random gives dB = s A^T dW != 0: learning can start
    g = lora.grads(adapted_model(model, lora).loss_and_grads(*b)[1])
    assert all(not g[k].any() for k in g if k.endswith(".A"))
    assert all(g[k].any() for k in g if k.endswith(".B"))


@pytest.mark.parametrize("cls", MODELS)
def test_adapter_gradients_match_finite_differences(cls):
    model, rng = perturbed(cls).astype("float64"), np.random.default_rng(2)
    lora, b = LoRA(model.params, EVERY_TARGET, seed=1), batch(cls, rng)
    randomise_b(lora, rng)

    def loss():
        return adapted_model(model, lora).loss_and_grads(*b)[0]

    grads = lora.grads(adapted_model(model, lora).loss_and_grads(*b)[1])
    assert grads.keys() == lora.params.keys()
    assert all(grads[k].shape == lora.params[k].shape for k in grads)
    worst = worst_sampled_error(loss, lora.params, grads, rng, rtol=1e-5, atol=1e-8)
    assert worst[0] < 1.0, f"error {worst[0]:.2f}x the tolerance at {worst[1]}"


@pytest.mark.parametrize("cls", MODELS)
def test_training_moves_the_adapter_and_not_one_byte_of_the_base(cls):
    model, rng = perturbed(cls), np.random.default_rng(3)
    lora, b = LoRA(model.params, LoRAConfig(rank=2), seed=1), batch(cls, rng)
    base_sha, before = params_sha256(model.params), {k: v.copy() for k, v in lora.params.items()}
    logged = []
    losses = train_lora(model, lora, lambda: b, steps=40, lr=3e-2,
                        log=lambda step, loss: logged.append(step))
    assert params_sha256(model.params) == base_sha
    assert all(not np.array_equal(before[k], lora.params[k]) for k in lora.params)
    assert len(losses) == 40 and logged == list(range(40))
    assert losses[-1] < 0.8 * losses[0]


@pytest.mark.parametrize("cls", MODELS)
def test_merge_equals_the_adapted_forward_and_unmerge_restores_the_base(cls):
    model, rng = perturbed(cls, "float64"), np.random.default_rng(4)
    lora, b = LoRA(model.params, EVERY_TARGET, seed=1), batch(cls, rng)
    randomise_b(lora, rng)
    base_out, original = outputs(model, b), {k: v.copy() for k, v in model.params.items()}
    adapted_out = outputs(adapted_model(model, lora), b)
    lora.merge(model.params)
    merged_out = outputs(model, b)
    assert np.abs(merged_out - adapted_out).max() <= 1e-6
    assert np.abs(merged_out - base_out).max() > 1e-3  # the merge did change the model
    lora.unmerge(model.params)
    # close, not always byte-identical: (W + D) - D rounds (see LoRA.unmerge)
    assert max(np.abs(model.params[k] - original[k]).max() for k in original) <= 1e-6


# ------------------------------------------------------------------------------- its size


@given(st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12)), min_size=1, max_size=5),
       st.integers(1, 6))
def test_param_count_formula_is_the_sum_of_the_adapter_sizes(shapes, r):
    params = {f"h{i}.mlp.w_fc": np.zeros(s) for i, s in enumerate(shapes)}
    lora = LoRA(params, LoRAConfig(rank=r, targets=("mlp.w_fc",)))
    assert lora.n_params == sum(v.size for v in lora.params.values())
    assert LoRA.lora_param_count(shapes, r) == lora.n_params
    assert all(lora.params[f"h{i}.mlp.w_fc.A"].shape == (s[0], r) for i, s in enumerate(shapes))


def test_docstring_example():
    assert LoRA(MiniGPT(MiniGPTConfig(n_layer=2)).params).n_params == 3072


def test_a_rank4_attention_adapter_on_the_shipped_reader_shape_is_small(tmp_path):
    cfg = MiniGPTConfig(vocab_size=2048, block_size=64, d_model=64, n_head=4, n_layer=4,
                        n_segments=16)
    reader = SpanReader(cfg)  # random weights of the shipped reader's shape, no file read
    lora = LoRA(reader.params, LoRAConfig(rank=4))
    n_model = sum(v.size for v in reader.params.values())
    assert lora.n_params == LoRA.lora_param_count([(64, 192), (64, 64)] * 4, 4) == 6144
    assert lora.n_params <= 0.02 * n_model
    lora.save(tmp_path / "adapter.npz", reader.params)
    reader.save(tmp_path / "reader.npz")
    size = {name: (tmp_path / f"{name}.npz").stat().st_size for name in ("adapter", "reader")}
    assert size["adapter"] < 0.03 * size["reader"]  # arrays plus the npz's per-entry overhead


# ----------------------------------------------------------- a planted low-rank change


class Linear:
    """y = x W under half the mean squared error: the smallest model adapted_model rebuilds.
    Its weight is named like an attention output projection so that LoRA targets it."""

    def __init__(self, config=None, params=None):
        self.config, self.params = config, params

    def loss_and_grads(self, x, y):
        err = x @ self.params["attn.w_o"] - y  # [N, In] @ [In, Out] - [N, Out] -> [N, Out]
        loss = 0.5 * float((err * err).sum()) / len(x)
        return loss, {"attn.w_o": x.T @ err / len(x)}  # [In, N] @ [N, Out] -> [In, Out]


@pytest.mark.parametrize("rank", [2, 1])
def test_a_rank_r_adapter_recovers_a_planted_rank_r_change(rank):
    rng = np.random.default_rng(6)
    n_in, n_out, N = 12, 10, 240
    W = rng.normal(0.0, 1.0, (n_in, n_out))  # [In, Out] the frozen base
    D = rng.normal(0.0, 1.0, (n_in, 2)) @ rng.normal(0.0, 1.0, (2, n_out)) / 2  # [In, Out] rank 2
    # whitened inputs (x^T x / N = identity), so the loss is 0.5 ||D - s A B||_F^2 + 0
    x = np.sqrt(N) * np.linalg.qr(rng.normal(size=(N, n_in)))[0]  # [N, In]
    base = Linear(params={"attn.w_o": W})
    lora = LoRA(base.params, LoRAConfig(rank=rank, alpha=float(rank), targets=("attn.w_o",)))
    data = (x, x @ (W + D))  # [N, In], [N, Out]
    train_lora(base, lora, lambda: data, steps=300, lr=3e-2)
    train_lora(base, lora, lambda: data, steps=200, lr=3e-3)  # a lower rate to settle
    error = np.linalg.norm(lora.delta("attn.w_o") - D) / np.linalg.norm(D)
    if rank == 2:
        assert error < 1e-2
    else:  # Eckart-Young: the best rank-1 update misses D by its second singular value
        sigma = np.linalg.svd(D, compute_uv=False)
        assert error == pytest.approx(sigma[1] / np.linalg.norm(D), rel=1e-2)


# ------------------------------------------------------------------------- adapter files


def test_save_load_round_trip(tmp_path):
    model, rng = perturbed(SpanReader), np.random.default_rng(7)
    lora = LoRA(model.params, replace(EVERY_TARGET, task="choice"), seed=3)
    randomise_b(lora, rng)
    lora.save(tmp_path / "a.npz", model.params)
    back = LoRA.load(tmp_path / "a.npz", model.params)
    assert back.config == lora.config and back.targets == lora.targets
    assert back.config.task == "choice"  # the name its user gave, kept
    assert back.params.keys() == lora.params.keys()
    assert all(np.array_equal(back.params[k], lora.params[k]) for k in lora.params)
    b = batch(SpanReader, rng)
    assert np.array_equal(outputs(adapted_model(model, back), b),
                          outputs(adapted_model(model, lora), b))


def test_load_refuses_another_base_and_a_merged_one(tmp_path):
    model = perturbed(MiniGPT)
    lora = LoRA(model.params, seed=3)
    randomise_b(lora, np.random.default_rng(8))
    lora.save(tmp_path / "a.npz", model.params)
    with pytest.raises(CheckpointError, match="another base"):
        LoRA.load(tmp_path / "a.npz", perturbed(MiniGPT, seed=1).params)
    merged = {k: v.copy() for k, v in model.params.items()}
    lora.merge(merged)
    with pytest.raises(CheckpointError, match="another base"):
        LoRA.load(tmp_path / "a.npz", merged)


def test_load_refuses_tampered_truncated_misshapen_and_foreign_files(tmp_path):
    model = perturbed(MiniGPT)
    lora = LoRA(model.params, seed=3)
    lora.save(tmp_path / "a.npz", model.params)
    data = bytearray((tmp_path / "a.npz").read_bytes())
    (tmp_path / "cut.npz").write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(CheckpointError, match=r"cut\.npz"):
        LoRA.load(tmp_path / "cut.npz", model.params)
    data[len(data) // 2] ^= 0xFF  # one byte flipped inside the arrays
    (tmp_path / "flip.npz").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"flip\.npz"):
        LoRA.load(tmp_path / "flip.npz", model.params)
    # an edited array under the old header (a valid zip): the checksum catches it
    with np.load(tmp_path / "a.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["h0.attn.w_o.B"] = arrays["h0.attn.w_o.B"] + 1.0
    np.savez(tmp_path / "edit.npz", **arrays)
    with pytest.raises(CheckpointError, match="checksum"):
        LoRA.load(tmp_path / "edit.npz", model.params)
    # rank-2 arrays under a header that says rank 4, for the right base
    small = LoRA(model.params, LoRAConfig(rank=2))
    save_params(tmp_path / "shape.npz", small.params, {
        "rank": 4, "alpha": 8.0, "targets": ["attn.w_qkv", "attn.w_o"],
        "base_sha256": params_sha256(model.params)}, fmt="lora")
    with pytest.raises(CheckpointError, match="shapes"):
        LoRA.load(tmp_path / "shape.npz", model.params)
    (tmp_path / "text.npz").write_text("garbage\n")  # NumPy would call this a pickle
    with pytest.raises(CheckpointError, match=r"text\.npz: .*not an \.npz archive") as e:
        LoRA.load(tmp_path / "text.npz", model.params)
    assert "pickle" not in str(e.value)  # never a hint to load a file unsafely
    model.save(tmp_path / "model.npz")  # a model checkpoint is not an adapter
    with pytest.raises(CheckpointError, match="not a lora"):
        LoRA.load(tmp_path / "model.npz", model.params)


@pytest.mark.parametrize("kwargs, message", [
    ({"rank": 0}, "rank"), ({"rank": 2.5}, "rank"), ({"alpha": 0.0}, "alpha"),
    ({"alpha": "8"}, "alpha"), ({"targets": ()}, "targets"), ({"targets": "attn.w_o"}, "targets"),
    ({"targets": ("attn.w_o", "mlp.w_gate")}, "mlp.w_gate"), ({"task": ""}, "task"),
    ({"task": 3}, "task"),
])
def test_bad_config_values_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LoRAConfig(**kwargs)


def test_a_base_that_does_not_fit_the_adapter_is_refused():
    with pytest.raises(ValueError, match="no 2-D weight"):
        LoRA({"wte": np.zeros((4, 3)), "lnf.g": np.ones(3)})
    model = perturbed(MiniGPT)
    lora = LoRA(model.params)
    wider = MiniGPT(replace(TINY, d_model=16)).params
    with pytest.raises(ValueError, match="h0.attn.w_o"):
        lora.adapted(wider)
