"""BM25Index in isolation: a 3-chunk example checked by hand (postings and scores), equality
with rank_bm25 (okapi IDF) and bm25s (lucene IDF) on random corpora, the small-corpus pitfalls
that broke rank_bm25, bad input, explain(), and the save/load round trip and its tamper checks.

The hand example, k1 = 1.2, b = 0.75, lucene IDF:
    c0 = "the cat sat"            3 tokens
    c1 = "the cat ate the fish"   5 tokens      N = 3, avgdl = 10/3
    c2 = "a dog"                  2 tokens
Vocabulary in first-seen order: the cat sat ate fish a dog
    postings  the: c0(tf 1) c1(tf 2) | cat: c0 c1 | sat: c0 | ate: c1 | fish: c1 | a: c2 | dog: c2
    indptr = [0, 2, 4, 5, 6, 7, 8, 9]
idf(cat)  = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln 1.6   = 0.470004
idf(fish) = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln 8/3   = 0.980829
length norm K(c) = 1.2 * (0.25 + 0.75 * len / avgdl): K(c0) = 1.11, K(c1) = 1.65
tfc = tf * 2.2 / (tf + K): cat in c0 = 2.2 / 2.11 = 1.042654
                           cat or fish in c1 = 2.2 / 2.65 = 0.830189
score("cat fish") = [0.470004 * 1.042654, (0.470004 + 0.980829) * 0.830189, 0]
                  = [0.490051, 1.204465, 0]
"""

import json
import math

import numpy as np
import pytest
from fakes import make_chunks
from hypothesis import given
from hypothesis import strategies as st

from minirag.bm25 import BM25Error, BM25Index, tokenize
from minirag.tables import cue_words

K1, B = 1.2, 0.75


def index_of(texts: list[str], **kw) -> BM25Index:
    ix = BM25Index(**kw)
    ix.add(make_chunks(texts))
    return ix


HAND = ["the cat sat", "the cat ate the fish", "a dog"]


def zipf_corpus(rng: np.random.Generator, n_docs: int, n_terms: int = 40, max_len: int = 14):
    """Random token lists with a Zipf-like term distribution; some empty, some repeated terms."""
    terms = np.array([f"w{i}" for i in range(n_terms)])
    p = 1.0 / np.arange(1, n_terms + 1) ** 1.1
    p /= p.sum()
    return [list(rng.choice(terms, size=rng.integers(0, max_len), p=p)) for _ in range(n_docs)]


# ---------------------------------------------------------------- the hand-checked example


def test_hand_example_postings():
    ix = index_of(HAND)
    assert list(ix.vocab) == ["the", "cat", "sat", "ate", "fish", "a", "dog"]
    assert ix.indptr.tolist() == [0, 2, 4, 5, 6, 7, 8, 9]
    assert ix.doc.tolist() == [0, 1, 0, 1, 0, 1, 1, 2, 2]
    assert ix.tf.tolist() == [1, 2, 1, 1, 1, 1, 1, 1, 1]
    assert ix.doc_len.tolist() == [3, 5, 2]


def test_hand_example_scores():
    ix = index_of(HAND)
    s = ix.scores("Cat, fish!")
    np.testing.assert_allclose(s, [0.490051, 1.204465, 0.0], atol=1e-6)
    # and the same figures from the formula, to full precision
    idf_cat, idf_fish = math.log(1.6), math.log(8 / 3)
    assert s[0] == pytest.approx(idf_cat * 2.2 / (1 + 1.11), rel=1e-12)
    assert s[1] == pytest.approx((idf_cat + idf_fish) * 2.2 / (1 + 1.65), rel=1e-12)
    hits = ix.search("cat fish", k=5)
    assert [(c.text, round(x, 6)) for c, x in hits] == [(HAND[1], 1.204465), (HAND[0], 0.490051)]


def test_explain_shares_sum_to_the_score():
    ix = index_of(HAND)
    c1 = make_chunks(HAND)[1]
    shares = ix.explain("fish cat unknown cat", c1.id)
    assert list(shares) == ["fish", "cat", "unknown"]
    assert shares["unknown"] == 0.0
    assert shares["cat"] == pytest.approx(2 * math.log(1.6) * 2.2 / 2.65, rel=1e-12)  # said twice
    assert sum(shares.values()) == pytest.approx(ix.scores("fish cat unknown cat")[1], rel=1e-12)
    with pytest.raises(BM25Error, match="no chunk with id 'nope'"):
        ix.explain("cat", "nope")


