"""embed.py: one body of tests parametrised over every Embedder (shape, float32, unit or zero
rows, determinism across processes), then the HashingEmbedder's own properties (stable hash,
signed buckets, sublinear TF, IDF)."""

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minirag.embed import HashingEmbedder, VectorsOnly, stable_hash

TEXTS = ["What is the past simple of go?", "Irregular verbs: go, went, gone.",
         "", "   ", "Café déjà vu 🙂", "she has written three letters"]


def make_hashing():
    return HashingEmbedder(d=64).fit(TEXTS)


def make_biencoder():
    from minirag.encoders.biencoder import load_biencoder
    return load_biencoder()  # the shipped weights, data/models/biencoder.npz


EMBEDDERS = [make_hashing, make_biencoder]


@pytest.fixture(params=EMBEDDERS, ids=lambda f: f.__name__)
def embedder(request):
    return request.param()


def test_shape_and_dtype(embedder):
    X = embedder.embed(TEXTS)
    assert X.shape == (len(TEXTS), embedder.d)
    assert X.dtype == np.float32
    assert embedder.embed([]).shape == (0, embedder.d)


def test_rows_are_unit_norm_or_zero(embedder):
    norms = np.linalg.norm(embedder.embed(TEXTS), axis=1)
    assert np.all(np.isclose(norms, 1.0, atol=1e-5) | (norms == 0.0)), norms
    assert norms[2] == 0.0 and norms[3] == 0.0  # no words -> the zero vector


def test_deterministic_and_batch_independent(embedder):
    X = embedder.embed(TEXTS)
    assert np.array_equal(X, embedder.embed(TEXTS))
    assert np.array_equal(X[1], embedder.embed([TEXTS[1]])[0])


def test_a_str_instead_of_a_list_is_an_error(embedder):
    with pytest.raises(TypeError, match="list"):
        embedder.embed("one text")


@pytest.mark.parametrize("factory", EMBEDDERS, ids=lambda f: f.__name__)
def test_same_vectors_in_a_fresh_process(factory):
    here = str(Path(__file__).parent)
    code = (f"import sys; sys.path.insert(0, {here!r}); from test_embed import TEXTS, "
            f"{factory.__name__} as make; sys.stdout.write(make().embed(TEXTS).tobytes().hex())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert bytes.fromhex(out) == factory().embed(TEXTS).tobytes()


def test_vectors_only_knows_its_width_and_refuses_text():
    e = VectorsOnly(16)
    assert e.d == 16 and e.name == "vectors-only"
    with pytest.raises(ValueError, match="search_vector"):
        e.embed(["past of go"])


def test_stable_hash_is_blake2b_not_pythons_salted_hash():
    expected = int.from_bytes(hashlib.blake2b(b"went", digest_size=8).digest(), "little")
    assert stable_hash("went") == expected == 15766389652680825056


def test_hashing_features_words_and_edge_trigrams():
    f = HashingEmbedder().features("Go go GONE")
    assert f["go"] == 2 and f["gone"] == 1
    assert f["#<go"] == 3 and f["#go>"] == 2 and f["#ne>"] == 1


def test_hashing_bucket_and_sign_of_one_word():
    e = HashingEmbedder(d=256, char_weight=0.0, use_idf=False)
    v = e.embed(["went"])[0]
    # "went" -> bucket 15766389652680825056 % 256 = 224, top bit 1 -> sign +1
    assert v[224] == pytest.approx(1.0) and np.count_nonzero(v) == 1


def test_sublinear_tf():
    e = HashingEmbedder(d=1024, char_weight=0.0, use_idf=False)
    one, three = e.embed(["went", "went went went"])
    assert np.allclose(one, three)  # one word: the norm removes tf entirely
    v = e.embed(["went went went cat"])[0]
    b_went, b_cat = stable_hash("went") % 1024, stable_hash("cat") % 1024
    assert abs(v[b_went] / v[b_cat]) == pytest.approx(np.log1p(3) / np.log1p(1))


def test_idf_weights_rare_words_more():
    corpus = ["the cat", "the dog", "the bird", "a cat"]
    e = HashingEmbedder(d=4096, char_weight=0.0).fit(corpus)
    v = e.embed(["the bird"])[0]
    b_the, b_bird = stable_hash("the") % 4096, stable_hash("bird") % 4096
    assert abs(v[b_bird]) > abs(v[b_the])
    assert e.idf["the"] == pytest.approx(np.log(5 / 4) + 1)
    assert e.idf["bird"] == pytest.approx(np.log(5 / 2) + 1)


def test_bad_dimension():
    with pytest.raises(ValueError, match="d"):
        HashingEmbedder(d=0)
