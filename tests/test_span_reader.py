"""minimodel.span_reader in isolation, on random ids: gradients of the span loss against
central finite differences in float64 (every parameter tensor, sampled entries; gold
positions, soft targets and a null margin), backward
twice, the masked softmax, best_span on hand-built scores (bounds, max length, segments, the
null position), training through minimodel's loop until it points at the right tokens, and
save/load with tampered files."""

import numpy as np
import pytest
from gradcheck import perturbed, worst_sampled_error

from minimodel.checkpoint import CheckpointError
from minimodel.mini_gpt import MiniGPTConfig
from minimodel.span_reader import SpanReader, masked_log_softmax
from minimodel.train import TrainConfig, train

TINY = MiniGPTConfig(vocab_size=11, block_size=10, d_model=8, n_head=2, n_layer=2,
                     dtype="float64", n_segments=3)


def problem(rng, B=3, T=9):
    ids = rng.integers(0, TINY.vocab_size, (B, T))
    allowed = np.zeros((B, T), bool)
    allowed[:, 3:] = True
    spans = np.array([[3, 4], [5, 8], [8, 8]])[:B]  # the last row: the null position twice
    segments = rng.integers(0, TINY.n_segments, (B, T))  # table columns, say
    return ids, spans, allowed, segments


def tiny(seed=0):
    return perturbed(SpanReader(TINY, seed=seed), seed + 7)


def test_span_loss_gradients_match_finite_differences():
    model, rng = tiny(), np.random.default_rng(1)
    args = problem(rng)
    _, grads = model.loss_and_grads(*args)
    assert grads.keys() == model.params.keys() and "wse" in grads  # segment embeddings too
    worst = worst_sampled_error(lambda: model.loss_and_grads(*args)[0],
                                model.params, grads, rng, per_tensor=5)
    assert worst[0] < 1.0, f"error {worst[0]:.2f}x the tolerance at {worst[1]}"


def soft_targets(rng, allowed):
    """[B, 2, T]: random distributions over the allowed positions (another reader's, say)."""
    z = np.where(allowed[:, None, :], rng.normal(size=(allowed.shape[0], 2, allowed.shape[1])),
                 -np.inf)
    return np.exp(z) / np.exp(z).sum(axis=2, keepdims=True)


def test_soft_target_gradients_match_finite_differences():
    model, rng = tiny(), np.random.default_rng(11)
    ids, _, allowed, segments = problem(rng)
    args = (ids, soft_targets(rng, allowed), allowed, segments)
    _, grads = model.loss_and_grads(*args)
    worst = worst_sampled_error(lambda: model.loss_and_grads(*args)[0],
                                model.params, grads, rng, per_tensor=5)
    assert worst[0] < 1.0, f"error {worst[0]:.2f}x the tolerance at {worst[1]}"


def test_one_hot_targets_equal_gold_positions_and_own_probs_give_zero_gradient():
    model, rng = tiny(), np.random.default_rng(12)
    ids, spans, allowed, segments = problem(rng)
    one_hot = np.zeros((len(spans), 2, ids.shape[1]))
    one_hot[np.arange(len(spans)), 0, spans[:, 0]] = 1
    one_hot[np.arange(len(spans)), 1, spans[:, 1]] = 1
    (l1, g1), (l2, g2) = (model.loss_and_grads(ids, t, allowed, segments)
                          for t in (spans, one_hot))
    assert l1 == pytest.approx(l2, abs=1e-12)
    assert all(np.allclose(g1[k], g2[k], atol=1e-12) for k in g1)
    own = model.span_probs(ids, allowed, segments)  # [B, 2, T]
    assert np.allclose(own.sum(axis=2), 1) and np.all(own[:, :, ~allowed[0]] == 0)
    # the model's own distributions are the minimum of the cross-entropy: gradient 0
    _, g = model.loss_and_grads(ids, own, allowed, segments)
    assert max(np.abs(v).max() for v in g.values()) < 1e-10


def test_a_null_margin_in_the_loss_matches_finite_differences_and_its_hand_value():
    model, rng = tiny(), np.random.default_rng(13)
    ids, spans, allowed, segments = problem(rng)
    bias = np.zeros(ids.shape)
    bias[0, 8] = 2.5  # row 0's answer is (3, 4): its null (position 8) gets m / 2
    args = (ids, spans, allowed, segments, bias)
    loss, grads = model.loss_and_grads(*args)
    worst = worst_sampled_error(lambda: model.loss_and_grads(*args)[0],
                                model.params, grads, rng, per_tensor=5)
    assert worst[0] < 1.0, f"error {worst[0]:.2f}x the tolerance at {worst[1]}"
    # by hand: the cross-entropy of softmax(scores + bias) at the gold positions
    s, e, _ = model.scores(ids, segments)
    ls, le = masked_log_softmax(s + bias, allowed), masked_log_softmax(e + bias, allowed)
    rows = np.arange(len(spans))
    assert loss == pytest.approx(-(ls[rows, spans[:, 0]] + le[rows, spans[:, 1]]).mean())
    # the margin makes an answered row's loss larger; a zero bias changes nothing
    assert loss > model.loss_and_grads(ids, spans, allowed, segments)[0]
    assert model.loss_and_grads(ids, spans, allowed, segments, np.zeros(ids.shape))[0] == (
        model.loss_and_grads(ids, spans, allowed, segments)[0])


