"""A table read backwards (table_keys.described_key, given_key): hand-built rows and headers,
the rows' order, and, whatever the reader's weights, the key answered where the model abstains
or echoes the question."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.table_keys import described_key, given_key
from tests.fakes import abstaining_read

PRONOUNS = "| Pronoun | Used for | Example |"
ROWS = ["| who | people | the man who called |",
        "| whose | possession | the girl whose bike was stolen |",
        "| where | places | the town where I grew up |"]
HEADERS = dict.fromkeys(ROWS, PRONOUNS)
UNITS = "| Unit | Example |"
BREAD = ["| a slice of | a slice of bread, a slice of cake |", "| a loaf of | a loaf of bread |",
         "| a bar of | a bar of chocolate, a bar of soap |"]


@pytest.mark.parametrize("windows, headers, question, key", [
    (ROWS, HEADERS, "which pronoun means possession?", (1, "whose", "possession")),
    (ROWS, HEADERS, "which pronoun do i use for a place", (2, "where", "places")),  # by stem
    (["\n".join(ROWS)], HEADERS, "pronoun for people?", (0, "who", "people")),  # one window
    (ROWS, HEADERS, "relative pronoun", None),  # no row described
    (ROWS, HEADERS, "example of possession", None),  # names the Example column, not the first
    (ROWS, HEADERS, "is whose a pronoun for possession", None),  # the key is in the question
    (ROWS, HEADERS, "pronoun used for possession", None),  # names "Used for" as much
    (ROWS, {}, "which pronoun means possession?", None),  # no header shown: no column named
    (["| whose | possession | the girl"], {"| whose | possession | the girl": PRONOUNS},
     "which pronoun means possession?", None),  # a window cut inside the row
    (BREAD, dict.fromkeys(BREAD, UNITS), "unit word for soap", (2, "a bar of", "soap")),
    (BREAD, dict.fromkeys(BREAD, UNITS), "unit word for bread", None),  # two rows say bread
])
def test_the_key_of_the_row_a_question_describes(windows, headers, question, key):
    assert described_key(windows, headers, question) == key


@given(st.permutations(ROWS))
def test_the_rows_order_changes_only_the_window_it_cites(rows):
    found = described_key(rows, HEADERS, "which pronoun means possession?")
    assert found is not None and rows[found[0]] == ROWS[1] and found[1:] == ("whose", "possession")


@pytest.mark.parametrize("seed", range(4))
def test_the_key_is_answered_where_the_model_abstains(shipped_tok, seed, monkeypatch):
    # the column rule would let the model pick a key cell at margin 0: keep it silent
    monkeypatch.setattr("minirag.reader.narrowed_cell", lambda *a: False)
    table = PRONOUNS + "\n|---|---|---|\n" + "\n".join(ROWS)
    r = abstaining_read(shipped_tok, seed, "which pronoun means possession?", table)
    assert (r.answer, r.marker, r.keyed_by) == ("whose", "[#1]", "possession")


VERBS = ["| seek | sought | sought |", "| tread | trod | trodden / trod |"]
SPEECH = ["| tomorrow | the next day / the following day |", "| next week | the following week |"]


@pytest.mark.parametrize("windows, question, key", [
    (VERBS, "sought is the past of which verb?", (0, "seek", "sought")),
    (VERBS, "which verb has trodden as its participle", (1, "tread", "trodden")),  # one of "/"
    (["x", "\n".join(SPEECH)], "what did 'the following day' replace?",
     (1, "tomorrow", "the following day")),  # a cell's words as a run, not "following" alone
    (VERBS, "sought - is it right?", None),  # a verdict asked: the cell is the learner's
    (VERBS, "what does sought mean", None),  # a meaning asked
    (VERBS, "i ___ (seek) help, sought or seeked?", None),  # a gap, a choice
    (VERBS, "what is the past of seek, sought?", None),  # the key is in the question
    (VERBS, "sought is the past of a verb", None),  # no word asked for
    (["| have | had | had |"], "what is the form of go after had", None),  # one auxiliary
    # an arrow is an entry too; a form's "the" may go unsaid; "where ... come from" asks
    (["y to i: dry → drier → driest"], "driest is the superlative of which adjective",
     (0, "dry", "driest")),
    (["| far | farther | the farthest |"], "farthest: what's the plain adjective",
     (0, "far", "the farthest")),
    (VERBS, "where does sought come from", (0, "seek", "sought")),
    # or the key's kind is named, with no "what" or "which"
    (VERBS, "sought dictionary form", (0, "seek", "sought")),
    (["fix → fixes, relax → relaxes"], "relaxes base form pls", (0, "relax", "relaxes")),
    (["boy → boys, valley → valleys"], "singular of valleys", (0, "valley", "valleys")),
    (VERBS, "sought, a strong verb", None),  # no word asked for, no kind named
    (["-ue → -uly"], "what does duly come from", None),  # an ending, no key
    (["nic → picnicked (both)"], "picnicked, what's the base form", None),  # a key cut short
    # a form asked "of" a word reads forwards, whatever else the question holds
    (["come → coming"], "what's the past of beseech? it keeps coming up", None),
    (["| she | her | hers |", "| he | him | his |"], "what is her form for his", None),  # two
    (["| seek | ~~seeked~~ sought |"], "seeked is the past of which verb?", None),  # struck
    (["| seek | sought | sought"], "sought is the past of which verb?", None),  # a cut row
])
def test_the_key_of_the_row_whose_cell_a_question_gives(windows, question, key):
    assert given_key(windows, question) == key


@pytest.mark.parametrize("seed", range(4))
def test_the_given_cells_key_is_answered_where_the_model_abstains(shipped_tok, seed):
    r = abstaining_read(shipped_tok, seed, "sought is the past of which verb?", VERBS[0])
    assert (r.answer, r.marker, r.keyed_by) == ("seek", "[#1]", "sought")
