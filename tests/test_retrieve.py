"""retrieve.py: the worked RRF example, invariance to the order of the input lists,
deterministic ties, a chunk's own text retrieving it first in dense, bm25 and hybrid mode
(hand-built chunks, the hashing embedder, no tokenizer or KB; the row lookup, the hybrid's
third list: test_tables.py)."""

import pytest
from fakes import make_chunks
from hypothesis import given
from hypothesis import strategies as st

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk
from minirag.embed import HashingEmbedder
from minirag.retrieve import MAX_QUERY_CHARS, Retriever, lexical_query, rrf_fuse
from minirag.store import FlatVectorStore

TEXTS = [
    "The past simple of go is went; the past participle is gone.",
    "Use since with a point in time and for with a span of time.",
    "Much goes with uncountable nouns, many with countable nouns.",
    "Adjective order: opinion, size, age, shape, colour, origin, material, purpose.",
    "A question tag repeats the auxiliary: You are coming, aren't you?",
    "Swim, swam, swum: three different forms of an irregular verb.",
]


@pytest.fixture(scope="module")
def retriever():
    chunks = make_chunks(TEXTS, separate_docs=True)
    store = FlatVectorStore(HashingEmbedder(d=512).fit(TEXTS))
    store.add(chunks)
    bm25 = BM25Index()
    bm25.add(chunks)
    return Retriever(store, bm25)


def test_worked_example_from_the_docstring():
    fused = rrf_fuse([["a", "b"], ["b", "c"]])
    assert [cid for cid, _ in fused] == ["b", "a", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)  # b: rank 2 in list 1, rank 1 in list 2
    assert fused[1][1] == pytest.approx(1 / 61) and fused[2][1] == pytest.approx(1 / 62)


def test_ranks_are_one_based_and_depth_cuts_each_list():
    assert rrf_fuse([["x"]], k_rrf=0) == [("x", 1.0)]  # 1 / (0 + 1): rank 1, not 0
    assert rrf_fuse([["a", "b", "c"]], depth=2) == [("a", 1 / 61), ("b", 1 / 62)]


def test_weights_scale_each_lists_share():
    fused = rrf_fuse([["a", "b"], ["b", "c"]], weights=[3, 1])
    # b: 3/62 + 1/61 = 0.0648 stays ahead of a: 3/61 = 0.0492; c: 1/62 = 0.0161 last
    assert [cid for cid, _ in fused] == ["b", "a", "c"]
    assert fused[1][1] == pytest.approx(3 / 61) and fused[0][1] == pytest.approx(3 / 62 + 1 / 61)
    only_first = rrf_fuse([["a", "b"], ["c", "b"]], weights=[1, 0])  # the second list is muted
    assert [cid for cid, _ in only_first][:2] == ["a", "b"]
    assert rrf_fuse([["a"], ["b"]], weights=[1, 1]) == rrf_fuse([["a"], ["b"]])
    with pytest.raises(ValueError, match="weights"):
        rrf_fuse([["a"], ["b"]], weights=[1])
    with pytest.raises(ValueError, match="weights"):
        rrf_fuse([["a"], ["b"]], weights=[1, -1])


def test_ties_break_by_id():
    # a is first in list 1, b first in list 2: equal scores, so id order decides
    assert [cid for cid, _ in rrf_fuse([["b", "a"], ["a", "b"]])] == ["a", "b"]


ids = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8)


@given(st.lists(ids, min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_invariant_to_the_order_of_input_lists(rankings, rnd):
    shuffled = rankings[:]
    rnd.shuffle(shuffled)
    assert rrf_fuse(shuffled) == rrf_fuse(rankings)


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_a_chunks_own_text_retrieves_it_first(retriever, mode):
    for text in TEXTS:
        (best, _), *_ = retriever.retrieve_scored(text, 3, mode)
        assert best.text == text


def test_retrieve_returns_chunks_and_hybrid_flag(retriever):
    dense = retriever.retrieve("past participle of go", k=2)
    hybrid = retriever.retrieve("past participle of go", k=2, hybrid=True)
    assert all(isinstance(c, Chunk) for c in dense + hybrid)
    assert dense[0].text == hybrid[0].text == TEXTS[0]


def test_a_fill_ins_cue_counts_three_times_in_the_lexical_query(retriever):
    assert lexical_query("a wolf ___ (howl)") == "a wolf ___ (howl) howl howl"
    assert lexical_query("past of go") == "past of go"  # no brackets: the query as typed
    query = "in time we ___ (swim)"
    # plain BM25 follows the scenery ("in time"); the lexical query follows the cue
    assert retriever.bm25.search(query, 1)[0][0].text == TEXTS[1]
    (best, score), *_ = retriever.retrieve_scored(query, 3, "bm25")
    assert best.text == TEXTS[5]
    assert score == pytest.approx(retriever.bm25.search(lexical_query(query), 1)[0][1])


def test_explain_shows_each_lists_rank_and_share(retriever):
    target = make_chunks(TEXTS, separate_docs=True)[5].id  # the swim chunk
    e = retriever.explain("swum", target)
    assert e["bm25"]["rank"] == 1
    assert e["bm25"]["contribution"] == pytest.approx(1 / 61)
    assert e["rrf"] == pytest.approx(e["dense"]["contribution"] + e["bm25"]["contribution"])


@pytest.mark.parametrize("query, k, mode, match", [
    ("", 3, "dense", "empty"), ("   ", 3, "hybrid", "empty"), ("go", 0, "bm25", "k"),
    ("go", 3, "sparse", "mode"), ("x" * (MAX_QUERY_CHARS + 1), 3, "dense", "limit"),
    (b"go", 3, "dense", "must be a str, got bytes"), ("go", 2.5, "hybrid", "integer"),
    ("go", True, "dense", "integer"),
])
def test_bad_queries(retriever, query, k, mode, match):
    with pytest.raises(ValueError, match=match):
        retriever.retrieve_scored(query, k, mode)


def test_lexical_modes_need_bm25():
    store = FlatVectorStore(HashingEmbedder(d=32))
    store.add(make_chunks(TEXTS[:2], separate_docs=True))
    with pytest.raises(ValueError, match="BM25"):
        Retriever(store).retrieve_scored("go", 1, "hybrid")
