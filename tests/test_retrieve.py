"""retrieve.py: the worked RRF example, invariance to the order of the input lists,
deterministic ties, a chunk's own text retrieving it first in dense, bm25 and hybrid mode, and
the table rows a question looks up (hand-built chunks, the hashing embedder, no tokenizer or
KB)."""

from dataclasses import replace

import pytest
from fakes import make_chunks
from hypothesis import given
from hypothesis import strategies as st

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk
from minirag.embed import HashingEmbedder
from minirag.forms import FORM_NAMES
from minirag.retrieve import (
    MAX_QUERY_CHARS,
    Retriever,
    RowIndex,
    lexical_query,
    rrf_fuse,
    table_cells,
)
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


# A table split over two chunks of one section (the second starts inside it, so its header is
# in its metadata, as the chunker records it), a table whose first column is not one word, and
# prose that mentions a key without being its row.
TABLE = ["| Base form | Past simple | Past participle |\n|---|---|---|\n| go | went | gone |",
         "| **swim** | swam | swum |\n| cut | cut | cut |",
         "| Suffix | Meaning |\n|---|---|\n| -ness | a state |\n| big idea | small |",
         "Swim is also a noun: a swim in the lake. Go for a swim."]


def row_chunks() -> list[Chunk]:
    chunks = make_chunks(TABLE)  # one document, one section "S", offsets 0..3
    header = TABLE[0].split("\n")[0]
    return [replace(c, metadata={**c.metadata, "table_header": header}) if i == 1 else c
            for i, c in enumerate(chunks)]


def test_table_cells_drop_bold_and_the_outer_bars():
    assert table_cells("| **go** | went |") == ["go", "went"]
    assert table_cells("|a|b|c|") == ["a", "b", "c"]


def test_rows_are_keyed_by_one_word_first_cells_with_their_tables_columns():
    index = RowIndex(row_chunks())
    columns = frozenset({"past", "simple", "participle"})  # "Base form" is the key column
    assert index.keys == {"go": [(0, columns)], "swim": [(1, columns)], "cut": [(1, columns)]}
    assert RowIndex(make_chunks(TABLE[1:2])).keys == {}  # rows with no header: no columns


def test_a_lookup_needs_a_key_and_one_of_its_tables_columns():
    index, chunks = RowIndex(row_chunks()), row_chunks()
    idf = {"swim": 2.0, "go": 1.0, "cut": 3.0}.get
    assert index.lookup("past of swim", idf) == [chunks[1]]
    assert index.lookup("swim", idf) == []  # a key alone is not a lookup
    assert index.lookup("past simple of go", idf) == [chunks[0]]
    # two keys: the chunk of the rarer one first
    assert index.lookup("past of go or cut", idf) == [chunks[1], chunks[0]]
    assert index.lookup("meaning of ness", idf) == []  # "-ness" is no headword
    # a gap asks for one of its cue's forms: the cue is looked up with no column named
    assert index.lookup("the ducks ___ (swim) away", idf) == [chunks[1]]
    assert index.lookup("the ducks swim away", idf) == []


def test_an_irregular_arrow_is_a_row_only_a_gap_looks_up():
    # "go → went" names no kind of form by its shape: no column, but a gap's cue finds it
    chunks = make_chunks(["Learn the irregular ones: go → went, see → saw; work → worked."])
    index = RowIndex(chunks)
    assert index.keys["go"] == [(0, frozenset())] and index.keys["see"] == [(0, frozenset())]
    assert index.keys["work"] == [(0, FORM_NAMES["ed"])]
    idf = {"go": 1.0, "see": 1.0, "work": 1.0}.get
    assert index.lookup("they ___ (go) home early", idf) == [chunks[0]]
    assert index.lookup("past of go", idf) == []  # a named column needs a named form


