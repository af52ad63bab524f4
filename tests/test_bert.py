"""bert.py (and teacher.py, which feeds it): erf against math.erf, a tiny random BERT's shapes,
unit rows, padding invariance and hand-checkable pieces (no layers = the embedding LayerNorm;
one token attends only to itself), the config and weight checks; then the oracle: our
all-MiniLM-L6-v2 against sentence-transformers' own embeddings of 29 sentences
(tests/fixtures/minilm_reference.npz, made by tests/fixtures/make_minilm_reference.py)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minimodel.bert import (
    Bert,
    BertConfig,
    BertWeightsError,
    erf,
    gelu,
    l2_normalize,
    mean_pool,
    weight_shapes,
)
from minimodel.layers import layernorm_forward

FIXTURE = "tests/fixtures/minilm_reference.npz"
TINY = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=16, max_position_embeddings=16, type_vocab_size=2)


def random_weights(config: BertConfig, seed: int = 0, prefix: str = "") -> dict:
    """Every weight the config needs, random (LayerNorm gains near 1), float32."""
    rng = np.random.default_rng(seed)
    return {prefix + n: (1.0 + 0.1 * rng.standard_normal(s) if "LayerNorm.weight" in n
                         else 0.5 * rng.standard_normal(s)).astype(np.float32)
            for n, s in weight_shapes(config).items()}


@given(st.floats(-12, 12, allow_nan=False))
def test_erf_within_1e6_of_math_erf(x):
    """A&S bound the formula's error by 1.5e-7; in float32, 1 - poly * exp(-x^2) also loses a
    few ulps of 1 to cancellation near 0 (where GELU multiplies it by x ~ 0 anyway)."""
    got = float(erf(np.array([x], dtype=np.float32))[0])
    assert abs(got - math.erf(np.float32(x))) <= 1e-6


def test_erf_is_odd_and_gelu_is_x_phi():
    x = np.linspace(-6, 6, 101, dtype=np.float32)  # [101]
    assert np.array_equal(erf(-x), -erf(x))
    phi = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    assert np.abs(gelu(x) - x * phi).max() < 1e-6
    assert gelu(np.zeros(3, np.float32)).tolist() == [0.0, 0.0, 0.0]
    assert gelu(x).dtype == np.float32 and erf(x).dtype == np.float32


def test_mean_pool_ignores_padding_and_rows_are_unit():
    h = np.arange(12, dtype=np.float32).reshape(1, 3, 4)  # [1, 3, 4]
    mask = np.array([[1, 1, 0]])  # the third token is padding
    assert mean_pool(h, mask).tolist() == [[2.0, 3.0, 4.0, 5.0]]  # mean of rows 0 and 1
    v = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    assert np.allclose(v[0], [0.6, 0.8]) and v[1].tolist() == [0.0, 0.0]  # zero stays, no NaN


def test_shapes_dtype_and_unit_rows():
    bert = Bert(TINY, random_weights(TINY))
    h = bert.forward(np.array([[2, 5, 7, 3]]), np.ones((1, 4)))
    assert h.shape == (1, 4, 8) and h.dtype == np.float32
    X = bert.embed_ids([[2, 5, 3], [2, 9, 9, 9, 9, 3], [2, 3]])
    assert X.shape == (3, 8) and X.dtype == np.float32
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-6)


@given(st.lists(st.integers(1, 49), min_size=1, max_size=6),
       st.lists(st.lists(st.integers(1, 49), min_size=1, max_size=14), max_size=3))
def test_padding_a_batch_changes_no_text(ids, others):
    """A text's vector is the same alone and beside longer texts (padding is masked)."""
    bert = Bert(TINY, random_weights(TINY))
    alone = bert.embed_ids([ids])[0]  # [C]
    batched = bert.embed_ids([ids] + others + [[7] * 16])[0]  # padded to 16 tokens
    assert np.abs(alone - batched).max() < 1e-6


