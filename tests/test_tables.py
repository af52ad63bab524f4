"""tables.py: markdown rows and their headers, and RowIndex, the table rows a question looks
up: keys and columns, a lookup that needs a key and a named column (or a gap's cue), arrows
and struck-out mistakes as keys, and the lookup as the hybrid's third list (hand-built chunks,
the hashing embedder, no tokenizer or KB)."""

from dataclasses import replace

import pytest
from fakes import make_chunks
from hypothesis import given
from hypothesis import strategies as st

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk
from minirag.embed import HashingEmbedder
from minirag.forms import FORM_NAMES
from minirag.retrieve import K_RRF, ROWS_K_RRF, ROWS_WEIGHT, Retriever
from minirag.store import FlatVectorStore
from minirag.tables import RowIndex, headed_rows, past_not_participle, table_cells, whole_row

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


@pytest.mark.parametrize("line, whole", [
    ("| go | went |", True), ("  | go | went |  ", True),
    ("| aircraft | airc", False),  # a window cut inside the row
    ("go | went |", False), ("|---|:---:|", False), ("go → went", False),
])
def test_a_whole_row_opens_and_closes_with_a_bar(line, whole):
    assert whole_row(line) is whole


def test_headed_rows_are_the_whole_shown_rows_with_their_columns_names():
    header = "| Base form | Past simple |"
    headers = {"| go | went |": header, "| be | was | been |": header}
    windows = ["intro\n| **go** | went |", "| be | was | been |", "| go | we", "| do | did |"]
    # bold dropped as prompt.units drops it; a row of three cells under two, a cut row and a
    # row with no header known are none
    assert headed_rows(windows, headers) == [(0, ["go", "went"], [{"base"}, {"past", "simple"}],
                                              header)]


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
    assert index.mistakes == {"i": [(("i", "have", "went"), 0)], "buyed": [(("buyed",), 1)],
                              "he": [(("he", "goed"), 1)]}
    idf = {"i": 0.5, "have": 1.0, "went": 2.0, "he": 0.5, "goed": 4.0, "buyed": 3.0}.get
    assert index.lookup("is 'i have went home' right?", idf) == [chunks[0]]
    assert index.lookup("went have i", idf) == []  # the quote's words, not in its order
    assert index.lookup("is buyed a word", idf) == [chunks[1]]  # a misspelling: next test
    # two quotes: the one whose words weigh more first (4.5 against 3.5)
    assert index.lookup("i have went and he goed", idf) == [chunks[1], chunks[0]]


def test_a_struck_out_misspelling_is_a_key_a_struck_out_word_is_not():
    # "buyed" is struck out and never written otherwise: a question that uses it asks about
    # it. "come" is struck out once but is a word the KB uses: it looks nothing up
    chunks = make_chunks(["Irregular past: ~~buyed~~ → *bought*; ~~come~~ → *came*.",
                          "They come home. ~~I have went~~ → *I have gone*."])
    index = RowIndex(chunks)
    assert index.mistakes == {"buyed": [(("buyed",), 0)], "i": [(("i", "have", "went"), 1)]}
    idf = {"buyed": 3.0, "come": 1.0}.get
    assert index.lookup("i buyed shoes yesterday, ok?", idf) == [chunks[0]]
    assert index.lookup("did he come late?", idf) == []


def test_a_past_simple_after_have_looks_up_its_verbs_row():
    verbs = "| Base form | Past simple | Past participle |\n|---|---|---|\n"
    chunks = make_chunks([verbs + "| write | wrote | written |\n| cut | cut | cut |",
                          verbs + "| learn | learnt / learned | learnt / learned |"])
    index = RowIndex(chunks)
    assert index.after_have == {"wrote": [0]}  # cut and learnt are participles too
    idf = {"wrote": 2.0, "cut": 1.0, "learnt": 1.0}.get
    assert index.lookup("she has wrote two books, right?", idf) == [chunks[0]]
    assert index.lookup("i've wrote it", idf) == index.lookup("ive wrote it", idf) == [chunks[0]]
    assert index.lookup("she wrote two books", idf) == []  # a past simple where it belongs
    assert index.lookup("has wrote", idf) == index.lookup("hadn't wrote", idf) == [chunks[0]]
    assert index.lookup("she has learnt it", idf) == []
    assert past_not_participle(["go", "went", "gone"], ["Adjective", "Comparative", "x"]) == set()


def test_a_form_the_kb_never_writes_looks_up_the_rows_of_its_stem():
    nouns = "| Singular | Plural |\n|---|---|\n"
    chunks = make_chunks([nouns + "| tooth | teeth |\n| child | children |",
                          "| Base form | Past simple | Past participle |\n|---|---|---|\n"
                          "| teach | taught | taught |",
                          "Stop → stopping, cute → cuter. My teeth hurt; the children sing."])
    index = RowIndex(chunks)
    idf = {"tooth": 2.0, "teach": 3.0, "child": 1.0, "stop": 1.5, "cute": 1.0}.get
    assert index.lookup("two tooths, right?", idf) == [chunks[0]]
    # rarest key first, whichever of the question's words found it
    assert index.lookup("she teached my childs", idf) == [chunks[1], chunks[0]]
    assert index.lookup("the teeth of the children", idf) == []  # words the KB writes
    assert index.lookup("is stoping ok", idf) == [chunks[2]]  # an arrow's key too
    assert index.lookup("my tooh hurts", idf) == []  # a typo shares no stem with a key
    # "cut" and "cutes" share cute's stem; three letters are too few to be a form of it
    assert index.lookup("cutes", idf) == [chunks[2]] and index.lookup("a cut", idf) == []


def test_a_form_the_kb_never_writes_looks_up_the_rows_of_its_bases():
    chunks = make_chunks(["| Singular | Plural |\n|---|---|\n| ox | oxen |",
                          "| Base form | Past simple | Past participle |\n|---|---|---|\n"
                          "| spring | sprang | sprung |",
                          "Drop the e: dance → dancing. Keep the y: fly → flying."])
    index = RowIndex(chunks)
    idf = {"ox": 3.0, "spring": 2.0, "dance": 1.0, "fly": 1.5}.get
    # stems that the stemmer cuts otherwise: stem("springed") is "spring", stem("spring") "spr"
    assert index.keys_of_form("springed") == ["spring"] and index.keys_of_form("oxes") == ["ox"]
    assert index.lookup("the farmer has two oxes", idf) == [chunks[0]]  # "e" dropped before -s
    assert index.lookup("the tiger springed, right?", idf) == [chunks[1]]
    assert index.lookup("we were danceing all night", idf) == [chunks[2]]  # an "e" kept
    assert index.lookup("kids fliing kites", idf) == [chunks[2]]  # "i" back to "y"
    assert index.lookup("oxen and dancing", idf) == []  # forms the KB writes
    assert index.keys_of_form("walked") == []  # no key it may be a form of


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
    assert e["rows"] == {"rank": 1, "contribution": pytest.approx(ROWS_WEIGHT / (ROWS_K_RRF + 1))}
    given = Retriever(store, bm25, k_rrf=5, rows=True)  # a k given is kept, rows or not
    assert rows.fusion(query) == (ROWS_K_RRF, [1.0, 1.0, ROWS_WEIGHT])
    assert rows.fusion("they ___ (swim)") == (K_RRF, [1.0, 1.0, 1.0])  # a fill-in: plain RRF
    assert (plain.fusion(query), given.fusion(query)[0]) == ((K_RRF, [1.0, 1.0]), 5)
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