def test_tokenize():
    assert tokenize("Don’t say 'goed', say WENT.") == ["don't", "say", "goed", "say", "went"]
    assert tokenize("won't") != ["won", "t"]  # "won" is the past of "win"
    assert tokenize("  ?!  ") == []


def test_cue_words_are_the_bracketed_words_of_a_fill_in():
    assert cue_words("the wolf ___ (howl) at the moon") == ["howl"]
    assert cue_words("she bought ___ rope (a / an)") == ["a", "an"]
    assert cue_words("past participle of go") == []


# ---------------------------------------------------------------- reference libraries


@pytest.mark.parametrize("seed", range(4))
def test_okapi_idf_equals_rank_bm25(seed):
    rank_bm25 = pytest.importorskip("rank_bm25")
    rng = np.random.default_rng(seed)
    docs = zipf_corpus(rng, n_docs=int(rng.integers(2, 60)))
    if not any(docs):  # rank_bm25 divides by avgdl = 0
        docs[0] = ["w0"]
    texts = [" ".join(d) for d in docs]
    ix = BM25Index(idf="okapi")
    half = len(texts) // 2  # two add() calls must give the same index as one
    ix.add(make_chunks(texts)[:half])
    ix.add(make_chunks(texts)[half:])
    ref = rank_bm25.BM25Okapi(docs, k1=K1, b=B, epsilon=0.25)
    for _ in range(10):
        query = list(rng.choice([f"w{i}" for i in range(45)], size=rng.integers(1, 6)))
        np.testing.assert_allclose(ix.scores(" ".join(query)), ref.get_scores(query),
                                   rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_lucene_idf_equals_bm25s_times_k1_plus_1(seed):
    """bm25s' "lucene" drops Okapi's constant (k1 + 1) numerator factor; ours keeps it."""
    bm25s = pytest.importorskip("bm25s")
    rng = np.random.default_rng(100 + seed)
    docs = zipf_corpus(rng, n_docs=int(rng.integers(2, 60)))
    ix = index_of([" ".join(d) for d in docs])
    ref = bm25s.BM25(method="lucene", idf_method="lucene", k1=K1, b=B, dtype="float64")
    ref.index(docs, show_progress=False)
    known = sorted({t for d in docs for t in d})  # bm25s rejects words it has not indexed
    for _ in range(10):
        query = list(rng.choice(known, size=rng.integers(1, 6)))
        np.testing.assert_allclose(ix.scores(" ".join(query)),
                                   (K1 + 1) * ref.get_scores(query), rtol=1e-6, atol=1e-12)


# ---------------------------------------------------------------- small-corpus pitfalls


def test_term_in_exactly_half_the_chunks_scores_above_zero():
    ix = index_of(["go home", "go away", "stay home", "run away"])
    assert ix.idf[ix.vocab["go"]] == pytest.approx(math.log(2))
    assert ix.scores("go")[:2].min() > 0
    # rank_bm25's IDF gives ln(2/2) = 0 here: reproduced with idf="okapi", as documented;
    # the chunks holding "go" are still the results, with score 0
    okapi = index_of(["go home", "go away", "stay home", "run away"], idf="okapi")
    assert okapi.scores("go").max() == 0
    assert [(c.text, x) for c, x in okapi.search("go")] == [("go home", 0.0), ("go away", 0.0)]


def test_two_chunk_corpus_gives_non_zero_scores():
    ix = index_of(["she went home", "he goes home"])
    assert ix.scores("went")[0] > 0
    assert [c.text for c, _ in ix.search("went")] == ["she went home"]


def test_a_term_in_every_chunk_is_worth_less_than_a_rarer_one():
    texts = ["went is the past of go", "saw is the past of see", "the plural"]
    ix = index_of(texts)
    s = ix.scores("the went")
    per_term = ix.explain("the went", make_chunks(texts)[0].id)
    assert 0 < per_term["the"] < per_term["went"]
    assert s[0] > s[1] > 0


def test_b_zero_removes_length_effects():
    short, long = "went", "went " + " ".join(f"filler{i}" for i in range(30))
    s = index_of([short, long, "other"], b=0.0).scores("went")
    assert s[0] == pytest.approx(s[1], rel=1e-15)
    s = index_of([short, long, "other"]).scores("went")
    assert s[0] > s[1]


# ---------------------------------------------------------------- bad and odd input


def test_unknown_query_words_score_zero_and_find_nothing():
    ix = index_of(HAND)
    assert ix.scores("zebra").tolist() == [0.0, 0.0, 0.0]
    assert ix.search("zebra") == []
    np.testing.assert_array_equal(ix.scores("zebra cat"), ix.scores("cat"))


def test_empty_chunks_and_an_all_empty_index():
    ix = index_of(["", "   ", "?!"])  # avgdl = 0: no division by zero, nothing matches
    assert ix.doc_len.tolist() == [0, 0, 0]
    assert ix.scores("cat").tolist() == [0.0, 0.0, 0.0]
    assert ix.search("cat") == []
    ix.add(make_chunks(["cat"], doc="more.md"))
    assert [c.text for c, _ in ix.search("cat")] == ["cat"]
    assert BM25Index().search("cat") == []


def test_k_larger_than_n_returns_every_match_and_ties_keep_insertion_order():
    ix = index_of(["go", "go", "go", "went"])
    hits = ix.search("go", k=10)
    assert [c.offset for c, _ in hits] == [0, 1, 2]
    assert len({x for _, x in hits}) == 1


@pytest.mark.parametrize("query", ["", "   ", "?!"])
def test_empty_query_is_an_error(query):
    with pytest.raises(ValueError, match="no word tokens"):
        index_of(HAND).search(query)


@pytest.mark.parametrize("query", [b"go", None, ["go"]])
def test_a_query_that_is_not_text_is_an_error(query):
    with pytest.raises(ValueError, match="the query must be a str, got"):
        index_of(HAND).search(query)


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_k_is_an_error(k):
    with pytest.raises(ValueError, match="k must be"):
        index_of(HAND).search("cat", k=k)


def test_bad_parameters_and_duplicates_are_errors():
    for kw in ({"k1": -1}, {"b": 1.5}, {"idf": "bm25+"}):
        with pytest.raises(ValueError):
            BM25Index(**kw)
    ix = index_of(HAND)
    with pytest.raises(ValueError, match="duplicate"):
        ix.add(make_chunks(HAND)[:1])
    assert len(ix) == 3


@given(st.lists(st.text(alphabet="ab c", max_size=12), min_size=1, max_size=8),
       st.text(alphabet="ab c", min_size=1, max_size=8), st.integers(1, 10))
def test_search_is_the_exact_top_k_of_scores(texts, query, k):
    """search() = the k best rows of scores() among chunks holding a query word, ties by row."""
    ix = index_of(texts)
    if not tokenize(query):
        return
    s = ix.scores(query)
    held = [i for i, t in enumerate(texts) if set(tokenize(t)) & set(tokenize(query))]
    want = sorted(held, key=lambda i: (-s[i], i))[:k]
    assert [c.offset for c, _ in ix.search(query, k)] == want


@pytest.mark.parametrize("idf", ["lucene", "okapi"])
def test_search_on_a_bigger_corpus_rare_and_common_words(idf):
    """Both top-k paths: a rare word (few non-zero scores) and a common one (most non-zero)."""
    rng = np.random.default_rng(5)
    docs = zipf_corpus(rng, 400, n_terms=200)
    ix = index_of([" ".join(d) for d in docs], idf=idf)
    for query in ("w150", "w0", "w0 w150 w3", "w1 w1"):
        s = ix.scores(query)
        held = [i for i, d in enumerate(docs) if set(d) & set(query.split())]
        for k in (1, 10, 500):
            want = sorted(held, key=lambda i: (-s[i], i))[:k]
            assert [c.offset for c, _ in ix.search(query, k)] == want


# ---------------------------------------------------------------- save / load


def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    texts = [" ".join(d) for d in zipf_corpus(rng, 30)] + ["café naïve don't"]
    for idf in ("lucene", "okapi"):
        ix = index_of(texts, idf=idf, k1=1.5, b=0.5)
        ix.save(tmp_path / idf)
        back = BM25Index.load(tmp_path / idf)
        assert (back.k1, back.b, back.idf_kind) == (1.5, 0.5, idf)
        assert back.chunks == ix.chunks and back.vocab == ix.vocab
        for q in ("w0 w3", "café", "w1 w1 w9"):
            np.testing.assert_array_equal(back.scores(q), ix.scores(q))
    ix.save(tmp_path / "okapi")  # overwriting a saved index is fine...
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="refusing to overwrite"):  # ...anything else is not
        ix.save(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("field, value", [
    ("format", "other"), ("version", 2), ("k1", "x"), ("b", 3), ("idf", "bm25+"),
    ("count", -1), ("count", 2), ("sha256", None),
])
def test_tampered_manifest_fields_are_caught(tmp_path, field, value):
    index_of(HAND).save(tmp_path / "ix")
    mpath = tmp_path / "ix" / "manifest.json"
    m = json.loads(mpath.read_text())
    m[field] = value
    mpath.write_text(json.dumps(m))
    with pytest.raises(ValueError, match=r"manifest\.json|chunks\.jsonl|doc_len"):
        BM25Index.load(tmp_path / "ix")


@pytest.mark.parametrize("name", ["indptr.npy", "doc.npy", "tf.npy", "doc_len.npy",
                                  "vocab.json", "chunks.jsonl"])
def test_tampered_or_truncated_files_are_caught(tmp_path, name):
    index_of(HAND).save(tmp_path / "ix")
    f = tmp_path / "ix" / name
    f.write_bytes(f.read_bytes()[:-3])
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        BM25Index.load(tmp_path / "ix")


def test_consistent_but_wrong_arrays_are_caught(tmp_path):
    """Even with the manifest's sha256 sums redone, postings must add up to the lengths."""
    from minirag.files.persist import sha256_file

    index_of(HAND).save(tmp_path / "ix")
    np.save(tmp_path / "ix" / "tf.npy", np.ones(9, np.int32))  # "the" in c1 had tf 2
    mpath = tmp_path / "ix" / "manifest.json"
    m = json.loads(mpath.read_text())
    m["sha256"]["tf.npy"] = sha256_file(tmp_path / "ix" / "tf.npy")
    mpath.write_text(json.dumps(m))
    with pytest.raises(ValueError, match="do not add up"):
        BM25Index.load(tmp_path / "ix")


def test_missing_directory_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="manifest.json"):
        BM25Index.load(tmp_path / "nothing")


