"""MiniGPT, its optimizer and its training loop in isolation, on random ids (no tokenizer):
whole-model gradients against central finite differences in float64 (every parameter tensor,
sampled entries), the causal mask, KV-cache generation against full recomputation, the loss
mask, overfitting one batch, seeding, save/load and tampered checkpoints, and AdamW,
clipping and the schedule against hand computations."""

import json
import math

import numpy as np
import pytest
from gradcheck import worst_sampled_error

from minimodel.checkpoint import CheckpointError
from minimodel.mini_gpt import MiniGPT, MiniGPTConfig
from minimodel.optim import AdamW, clip_grad_norm, cosine_lr
from minimodel.train import TrainConfig, lm_batch, train

RTOL, ATOL = 1e-5, 1e-8  # whole-model finite differences, float64, eps = 1e-6
TINY = MiniGPTConfig(vocab_size=13, block_size=8, d_model=8, n_head=2, n_layer=2,
                     dtype="float64")


def perturbed(config=TINY, seed=0):
    """A model away from its init (init gradients are ~1e-5: too small to check well)."""
    model = MiniGPT(config, seed=seed)
    rng = np.random.default_rng(seed + 100)
    for p in model.params.values():
        p += rng.normal(0.0, 0.3, size=p.shape)
    return model


def batch(rng, config=TINY, B=2, T=6):
    return (rng.integers(0, config.vocab_size, (B, T)),
            rng.integers(0, config.vocab_size, (B, T)))


@pytest.mark.parametrize("with_mask", [False, True])
def test_whole_model_gradients_match_finite_differences(with_mask):
    model, rng = perturbed(), np.random.default_rng(1)
    ids, targets = batch(rng)
    mask = np.array([[0, 0, 1, 1, 0, 1], [1, 0, 0, 0, 1, 1]]) if with_mask else None
    loss, grads = model.loss_and_grads(ids, targets, mask)
    assert grads.keys() == model.params.keys()
    # |error| within ATOL + RTOL |numeric|: ATOL covers entries whose true gradient is 0
    # (the key bias: softmax ignores a constant added to a row of scores)
    worst = worst_sampled_error(lambda: model.loss_and_grads(ids, targets, mask)[0],
                                model.params, grads, rng, rtol=RTOL, atol=ATOL)
    assert worst[0] < 1.0, f"error {worst[0]:.2f}x the tolerance at {worst[1]}"


def test_dropout_gradients_match_finite_differences_for_a_fixed_mask():
    from dataclasses import replace

    model = perturbed(replace(TINY, dropout=0.2))
    ids, targets = batch(np.random.default_rng(2))

    def loss():  # a fresh rng with the same seed draws the same dropout masks
        return model.loss_and_grads(ids, targets, rng=np.random.default_rng(5))

    _, grads = loss()
    p = model.params["h1.mlp.w_fc"].reshape(-1)
    for i in (0, 17, 40):
        old = p[i]
        p[i] = old + 1e-6
        up = loss()[0]
        p[i] = old - 1e-6
        down = loss()[0]
        p[i] = old
        assert grads["h1.mlp.w_fc"].reshape(-1)[i] == pytest.approx((up - down) / 2e-6, rel=1e-5)
    assert loss()[0] != model.loss_and_grads(ids, targets)[0]  # dropout did something


def test_backward_twice_gives_identical_gradients():
    model = perturbed()
    ids, targets = batch(np.random.default_rng(3))
    l1, g1 = model.loss_and_grads(ids, targets)
    l2, g2 = model.loss_and_grads(ids, targets)
    assert l1 == l2
    for k in g1:
        np.testing.assert_array_equal(g1[k], g2[k])


def test_changing_a_future_token_changes_no_earlier_logit():
    model = perturbed()
    ids = np.random.default_rng(4).integers(0, 13, (1, 8))
    base = model.forward(ids)
    for t in range(8):
        other = ids.copy()
        other[0, t] = (other[0, t] + 1) % 13
        changed = model.forward(other)
        np.testing.assert_allclose(changed[0, :t], base[0, :t], rtol=0, atol=1e-12)
        assert not np.allclose(changed[0, t], base[0, t])  # and the token itself does matter


