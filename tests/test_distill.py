"""Distillation into the bi-encoder (training/distill.py, training/encoder_init.py, the
similarity loss of encoders/layers.py): the loss by hand and against central finite
differences; the distilled start's shape, determinism (same teacher -> the same table) and a
hand-built case where the teacher's neighbours stay neighbours; the vocabulary pass (a BPE id
reads its text, a bucket its words); the teacher cache (a second build embeds nothing);
teacher-mined negatives by hand; training with init="teacher" lowers the loss and is
reproducible bit for bit. The teacher is a fake (tests/fakes.py): no weights needed."""

from dataclasses import replace

import numpy as np
import pytest
from fakes import FakeTeacher
from gradcheck import numeric_grad
from test_biencoder import chunks, small, tok  # noqa: F401 (module fixtures: the toy KB)

import minirag.encoders.minilm
from minirag.chunk import search_text
from minirag.encoders.layers import sim_mse_backward, sim_mse_forward
from minirag.training.distill import (
    item_vectors,
    mined_negatives,
    teacher_vectors,
    teacher_words,
    vocab_items,
)
from minirag.training.encoder_init import pca, teacher_init
from minirag.training.encoder_train import TrainConfig, train

RTOL, ATOL = 1e-6, 1e-8


def test_sim_mse_by_hand():
    eye, ones = np.eye(2), np.ones((2, 1))
    assert sim_mse_forward(eye, eye, eye, eye)[0] == 0.0
    # student cosines [[1, 0], [0, 1]], teacher's [[1, 1], [1, 1]]: two errors of 1 in 4
    assert sim_mse_forward(eye, eye, ones, ones)[0] == pytest.approx(0.5)


