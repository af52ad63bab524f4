"""The bi-encoder (encoders/biencoder.py, layers.py, words.py; training/encoder_pairs.py,
encoder_train.py): the new layers (weighted pooling, L2 norm, InfoNCE) and the whole model
checked against central finite differences in float64; backward twice gives the same
gradients; hand-checked examples (the word ids too); the LSA start is exactly LSA; training on
a toy corpus drives the loss down and retrieves its own pairs, bit-for-bit reproducibly;
save/load round trip and every broken file refused by name; no eval question is ever a
training query. The Embedder-protocol tests (shape, unit rows, determinism) run on the shipped
weights in test_embed.py."""

import json
import re
from dataclasses import replace

import numpy as np
import pytest
from gradcheck import numeric_grad

from minirag.chunk import chunk_text, search_text
from minirag.encoders.biencoder import BiEncoderConfig, BiEncoderError, MiniBiEncoder
from minirag.encoders.layers import (
    info_nce_backward,
    info_nce_forward,
    l2norm_backward,
    l2norm_forward,
    pool_backward,
    pool_forward,
)
from minirag.encoders.words import normalise, with_word_ids, word_bucket
from minirag.training.encoder_pairs import make_pairs, sentences, training_pairs
from minirag.training.encoder_train import HeldOut, TrainConfig, lsa_init, train
from minitokenizer import BPETokenizer

RTOL, ATOL = 1e-6, 1e-8  # central differences (eps 1e-6) in float64: errors ~ eps^2

TOPICS = {  # a toy knowledge base: five documents, two sections each, distinct vocabularies
    "cats.md": ["Cats sleep for sixteen hours a day. A kitten drinks milk from its mother.",
                "Cats purr when they are content. Whiskers help a cat feel narrow gaps."],
    "baking.md": ["Bread needs flour, water, salt and yeast. The dough rises in a warm oven.",
                  "Cakes use butter and sugar. Whisk the eggs before folding in the flour."],
    "weather.md": ["Thunder follows lightning during a storm. Heavy rain floods the valley.",
                   "Snow falls when the air is freezing. Frost covers the window at dawn."],
    "trains.md": ["The locomotive pulls twelve carriages. Passengers board at the platform.",
                  "Signals control the railway junction. The conductor checks every ticket."],
    "planets.md": ["Jupiter is the largest planet with a great red spot. Saturn has rings.",
                   "Mars looks red because of iron dust. Venus is hotter than Mercury."],
}


def toy_text(doc: str) -> str:
    a, b = TOPICS[doc]
    return f"# {doc[:-3].title()}\n\n## Basics\n\n{a}\n\n## Details\n\n{b}\n"


@pytest.fixture(scope="module")
def tok():
    return BPETokenizer.train("\n".join(toy_text(d) for d in TOPICS), 330, ["<|pad|>"])


@pytest.fixture(scope="module")
def chunks(tok):
    return [c for d in TOPICS for c in chunk_text(toy_text(d), d, 60, 0, tok)]


def small(tok, dtype=np.float64, seed=0, **kw):
    cfg = BiEncoderConfig(vocab_size=len(tok), word_buckets=64, d_embed=6, d_hidden=12, d=5)
    return MiniBiEncoder(replace(cfg, **kw), tok, np.random.default_rng(seed), dtype=dtype)


# --------------------------------------------------------------------------- the new layers


def test_pool_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4, 5)), rng.random((3, 4))  # [B, T, C], [B, T]
    w[2] = 0.0  # a text with no weight at all: zero vector, no gradient
    dout = rng.standard_normal((3, 5))  # [B, C]
    out, cache = pool_forward(x, w)
    assert np.all(out[2] == 0)
    dx, dw = pool_backward(dout, cache)
    loss = lambda: float((pool_forward(x, w)[0] * dout).sum())  # noqa: E731
    np.testing.assert_allclose(dx, numeric_grad(loss, x), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(dw[:2], numeric_grad(loss, w)[:2], rtol=RTOL, atol=ATOL)
    assert np.all(dw[2] == 0) and np.all(dx[2] == 0)


def test_pool_is_a_weighted_mean_by_hand():
    x = np.array([[[1.0, 0.0], [0.0, 2.0], [9.0, 9.0]]])  # [1, 3, 2]
    out, _ = pool_forward(x, np.array([[1.0, 3.0, 0.0]]))  # the third token is masked out
    np.testing.assert_allclose(out, [[0.25, 1.5]])  # (1 * [1, 0] + 3 * [0, 2]) / 4


def test_l2norm_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    x, dout = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    y, cache = l2norm_forward(x)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1.0)
    loss = lambda: float((l2norm_forward(x)[0] * dout).sum())  # noqa: E731
    np.testing.assert_allclose(l2norm_backward(dout, cache), numeric_grad(loss, x),
                               rtol=RTOL, atol=ATOL)