@pytest.mark.parametrize("dtype, tol", [("float32", 1e-5), ("float64", 1e-12)])
def test_kv_cache_generation_equals_full_recomputation(dtype, tol):
    cfg = MiniGPTConfig(vocab_size=50, block_size=32, d_model=32, n_head=4, n_layer=3)
    model = MiniGPT(cfg, seed=7).astype(dtype)
    prompt = [3, 14, 15, 9, 2, 6]
    fast, lf = model.generate(prompt, 26, return_logits=True)
    slow, ls = model.generate(prompt, 26, use_cache=False, return_logits=True)
    assert fast == slow and len(fast) == 26
    np.testing.assert_allclose(lf, ls, rtol=tol, atol=tol)
    np.testing.assert_allclose(ls[-1], model.forward([prompt + slow[:-1]])[0, -1], rtol=tol,
                               atol=tol)
    # sampling walks the same path too, given the same rng
    kw = dict(temperature=1.0, top_k=10)
    assert (model.generate(prompt, 26, rng=np.random.default_rng(1), **kw)
            == model.generate(prompt, 26, rng=np.random.default_rng(1), use_cache=False, **kw))


def test_generate_stops_validates_and_samples_within_top_k():
    model = MiniGPT(TINY, seed=1)
    greedy = model.generate([1, 2], 6)
    for stop in set(greedy):  # the stop id ends the output, and is kept as its last id
        assert model.generate([1, 2], 6, stop_id=stop) == greedy[: greedy.index(stop) + 1]
    with pytest.raises(ValueError, match="exceed the context"):
        model.generate([1, 2, 3], 6)
    with pytest.raises(ValueError, match="needs rng"):
        model.generate([1], 3, temperature=1.0)
    logits = model.forward([[1, 2]])[0, -1]
    top2 = set(np.argsort(logits)[-2:])
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert model.generate([1, 2], 1, temperature=5.0, top_k=2, rng=rng)[0] in top2


def test_inputs_longer_than_the_context_or_outside_the_vocab_are_errors():
    model = MiniGPT(TINY)
    with pytest.raises(ValueError, match="exceed the context of 8"):
        model.forward(np.zeros((1, 9), dtype=int))
    with pytest.raises(ValueError, match=r"\[0, 13\)"):
        model.forward([[13]])
    with pytest.raises(ValueError, match="divisible"):
        MiniGPTConfig(d_model=10, n_head=4)


def test_loss_mask_scores_only_the_selected_positions():
    model = perturbed()
    ids, targets = batch(np.random.default_rng(5))
    mask = np.zeros((2, 6))
    mask[:, -2:] = 1  # score only the last two positions ("the answer")
    loss, grads = model.loss_and_grads(ids, targets, mask)
    logits = model.forward(ids)[:, -2:]  # [2, 2, V]
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    by_hand = -np.take_along_axis(logp, targets[:, -2:, None], -1).mean()
    assert loss == pytest.approx(by_hand, rel=1e-12)
    other = targets.copy()
    other[:, :-2] = (other[:, :-2] + 5) % 13  # change every masked target
    loss2, grads2 = model.loss_and_grads(ids, other, mask)
    assert loss2 == loss
    for k in grads:  # masked positions contribute nothing to any gradient
        np.testing.assert_array_equal(grads[k], grads2[k])


def test_overfits_a_single_batch():
    cfg = MiniGPTConfig(vocab_size=16, block_size=16, d_model=32, n_head=4, n_layer=2)
    model, rng = MiniGPT(cfg, seed=0), np.random.default_rng(0)
    ids = rng.integers(0, 16, (4, 17))
    opt = AdamW(model.params, lr=1e-2, weight_decay=0.0)
    losses = []
    for _ in range(150):
        loss, grads = model.loss_and_grads(ids[:, :-1], ids[:, 1:])
        opt.step(grads)
        losses.append(loss)
    assert losses[0] > 2.5 and losses[-1] < 0.05, f"loss {losses[0]:.3f} -> {losses[-1]:.4f}"


def test_same_seed_same_weights_and_same_samples():
    a, b, c = MiniGPT(TINY, seed=3), MiniGPT(TINY, seed=3), MiniGPT(TINY, seed=4)
    for k in a.params:
        np.testing.assert_array_equal(a.params[k], b.params[k])
    assert not np.array_equal(a.params["wte"], c.params["wte"])
    kw = dict(temperature=1.0)
    assert (a.generate([1], 7, rng=np.random.default_rng(9), **kw)
            == b.generate([1], 7, rng=np.random.default_rng(9), **kw))