def test_without_layers_a_token_is_its_normalised_embedding():
    cfg = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=0, num_attention_heads=2,
                     intermediate_size=16, max_position_embeddings=16)
    w = random_weights(cfg)
    h = Bert(cfg, w).forward(np.array([[4, 9]]), np.ones((1, 2)))  # [1, 2, 8]
    x = (w["embeddings.word_embeddings.weight"][9] + w["embeddings.position_embeddings.weight"][1]
         + w["embeddings.token_type_embeddings.weight"][0])  # token 9 at position 1
    ln = layernorm_forward(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                           1e-12)[0]
    assert np.allclose(h[0, 1], ln, atol=1e-6)


def test_one_token_attends_only_to_itself():
    """With one real token (and padding) softmax has one term: attention = its value vector,
    through the output projection."""
    bert = Bert(TINY, random_weights(TINY))
    x = np.random.default_rng(1).standard_normal((1, 3, 8)).astype(np.float32)  # [1, 3, C]
    out = bert.attention(x, np.array([[True, False, False]]), "encoder.layer.0.")
    w = bert.w
    v = x[0, 0] @ w["encoder.layer.0.attention.self.value.weight"].T \
        + w["encoder.layer.0.attention.self.value.bias"]  # [C]
    o = v @ w["encoder.layer.0.attention.output.dense.weight"].T \
        + w["encoder.layer.0.attention.output.dense.bias"]  # [C]
    assert np.allclose(out[0, 0], o, atol=1e-5)


def test_config_and_weight_checks():
    assert BertConfig.from_dict({"hidden_size": 8, "num_attention_heads": 2, "extra": 1}
                                ).hidden_size == 8
    with pytest.raises(ValueError, match="gelu"):
        BertConfig.from_dict({"hidden_act": "relu"})
    with pytest.raises(ValueError, match="absolute"):
        BertConfig.from_dict({"position_embedding_type": "relative_key"})
    with pytest.raises(ValueError, match="divisible"):
        BertConfig(hidden_size=10, num_attention_heads=3)
    w = random_weights(TINY)
    assert Bert(TINY, random_weights(TINY, prefix="bert.")).w.keys() == w.keys()  # "bert." ok
    with pytest.raises(BertWeightsError, match="missing"):
        Bert(TINY, {k: v for k, v in w.items() if "layer.1." not in k})
    with pytest.raises(BertWeightsError, match="shape"):
        Bert(TINY, {**w, "encoder.layer.0.output.dense.weight": np.zeros((8, 8), np.float32)})
    with pytest.raises(ValueError, match="at most 16"):
        Bert(TINY, w).forward(np.ones((1, 17), dtype=int), np.ones((1, 17)))


# ------------------------------------------- the oracle: the real model vs sentence-transformers


@pytest.fixture(scope="module")
def teacher():
    from minimodel.teacher import TeacherMissing, load_teacher
    try:
        return load_teacher()
    except TeacherMissing as e:
        pytest.skip(str(e))


def test_sentence_transformers_oracle(teacher, repo):
    ref = np.load(repo / FIXTURE, allow_pickle=False)
    sentences = [str(s) for s in ref["sentences"]]
    R = ref["embeddings"]  # [29, 384] float32, sentence-transformers' vectors
    assert R.shape == (len(sentences), 384) and "" in sentences
    assert len(teacher.tokenizer.encode(sentences[-1], 10**6)) > 256  # one is truncated
    X = teacher.embed(sentences)  # [29, 384]
    assert X.shape == R.shape and X.dtype == np.float32
    assert np.abs(X - R).max() <= 1e-5
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-6)


def test_real_model_padding_and_batch_order_change_nothing(teacher):
    texts = ["The past of swim is swam.", "a", "Plurals: mouse, mice; goose, geese. " * 12]
    together = teacher.embed(texts)  # one batch, padded to the longest
    for i, t in enumerate(texts):
        assert np.abs(teacher.embed([t])[0] - together[i]).max() < 1e-6
    assert teacher.embed([]).shape == (0, 384)
