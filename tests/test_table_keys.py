"""A table read backwards (table_keys.described_key): hand-built rows and headers, the rows'
order, and, whatever the reader's weights, the key answered where the model abstains."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.table_keys import described_key
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