def test_float32_and_float64_agree_and_keep_their_dtype():
    m32 = MiniGPT(MiniGPTConfig(vocab_size=20, block_size=8, d_model=16, n_head=2))
    m64 = m32.astype("float64")
    ids = np.random.default_rng(0).integers(0, 20, (2, 8))
    assert m32.forward(ids).dtype == np.float32 and m64.forward(ids).dtype == np.float64
    np.testing.assert_allclose(m32.forward(ids), m64.forward(ids), rtol=1e-4, atol=1e-5)
    _, grads = m32.loss_and_grads(ids, ids)
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}


def test_return_state_exposes_hidden_states_and_causal_attention():
    model = perturbed()
    logits, state = model.forward([[1, 2, 3, 4]], return_state=True)
    assert state["hidden"].shape == (1, 4, 8) and len(state["attention"]) == 2
    np.testing.assert_allclose(state["hidden"] @ model.params["wte"].T, logits)  # tied head
    att = state["attention"][1]  # [B, H, T, T]
    np.testing.assert_allclose(att.sum(-1), 1.0)
    assert np.all(np.triu(att, k=1) == 0)


# ------------------------------------------------------------------------------ save / load


def test_save_load_round_trip(tmp_path):
    model = perturbed()
    path = tmp_path / "m.npz"
    model.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]  # no temp file left behind
    back = MiniGPT.load(path)
    assert back.config == model.config
    for k in model.params:
        np.testing.assert_array_equal(back.params[k], model.params[k])
    assert back.generate([1, 2], 5) == model.generate([1, 2], 5)


def test_tampered_truncated_and_foreign_files_are_refused_by_name(tmp_path):
    from dataclasses import replace

    path = tmp_path / "m.npz"
    MiniGPT(replace(TINY, tokenizer_sha256="abc")).save(path)
    assert MiniGPT.load(path, tokenizer_sha256="abc").config.tokenizer_sha256 == "abc"
    with pytest.raises(CheckpointError, match="m.npz.*tokenizer"):
        MiniGPT.load(path, tokenizer_sha256="xyz")
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["h0.mlp.w_fc"][0, 0] += 1e-3  # edit one weight, keep the header
    bad = tmp_path / "tampered.npz"
    np.savez(bad, **arrays)
    with pytest.raises(CheckpointError, match="tampered.npz.*checksum"):
        MiniGPT.load(bad)
    header = json.loads(str(arrays["__header__"]))
    header["version"] = 99
    arrays["__header__"] = np.array(json.dumps(header))
    np.savez(bad, **arrays)
    with pytest.raises(CheckpointError, match="version 99"):
        MiniGPT.load(bad)
    short = tmp_path / "short.npz"
    short.write_bytes(path.read_bytes()[:500])
    with pytest.raises(CheckpointError, match="short.npz"):
        MiniGPT.load(short)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip file at all")
    with pytest.raises(CheckpointError, match="junk.npz"):
        MiniGPT.load(junk)
    with pytest.raises(CheckpointError, match="no such"):
        MiniGPT.load(tmp_path / "missing.npz")


# -------------------------------------------------------------------- optimizer and training


def test_adamw_step_equals_a_hand_computation():
    p = {"w": np.array([1.0, -2.0]), "g": np.array([3.0])}  # "g" is a gain: never decayed
    opt = AdamW(p, lr=0.1, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.5, no_decay={"g"})
    grads = {"w": np.array([0.5, -1.0]), "g": np.array([2.0])}
    for t in (1, 2):
        opt.step(grads)
        if t == 1:  # m_hat = g, v_hat = g^2, so the Adam step is lr * sign(g) (up to eps)
            np.testing.assert_allclose(p["w"], [1.0 * (1 - 0.05) - 0.1, -2.0 * (1 - 0.05) + 0.1])
            np.testing.assert_allclose(p["g"], [3.0 - 0.1])
    # step 2 by hand for w[0]: constant gradient keeps m_hat = g and v_hat = g^2
    w1 = 1.0 * 0.95 - 0.1 * 0.5 / (0.5 + 1e-8)
    assert p["w"][0] == pytest.approx(w1 * 0.95 - 0.1 * 0.5 / (0.5 + 1e-8), rel=1e-12)
    with pytest.raises(ValueError, match="unknown"):
        AdamW(p, no_decay={"nope"})