def test_backward_twice_gives_identical_grads():
    model, rng = tiny(), np.random.default_rng(2)
    args = problem(rng)
    _, g1 = model.loss_and_grads(*args)
    _, g2 = model.loss_and_grads(*args)
    assert all(np.array_equal(g1[k], g2[k]) for k in g1)


def test_segments_change_the_scores_and_are_checked():
    model, rng = tiny(), np.random.default_rng(3)
    ids, _, _, segments = problem(rng)
    s0, _, _ = model.scores(ids)  # no segments: all 0
    s1, _, _ = model.scores(ids, segments)
    assert np.allclose(s0, model.scores(ids, np.zeros_like(ids))[0])
    assert not np.allclose(s0, s1)
    with pytest.raises(ValueError, match="segments"):
        model.scores(ids, np.full_like(ids, TINY.n_segments))  # out of range
    plain = SpanReader(MiniGPTConfig(vocab_size=11, block_size=10, d_model=8, n_head=2))
    with pytest.raises(ValueError, match="no segment embeddings"):
        plain.scores(ids, segments)


def test_masked_positions_get_no_probability():
    z = np.array([[1.0, 5.0, 2.0, 0.0]])
    allowed = np.array([[True, False, True, True]])
    p = np.exp(masked_log_softmax(z, allowed))
    assert p[0, 1] == 0.0 and p.sum() == pytest.approx(1.0)
    expected = np.exp([1.0, 2.0, 0.0]) / np.exp([1.0, 2.0, 0.0]).sum()
    assert np.allclose(p[0, [0, 2, 3]], expected)


def test_best_span_respects_segments_length_and_order():
    model = SpanReader(TINY)
    start = np.array([0, 0, 0, 4, 0, 0, 1, 0, 0, 0.0])
    end = np.array([0, 0, 0, 0, 0, 0, 0, 9, 0, 1.0])
    # (3, 7) would score 13 but crosses from segment [2, 6) into [6, 9): not allowed
    s, e, span, null = model.best_span(start, end, [(2, 6), (6, 9)], null=9, max_len=8)
    assert (s, e, span) == (6, 7, 10.0) and null == 1.0
    # a span may not end before it starts, nor be longer than max_len
    s, e, _, _ = model.best_span(start, end, [(2, 9)], null=9, max_len=2)
    assert s <= e < s + 2
    assert model.best_span(start, end, [], null=9)[:2] == (-1, -1)


def test_training_through_minimodels_loop_learns_to_point():
    cfg = MiniGPTConfig(vocab_size=11, block_size=10, d_model=16, n_head=2, n_layer=1)
    model, rng = SpanReader(cfg, seed=0), np.random.default_rng(0)

    def batch(r):
        # the answer is wherever token 7 sits; no 7 -> the null position (the last one)
        ids = r.integers(0, 7, (16, 8))
        where = r.integers(2, 9, 16)  # 8 = no answer
        spans = np.full((16, 2), 7)
        for b, w in enumerate(where):
            if w < 8:
                ids[b, w - 1] = 7
                spans[b] = w - 1
        allowed = np.zeros((16, 8), bool)
        allowed[:, 1:] = True
        return ids, spans, allowed

    hist = train(model, batch, [batch(np.random.default_rng(9))],
                 TrainConfig(steps=150, lr=1e-2, warmup=10, log_interval=1000), rng,
                 log=lambda *a: None)
    assert hist["eval_loss"][-1] < 0.3 * hist["eval_loss"][0]
    ids, spans, allowed = batch(np.random.default_rng(5))
    s, e, _ = model.scores(ids)
    hits = [model.best_span(s[b], e[b], [(1, 7)], 7, 1)[0] if spans[b, 0] != 7 else 7
            for b in range(16)]
    assert np.mean(np.array(hits) == spans[:, 0]) > 0.8


def test_save_load_round_trip_and_tampering(tmp_path):
    model = tiny()
    model.save(tmp_path / "r.npz")
    back = SpanReader.load(tmp_path / "r.npz")
    args = problem(np.random.default_rng(3))
    assert model.loss_and_grads(*args)[0] == back.loss_and_grads(*args)[0]
    data = bytearray((tmp_path / "r.npz").read_bytes())
    (tmp_path / "cut.npz").write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(CheckpointError, match=r"cut\.npz"):
        SpanReader.load(tmp_path / "cut.npz")
    from minimodel.mini_gpt import MiniGPT
    MiniGPT(TINY).save(tmp_path / "lm.npz")
    with pytest.raises(CheckpointError, match="span_reader"):
        SpanReader.load(tmp_path / "lm.npz")
