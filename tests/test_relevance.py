"""minimodel.relevance in isolation, on random ids: the listwise loss on a hand-computed case,
gradients of every parameter against central finite differences in float64, scores through
cached passage states equal to scores of whole sequences, padding after the query unseen,
training through minimodel's loop until it ranks a toy task, and save/load."""

import numpy as np
import pytest
from gradcheck import perturbed, worst_sampled_error

from minimodel.checkpoint import CheckpointError
from minimodel.mini_gpt import MiniGPTConfig
from minimodel.relevance import RelevanceModel, list_softmax_loss
from minimodel.span_reader import SpanReader
from minimodel.train import TrainConfig, train

TINY = MiniGPTConfig(vocab_size=11, block_size=10, d_model=8, n_head=2, n_layer=2,
                     dtype="float64", n_segments=3)


def tiny(seed=0):
    return perturbed(RelevanceModel(TINY, seed=seed), seed + 7)


def test_list_softmax_loss_on_a_hand_computed_case():
    loss, ds = list_softmax_loss(np.zeros(4), 2)
    assert loss == pytest.approx(np.log(2))
    np.testing.assert_allclose(ds, [-0.25, 0.25, -0.25, 0.25])
    # one list, scores (ln 3, 0): p = (3/4, 1/4), loss = -ln(3/4), ds = p - onehot(0)
    loss, ds = list_softmax_loss(np.array([np.log(3.0), 0.0]), 2)
    assert loss == pytest.approx(-np.log(0.75))
    np.testing.assert_allclose(ds, [-0.25, 0.25])
    with pytest.raises(ValueError, match="lists of 3"):
        list_softmax_loss(np.zeros(4), 3)


def test_listwise_gradients_match_finite_differences():
    model, rng = tiny(), np.random.default_rng(1)
    ids = rng.integers(0, TINY.vocab_size, (6, 9))
    last = np.array([8, 6, 7, 8, 5, 8])
    segments = rng.integers(0, 3, (6, 9))
    _, grads = model.loss_and_grads(ids, last, 3, segments)
    assert set(grads) == set(model.params)
    worst, where = worst_sampled_error(lambda: model.loss_and_grads(ids, last, 3, segments)[0],
                                       model.params, grads, rng)
    assert worst < 1.0, where


def test_cached_passage_states_give_the_scores_of_whole_sequences():
    model, rng = tiny(), np.random.default_rng(2)
    passages = rng.integers(0, TINY.vocab_size, (4, 6))  # [U, P]
    query = [3, 1, 4]
    whole = np.hstack([passages, np.tile(query, (4, 1))])  # [U, P + 3]
    flags = rng.integers(1, 3, (4, 3))  # each query token's segment, per passage
    segments = np.hstack([np.zeros((4, 6), int), flags])
    expected = model.scores(whole, np.full(4, 8), segments)
    states = model.passage_states(passages)
    np.testing.assert_allclose(model.scores_after(states, query, flags), expected, atol=1e-12)
    # rows gathered in another order and repeated, as a re-ranker gathers its candidates
    pick = [2, 0, 2]
    gathered = [(k[pick], v[pick]) for k, v in states]
    np.testing.assert_allclose(model.scores_after(gathered, query, flags[pick]), expected[pick],
                               atol=1e-12)


def test_padding_after_the_read_position_is_never_seen():
    model, rng = tiny(), np.random.default_rng(3)
    ids = rng.integers(0, TINY.vocab_size, (3, 10))
    other = ids.copy()
    other[:, 7:] = rng.integers(0, TINY.vocab_size, (3, 3))
    np.testing.assert_allclose(model.scores(ids, [6, 5, 6]), model.scores(other, [6, 5, 6]))


def test_training_learns_to_rank_the_passage_that_holds_the_query_word():
    """Toy task: a passage is relevant when it holds the query's one word."""
    cfg = MiniGPTConfig(vocab_size=12, block_size=6, d_model=16, n_head=2, n_layer=1)  # no flags
    model, L = RelevanceModel(cfg, seed=0), 4

    def next_batch(rng):
        ids = rng.integers(4, 12, (8 * L, 6))  # passages of 4 tokens, <|q|> = 0, the word
        ids[:, 4] = 0
        for i in range(0, 8 * L, L):
            word = ids[i, rng.integers(0, 4)]  # the positive holds the word ...
            ids[i:i + L, 5] = word
            for j in range(i + 1, i + L):  # ... and no negative does
                ids[j, :4] = np.where(ids[j, :4] == word, 4 if word != 4 else 5, ids[j, :4])
        return ids, np.full(8 * L, 5), L

    rng = np.random.default_rng(0)
    train(model, next_batch, [], TrainConfig(steps=300, lr=1e-2, warmup=10, log_interval=1000),
          rng, log=lambda _: None)
    ids, last, _ = next_batch(np.random.default_rng(99))
    best = model.scores(ids, last).reshape(-1, L).argmax(axis=1)
    assert (best == 0).mean() >= 0.8


def test_save_load_round_trip_and_a_foreign_checkpoint(tmp_path):
    model = tiny()
    model.save(tmp_path / "r.npz")
    back = RelevanceModel.load(tmp_path / "r.npz")
    ids = np.arange(9).reshape(1, 9)
    assert back.scores(ids, [8]) == model.scores(ids, [8])
    SpanReader(TINY).save(tmp_path / "span.npz")
    with pytest.raises(CheckpointError, match="not a relevance checkpoint"):
        RelevanceModel.load(tmp_path / "span.npz")