def test_info_nce_by_hand():
    loss, _ = info_nce_forward(np.eye(2), np.eye(2), tau=1.0)
    assert loss == pytest.approx(np.log(1 + np.exp(-1)))  # -log(e / (e + 1)) = 0.3133
    banned = np.array([[False, True], [True, False]])  # no negatives left: loss 0
    assert info_nce_forward(np.eye(2), np.eye(2), 1.0, banned)[0] == pytest.approx(0.0)


def test_info_nce_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    q, p = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))  # B = 3, P = 5
    banned = np.zeros((3, 5), dtype=bool)
    banned[0, 3] = banned[2, 1] = True
    dq, dp = info_nce_backward(info_nce_forward(q, p, 0.3, banned)[1])
    loss = lambda: info_nce_forward(q, p, 0.3, banned)[0]  # noqa: E731
    np.testing.assert_allclose(dq, numeric_grad(loss, q), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(dp, numeric_grad(loss, p), rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------------------------- the model


def toy_batch(model):
    texts_q = ["cats sleep", "bread flour yeast", "snow and frost"]
    texts_p = ["Cats purr and sleep.", "The dough rises.", "Frost at dawn.", "Saturn rings"]
    (qi, qm), (pi, pm) = (model.batch([model.token_ids(t) for t in ts])
                          for ts in (texts_q, texts_p))
    qm[1, 1] = 0.0  # a dropped-out query token
    banned = np.zeros((3, 4), dtype=bool)
    banned[0, 2] = True
    return qi, qm, pi, pm, banned


def model_loss_and_grads(model, qi, qm, pi, pm, banned):
    q, cq = model.forward(qi, qm)
    p, cp = model.forward(pi, pm)
    loss, cache = info_nce_forward(q, p, 0.5, banned)
    dq, dp = info_nce_backward(cache)
    gq, gp = model.backward(dq, cq), model.backward(dp, cp)
    return loss, {k: gq[k] + gp[k] for k in gq}, (dq, cq)


@pytest.mark.parametrize("n_layer", [0, 1], ids=["bag", "attention"])
def test_whole_model_gradients_match_finite_differences(tok, n_layer):
    model = small(tok, n_layer=n_layer, n_head=2)
    rng = np.random.default_rng(3)
    model.params["tok_logw"][:] = 0.3 * rng.standard_normal(model.params["tok_logw"].shape)
    for name in model.params:  # blocks start as the identity: move them off it first
        if name.startswith(("h0.", "wpe")):
            model.params[name] += 0.3 * rng.standard_normal(model.params[name].shape)
    model.set_idf([model.token_ids(t) for t in ["cats sleep", "the dough", "snow frost"]])
    batch = toy_batch(model)
    _, grads, _ = model_loss_and_grads(model, *batch)
    used = np.unique(np.concatenate([batch[0].ravel(), batch[2].ravel()]))  # ids in the batch
    for name, value in model.params.items():
        x = value[used] if name.startswith("tok") else value  # only rows the batch touches
        sub = x.copy()

        def loss(name=name, sub=sub):
            saved = model.params[name].copy()
            if name.startswith("tok"):
                model.params[name][used] = sub
            else:
                model.params[name][...] = sub
            out = model_loss_and_grads(model, *batch)[0]
            model.params[name][...] = saved
            return out

        want = numeric_grad(loss, sub)
        got = grads[name][used] if name.startswith("tok") else grads[name]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=name)


def test_attention_blocks_start_as_the_identity_and_ignore_padding(tok):
    bag, ctx = small(tok), small(tok, n_layer=2, n_head=2)
    for k in bag.params:  # the same token table, weights and MLP
        ctx.params[k][...] = bag.params[k]
    texts = ["cats sleep on mats", "the dough rises", ""]
    assert np.allclose(ctx.embed(texts), bag.embed(texts), atol=1e-12)  # identity at start
    rng = np.random.default_rng(5)
    for name in ctx.params:
        if name.startswith(("h0.", "h1.", "wpe")):
            ctx.params[name] += 0.3 * rng.standard_normal(ctx.params[name].shape)
    ids, mask = ctx.batch([ctx.token_ids(t) for t in texts[:2]])  # row 1 padded
    alone = ctx.forward(*ctx.batch([ctx.token_ids(texts[1])]))[0]
    np.testing.assert_allclose(ctx.forward(ids, mask)[0][1], alone[0], atol=1e-12)
    order = ctx.embed(["dough rises the"])  # word order now counts; in a bag it does not
    assert not np.allclose(order, ctx.embed(["the dough rises"]))
    assert np.allclose(bag.embed(["dough rises the"]), bag.embed(["the dough rises"]))


def test_backward_twice_gives_the_same_gradients(tok):
    model = small(tok)
    model.set_idf([model.token_ids(t) for t in ["cats sleep", "snow"]])
    _, _, (dq, cq) = model_loss_and_grads(model, *toy_batch(model))
    first, second = model.backward(dq, cq), model.backward(dq, cq)
    assert first.keys() == second.keys() == model.params.keys()
    for k in first:
        assert np.array_equal(first[k], second[k]) and first[k] is not second[k]


def test_normalise_and_word_ids(tok):
    assert normalise("Swim (SWAM), swum! ___") == " swim swam swum"
    model = small(tok)
    ids = model.token_ids("Locomotive!")
    pieces = tok.encode(" locomotive")
    if len(pieces) > 1:  # a word of several tokens is followed by its hashed word id
        assert ids[:-1] == pieces and ids[-1] >= len(tok)
    assert all(i < len(tok) for i in model.token_ids("a"))  # one-token words get none


def test_word_ids_by_hand():
    starts = [True, False, False, True]  # ids 0 and 3 start a word, 1 and 2 continue one
    word = 4 + word_bucket([0, 1, 2], 8)  # V = 4, K = 8: the word id of the pieces 0 1 2
    assert with_word_ids([0, 1, 2, 3], starts, 4, 8) == [0, 1, 2, word, 3]
    assert with_word_ids([3, 0, 1, 2], starts, 4, 8) == [3, 0, 1, 2, word]  # closed by the end
    assert with_word_ids([3, 0, 3], starts, 4, 8) == [3, 0, 3]  # one-piece words get none


def test_truncation_to_max_tokens(tok):
    model = small(tok, max_tokens=8)
    long = "cats sleep " * 200
    assert len(model.token_ids(long)) == 8
    assert np.array_equal(model.embed([long]), model.embed([long[:200]]))  # the rest is unread


def test_sublinear_tf(tok):
    model = small(tok)
    _, mask = model.batch([[5, 5, 5, 7]])  # id 5 three times, id 7 once
    np.testing.assert_allclose(mask[0], [np.log(4) / 3] * 3 + [np.log(2)])


def test_lsa_init_is_exactly_lsa(tok, chunks):
    model = small(tok, d_embed=6, d_hidden=12, d=4)
    texts = [search_text(c) for c in chunks]
    ids = [model.token_ids(t) for t in texts]
    model.set_idf(ids)
    lsa_init(model, ids)
    X = np.zeros((len(ids), len(model.idf)))
    for i, row in enumerate(ids):
        np.add.at(X[i], row, 1.0)
    X = np.log1p(X) * model.idf
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    proj = X @ np.linalg.svd(X, full_matrices=False)[2][:4].T  # the top-4 LSA coordinates
    proj /= np.linalg.norm(proj, axis=1, keepdims=True)
    np.testing.assert_allclose(model.embed(texts), proj, atol=1e-5)  # embed is float32


# ------------------------------------------------------------------------------- training


def test_sentences_split_lines_and_sentence_ends():
    assert sentences("Go on. I went there today.\n| go | went | gone | going |") == [
        "I went there today.", "| go | went | gone | going |"]


def test_training_lowers_the_loss_and_retrieves_its_own_pairs(tok, chunks):
    model = small(tok, np.float32, d_embed=16, d_hidden=32, d=8)
    cfg = TrainConfig(steps=60, batch_size=8, hard_negatives=2, eval_every=20, holdout=0.0,
                      init="random", lr=1e-2, warmup=5)
    hist = train(model, chunks, cfg)
    assert np.mean(hist["loss"][-10:]) < 0.5 * np.mean(hist["loss"][:5])
    pairs = training_pairs(chunks, cfg)[0]  # sentences, headings and (cloze) fact questions
    P = model.embed([search_text(c) for c in chunks])  # [N, D] the index
    top = np.argmax(model.embed([p.query for p in pairs]) @ P.T, axis=1)
    hit = np.mean([top[i] == p.chunk for i, p in enumerate(pairs)])
    assert hit >= 0.9, hit


def test_same_seed_same_weights_bit_for_bit(tok, chunks):
    cfg = TrainConfig(steps=15, batch_size=8, hard_negatives=2, eval_every=5, holdout=0.2,
                      early_stopping=False)  # (early stopping could keep the seedless LSA start)
    a, b = (small(tok, np.float32, d_embed=8, d_hidden=16, d=4) for _ in range(2))
    train(a, chunks, cfg)
    train(b, chunks, cfg)
    for k in a.params:
        assert a.params[k].tobytes() == b.params[k].tobytes(), k
    c = small(tok, np.float32, d_embed=8, d_hidden=16, d=4)
    train(c, chunks, replace(cfg, seed=1))
    assert any(a.params[k].tobytes() != c.params[k].tobytes() for k in a.params)


def test_held_out_sentences_are_never_training_queries(chunks):
    train_pairs, held = make_pairs(chunks, 0.3)
    assert held and not {p.query for p in held} & {p.query for p in train_pairs}
    assert all(p.query not in p.cut and p.query in p.full for p in held)
    dev = HeldOut(held, chunks, np.random.default_rng(0))
    assert len(dev.keywords) == len(held)
    # questions about held-out facts (split_facts: by key) are never training queries
    pairs, _, held_facts = training_pairs(chunks, TrainConfig(holdout=0.3, fact_share=0.5))
    assert held_facts and not {p.query for p in held_facts} & {p.query for p in pairs}
    assert len(pairs) == 2 * len(train_pairs)  # fact_share 0.5: as many questions as sentences


def test_no_training_query_is_near_an_eval_question(repo):
    """Sentences, headings and fact questions all pass the shared eval filter: none is, or
    nearly is, a dev or test question (identical, a shared 5-gram, Jaccard >= 0.8)."""
    from minirag.chunk import load_kb
    from minirag.files.artifacts import load_tokenizer
    from minirag.training.eval_filter import eval_filter
    chunks = load_kb(repo / "data" / "rag-kb", tokenizer=load_tokenizer())
    pairs, held, held_facts = training_pairs(chunks, TrainConfig())
    queries = {p.query for p in pairs + held + held_facts}
    assert len(queries) > 1000 and len(held_facts) > 100
    gate = eval_filter()
    assert sum(gate.too_close(q) for q in queries) == 0


# ------------------------------------------------------------------------------------ files


@pytest.mark.parametrize("n_layer", [0, 1], ids=["bag", "attention"])
def test_save_load_round_trip(tok, tmp_path, n_layer):
    model = small(tok, np.float32, n_layer=n_layer, n_head=2)
    model.set_idf([model.token_ids(t) for t in ["cats sleep", "snow"]])
    model.save(tmp_path / "m.npz")
    again = MiniBiEncoder.load(tmp_path / "m.npz", tok)
    assert again.cfg == model.cfg and again.config == model.config
    for k in model.params:
        assert np.array_equal(again.params[k], model.params[k])
    texts = ["cats sleep", "the dough rises", ""]
    assert np.array_equal(again.embed(texts), model.embed(texts))


def test_broken_files_are_refused_by_name(tok, tmp_path):
    model = small(tok, np.float32)
    path = tmp_path / "m.npz"
    model.save(path)
    data = path.read_bytes()
    cases = {"truncated.npz": data[: len(data) // 2], "empty.npz": b"",
             "noise.npz": b"PK\x03\x04" + bytes(100)}
    for name, blob in cases.items():
        (tmp_path / name).write_bytes(blob)
    z = dict(np.load(path, allow_pickle=False))
    np.savez(tmp_path / "tampered.npz", **{**z, "w1": z["w1"] + 1e-3})  # header untouched
    header = json.loads(str(z["__header__"][()]))
    for name, change in (("version.npz", {"version": 99}), ("format.npz", {"format": "x"}),
                         ("tokenizer.npz", {"config": {**header["config"],
                                                       "tokenizer_sha256": "0" * 64}}),
                         ("config.npz", {"config": {**header["config"], "d": 32}}),
                         ("vocab.npz", {"config": {**header["config"], "vocab_size": 7}})):
        z["__header__"] = np.array(json.dumps({**header, **change}))
        np.savez(tmp_path / name, **z)
    expect = {"truncated.npz": "unreadable", "empty.npz": "unreadable",
              "noise.npz": "unreadable", "tampered.npz": "checksum",
              "version.npz": "version", "format.npz": "not a", "tokenizer.npz": "tokenizer",
              "config.npz": "config", "vocab.npz": "config"}
    for name, words in expect.items():
        with pytest.raises(BiEncoderError, match=re.escape(str(tmp_path / name))) as e:
            MiniBiEncoder.load(tmp_path / name, tok)
        assert words in str(e.value), (name, str(e.value))
    with pytest.raises(BiEncoderError, match="not found"):
        MiniBiEncoder.load(tmp_path / "missing.npz", tok)
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".tmp") == []