def test_explain_docstring_example():
    chunks = make_chunks(["go went", "go go", "gone"])
    ix = BM25Index()
    ix.add(chunks)
    shares = ix.explain("went gone", chunks[0].id)
    assert shares == {"went": pytest.approx(0.906649, abs=1e-6), "gone": 0.0}


@pytest.mark.parametrize("field", ["format", "version", "k1", "b", "idf", "epsilon", "count",
                                   "sha256"])
def test_missing_manifest_fields_are_caught(tmp_path, field):
    index_of(HAND).save(tmp_path / "ix")
    mpath = tmp_path / "ix" / "manifest.json"
    m = json.loads(mpath.read_text())
    del m[field]
    mpath.write_text(json.dumps(m))
    with pytest.raises(ValueError, match=r"manifest\.json"):
        BM25Index.load(tmp_path / "ix")


@pytest.mark.parametrize("idf", ["lucene", "okapi"])
def test_idf_of_known_and_unseen_words(idf):
    ix = index_of(HAND, idf=idf)
    assert ix.idf_of("cat") == ix.idf[ix.vocab["cat"]]
    unseen = math.log1p(3.5 / 0.5) if idf == "lucene" else math.log(3.5 / 0.5)  # df = 0, N = 3
    assert ix.idf_of("zebra") == pytest.approx(unseen, rel=1e-15)
    assert ix.idf_of("zebra") > ix.idf_of("fish")