def test_a_struck_out_mistake_is_looked_up_by_a_question_that_quotes_it():
    chunks = make_chunks(["Use the participle after have: ~~I have went~~ → *I have gone*.",
                          "Irregular past: ~~buyed~~ → *bought*; ~~he goed~~ → *he went*."])
    index = RowIndex(chunks)
    assert index.mistakes == {"i": [(("i", "have", "went"), 0)], "he": [(("he", "goed"), 1)]}
    idf = {"i": 0.5, "have": 1.0, "went": 2.0, "he": 0.5, "goed": 4.0}.get
    assert index.lookup("is 'i have went home' right?", idf) == [chunks[0]]
    assert index.lookup("went have i", idf) == []  # the quote's words, not in its order
    assert index.lookup("is buyed a word", idf) == []  # a one-word quote is no key
    # two quotes: the one whose words weigh more first (4.5 against 3.5)
    assert index.lookup("i have went and he goed", idf) == [chunks[1], chunks[0]]


WORDS = st.sampled_from(["i", "have", "went", "she", "goed", "home", "to", "the", "shop"])


@given(st.lists(WORDS, min_size=2, max_size=4), st.lists(WORDS, max_size=5),
       st.lists(WORDS, max_size=5))
def test_a_quoted_mistake_is_found_whatever_surrounds_it(mistake, before, after):
    chunk = make_chunks([f"Wrong: ~~{' '.join(mistake)}~~ → *right*."])
    index = RowIndex(chunk)
    query = " ".join([*before, *mistake, *after])
    assert index.lookup(query, lambda w: 1.0) == chunk
    # a query one word short of the quote holds no run of its words
    assert index.lookup(" ".join(mistake[:-1]), lambda w: 1.0) == []


def test_row_lookup_is_the_hybrids_third_list():
    chunks = row_chunks()
    store = FlatVectorStore(HashingEmbedder(d=256).fit(TABLE))
    store.add(chunks)
    bm25 = BM25Index()
    bm25.add(chunks)
    plain, rows = Retriever(store, bm25), Retriever(store, bm25, rows=True)
    query = "past participle of swim"
    e = rows.explain(query, chunks[1].id)
    assert e["rows"] == {"rank": 1, "contribution": pytest.approx(1 / 61)}
    assert e["rrf"] == pytest.approx(sum(e[n]["contribution"] for n in ("dense", "bm25", "rows")))
    assert "rows" not in plain.explain(query, chunks[1].id)
    score = dict((c.id, s) for c, s in rows.retrieve_scored(query, 4))[chunks[1].id]
    assert score == pytest.approx(e["rrf"])
    assert rows.retrieve(query, 1, hybrid=True) == [chunks[1]]
    # dense and bm25 modes never look rows up
    assert rows.retrieve_scored(query, 4, "bm25") == plain.retrieve_scored(query, 4, "bm25")
    # a chunk added later is looked up too: the index follows the store
    store.add(make_chunks(["| Base form | Past simple | Past participle |\n|---|---|---|\n"
                           "| sing | sang | sung |"], doc="more.md"))
    bm25.add(store.chunks[-1:])
    assert rows.row_index().lookup("past of sing", bm25.idf_of) == [store.chunks[-1]]


def test_an_arrow_is_a_row_keyed_by_its_word_with_its_forms_names():
    chunks = make_chunks(["Double it: big → bigger → biggest, stop → stopping.",
                          "Add -s: play → plays. Add -ed: play → played."])
    index = RowIndex(chunks)
    assert index.keys["big"] == [(0, FORM_NAMES["er"]), (0, FORM_NAMES["est"])]
    assert index.keys["play"] == [(1, FORM_NAMES["s"]), (1, FORM_NAMES["ed"])]
    idf = {"big": 1.0, "stop": 2.0, "play": 1.5}.get
    assert index.lookup("comparative of big", idf) == [chunks[0]]
    assert index.lookup("past of play", idf) == [chunks[1]]
    assert index.lookup("-ing form of stop", idf) == [chunks[0]]
    assert index.lookup("plural of big", idf) == []  # no arrow gives big a plural
    assert index.lookup("big", idf) == []  # a word alone is not a lookup
    assert index.lookup("he/she form of play", idf) == [chunks[1]]  # the -s form, by its subject
    assert index.lookup("a ___ (big) box", idf) == [chunks[0]]  # a gap's cue, any of its forms