def test_sim_mse_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))  # student: A = 3, P = 5
    ta, tb = rng.standard_normal((3, 7)), rng.standard_normal((5, 7))  # teacher: width 7
    da, db = sim_mse_backward(sim_mse_forward(a, b, ta, tb)[1])
    loss = lambda: sim_mse_forward(a, b, ta, tb)[0]  # noqa: E731
    np.testing.assert_allclose(da, numeric_grad(loss, a), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(db, numeric_grad(loss, b), rtol=RTOL, atol=ATOL)
    # one set of vectors against itself: the two gradients add
    x = rng.standard_normal((4, 3))
    da, db = sim_mse_backward(sim_mse_forward(x, x, ta[:1].repeat(4, 0), tb[:4])[1])
    loss = lambda: sim_mse_forward(x, x, ta[:1].repeat(4, 0), tb[:4])[0]  # noqa: E731
    np.testing.assert_allclose(da + db, numeric_grad(loss, x), rtol=RTOL, atol=ATOL)
    first = sim_mse_backward(sim_mse_forward(a, b, ta, tb)[1])
    second = sim_mse_backward(sim_mse_forward(a, b, ta, tb)[1])
    assert all(np.array_equal(f, s) for f, s in zip(first, second))  # backward twice


def test_pca_by_hand():
    X = np.array([[2.0, 0.0, 1.0], [-2.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, -1.0, 1.0]])
    Z = pca(X, 2)  # centred: the constant third column goes; x varies most, then y
    np.testing.assert_allclose(Z, [[2, 0], [-2, 0], [0, 1], [0, -1]], atol=1e-12)
    np.testing.assert_allclose(pca(-X, 2), -Z, atol=1e-12)  # signs fixed by the data, not LAPACK


def test_vocab_items_read_token_text_and_bucket_words(tok, chunks):  # noqa: F811
    model = small(tok)
    items = vocab_items(model, [search_text(c) for c in chunks], ["zeppelin"])
    assert len(items) == len(model.idf)
    cat = tok.encode(" cats")
    if len(cat) == 1:
        assert items[cat[0]] == ["cats"]  # a BPE token reads its own text, stripped
    assert items[tok.special_ids["<|pad|>"]] == []  # a special id reads nothing
    zep = model.token_ids("zeppelin")  # several pieces, then its word id
    assert zep[-1] >= len(tok) and "zeppelin" in items[zep[-1]]


def distilled(tok, chunks, teacher, cache, **kw):  # noqa: F811
    model = small(tok, **kw)
    texts = [search_text(c) for c in chunks]
    ids = [model.token_ids(t) for t in texts]
    vectors, known = item_vectors(vocab_items(model, texts, teacher_words(teacher)), teacher,
                                  cache)
    model.set_idf(ids, known)
    return model, teacher_init(model, vectors, known, ids)


def test_distilled_start_shape_and_determinism(tok, chunks, tmp_path):  # noqa: F811
    a, start_a = distilled(tok, chunks, FakeTeacher(words=("zeppelin",)), tmp_path / "a")
    b, start_b = distilled(tok, chunks, FakeTeacher(words=("zeppelin",)), tmp_path / "b")
    assert start_a.shape == (len(tok) + 64, 6) and start_a.dtype == np.float64
    assert np.array_equal(start_a, start_b) and np.array_equal(a.idf, b.idf)
    assert np.array_equal(a.params["tok_emb"], start_a)
    zep = a.token_ids("zeppelin")[-1]  # a word no chunk holds keeps a weight and a vector
    assert a.idf[zep] > 0 and np.abs(start_a[zep]).sum() > 0
    assert np.all(start_a[tok.special_ids["<|pad|>"]] == 0)  # an id with no text: zero


def test_teacher_neighbours_stay_neighbours(tok, chunks, tmp_path):  # noqa: F811
    # the toy BPE spells these words in pieces, so each has its own word bucket (of 4096)
    topics = {"kitten": 1, "cats": 1, "snow": 2, "frost": 2}
    _, start = distilled(tok, chunks, FakeTeacher(topics, words=("kitten", "snow")), tmp_path,
                         word_buckets=4096)
    small_model = small(tok, word_buckets=4096)
    kit, cat, snow, frost = (start[small_model.token_ids(w)[-1]]
                             for w in ("kitten", "cats", "snow", "frost"))
    cos = lambda u, v: u @ v / np.linalg.norm(u) / np.linalg.norm(v)  # noqa: E731
    assert cos(kit, cat) > cos(kit, snow) + 0.3 and cos(snow, frost) > cos(cat, frost) + 0.3


def test_teacher_vectors_are_cached(tmp_path):
    teacher = FakeTeacher()
    first = teacher_vectors(["one two", "three"], teacher, tmp_path)
    again = teacher_vectors(["one two", "three"], teacher, tmp_path)
    assert teacher.calls == 2 and np.array_equal(first, again)  # the second read the cache
    teacher_vectors(["one two", "four"], teacher, tmp_path)  # other texts: a new key
    assert teacher.calls == 4 and len(list(tmp_path.iterdir())) == 2


def test_mined_negatives_by_hand():
    chunk_t = np.eye(4)  # [N = 4, E = 4]
    query_t = np.array([[0.5, 0.9, 0.0, 0.1]])  # the teacher ranks chunks 1, 0, 3, 2
    section = np.array([0, 0, 1, 2])  # chunks 0 and 1 share a section
    assert mined_negatives(query_t, chunk_t, np.array([1]), section, k=2) == [[3, 2]]


def test_training_from_the_teacher(tok, chunks, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(minirag.encoders.minilm, "MiniLMEmbedder", lambda: FakeTeacher())
    monkeypatch.setattr("minirag.training.distill.TEACHER_CACHE", tmp_path)
    cfg = TrainConfig(steps=30, batch_size=8, hard_negatives=2, eval_every=10, holdout=0.0,
                      init="teacher", distill=1.0, anchor=0.1, teacher_negatives=2, lr=1e-2,
                      warmup=5, early_stopping=False)
    runs = []
    for _ in range(2):
        model = small(tok, np.float32, d_embed=16, d_hidden=32, d=8)
        hist = train(model, chunks, cfg)
        runs.append(model.params)
    assert np.mean(hist["loss"][-5:]) < np.mean(hist["loss"][:5])
    assert all(np.array_equal(runs[0][k], runs[1][k]) for k in runs[0])
    with pytest.raises(ValueError, match="teacher"):
        train(small(tok), chunks, replace(cfg, init="bert"))