def test_clip_grad_norm_and_cosine_schedule_by_hand():
    g = {"a": np.array([3.0]), "b": np.array([4.0])}  # global norm 5
    assert clip_grad_norm(g, 10.0) == 5.0 and g["a"][0] == 3.0  # under the limit: untouched
    assert clip_grad_norm(g, 1.0) == 5.0
    np.testing.assert_allclose([g["a"][0], g["b"][0]], [0.6, 0.8])
    assert cosine_lr(0, 1.0, 10, 110) == pytest.approx(0.1)
    assert cosine_lr(9, 1.0, 10, 110) == pytest.approx(1.0)
    assert cosine_lr(60, 1.0, 10, 110, min_lr=0.2) == pytest.approx(0.6)  # half way: the mean
    assert cosine_lr(110, 1.0, 10, 110, min_lr=0.2) == 0.2
    assert cosine_lr(35, 1.0, 10, 110) == pytest.approx(0.5 * (1 + math.cos(math.pi / 4)))


def test_lm_batch_targets_are_the_next_tokens():
    tokens = np.arange(100)
    ids, targets, mask = lm_batch(tokens, 3, 8, np.random.default_rng(0))
    assert ids.shape == (3, 8) and mask is None
    np.testing.assert_array_equal(targets, ids + 1)
    np.testing.assert_array_equal(np.diff(ids, axis=1), 1)


def test_train_is_seeded_and_writes_checkpoint_history_and_plot(tmp_path):
    cfg = MiniGPTConfig(vocab_size=8, block_size=8, d_model=16, n_head=2, n_layer=1)
    tokens = np.tile(np.arange(8), 40)  # a stream a model can learn: 0 1 2 ... 7 0 1 ...
    tcfg = TrainConfig(steps=40, lr=1e-2, warmup=5, eval_interval=20, log_interval=20)
    runs = []
    for out in (tmp_path / "a", tmp_path / "b"):
        model, rng = MiniGPT(cfg, seed=0), np.random.default_rng(0)
        evals = [lm_batch(tokens, 4, 8, rng)]
        lines = []
        hist = train(model, lambda r: lm_batch(tokens, 4, 8, r), evals, tcfg, rng,
                     out_dir=out, log=lines.append)
        runs.append((model, hist))
        assert {p.name for p in out.iterdir()} == {"model.npz", "history.json", "loss.png"}
        assert any("tok/s" in line for line in lines)
    (a, ha), (b, hb) = runs
    assert ha["loss"] == hb["loss"]
    np.testing.assert_array_equal(a.params["wte"], b.params["wte"])
    assert ha["eval_step"] == [0, 20, 39]
    assert ha["eval_loss"][-1] < 0.5 * ha["eval_loss"][0]
    saved = MiniGPT.load(tmp_path / "a" / "model.npz")
    np.testing.assert_array_equal(saved.params["wte"], a.params["wte"])


def test_the_command_trains_a_tokenizer_when_none_is_given_and_reports_a_bad_kb(tmp_path,
                                                                                 capsys):
    from minimodel.train import main

    kb = tmp_path / "kb"
    kb.mkdir()
    for k in range(2):
        (kb / f"doc{k}.md").write_text(
            "# Doc\n\n" + " ".join(f"Rule {i} says word{i % 37} goes here." for i in range(300)),
            encoding="utf-8")
    out = tmp_path / "out"
    assert main(["--kb", str(kb), "--tokenizer", str(tmp_path / "none.json"), "--steps", "3",
                 "--batch-size", "2",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "training one on the KB text (vocab 1024)" in printed
    assert {"model.npz", "loss.png", "tokenizer.json", "history.json"} <= {
        p.name for p in out.iterdir()}
    from minitokenizer import BPETokenizer

    tok = BPETokenizer.load(out / "tokenizer.json")
    assert MiniGPT.load(out / "model.npz", tokenizer_sha256=tok.fingerprint).config.vocab_size \
        == len(tok)
    assert main(["--kb", str(tmp_path / "missing"), "--out", str(out)]) == 1
    assert "no *.md files" in capsys.readouterr().err
