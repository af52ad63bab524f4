"""The KB's struck-out mistakes and their corrections: the pairs read out of a window (after an
arrow, before a "(not ...)"), the words of a cell that correct, and which cell answers a
question that quotes a mistake, on hand-built windows; and, whatever the reader's weights, such
a question gets the KB's correction, cited by its window."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.files.artifacts import load_tokenizer
from minirag.mistakes import (
    analogous_fix,
    asks_verdict,
    correcting_cell,
    correction_core,
    corrections,
)
from minirag.prompt import build_prompt
from minirag.reader import Reader
from tests.fakes import make_chunk, tiny_span_reader

ARROWS = "~~buyed~~ → bought; ~~teached~~ → taught"
BEFORE_LINE = "- We have lived here since May.\n(not ~~We are living here since May~~)"


def test_corrections_after_an_arrow_and_before_a_not():
    assert corrections("~~She don't swim.~~ → She doesn't swim.") == [
        ("She don't swim.", "She doesn't swim.", True)]
    assert corrections(ARROWS) == [("buyed", "bought; ", True), ("teached", "taught", True)]
    # before the mark: back to a colon, or the line before when the mark starts its line
    assert corrections("Never shorten it: Yes, we are (not ~~Yes, we're~~).") == [
        ("Yes, we're", " Yes, we are", False)]
    assert corrections(BEFORE_LINE) == [
        ("We are living here since May", "- We have lived here since May.", False)]
    assert corrections("(not ~~goed~~)") == [("goed", "", False)]  # its line is not shown
    assert corrections("- Jobs: She is a nurse.\n(not ~~She is nurse.~~)") == [
        ("She is nurse.", " She is a nurse.", False)]
    assert corrections("Struck alone: ~~goed~~, no correction.") == []


@pytest.mark.parametrize("cell, core", [
    ("- We have lived here since May.", "We have lived here since May"),
    (" Note: opened (stress on the first syllable", "opened"),
    (" I have gone.", "I have gone"),
    ("(not ", "")])
def test_correction_core_drops_bullets_lead_ins_and_remarks(cell, core):
    assert correction_core(cell) == core


@pytest.mark.parametrize("question, asks", [
    ("is 'he swimmed' right?", True), ("can i say he swimmed", True),
    ("swimmed or swam?", True), ("what is the past of swim", False),
    # other ways to ask: a teacher's mark, a doubt, a spelling, "is X a word", "should X be"
    ("my teacher circled 'he swimmed'", True), ("he swimmed, sounds odd", True),
    ("how do i spell swimming", True), ("is swimmed even a word", True),
    ("what should swimmed be", True), ("he swimmed??", True),
    ("give me a word for swim", False), ("is there a word for a short swim?", False)])
def test_asks_verdict(question, asks):
    assert asks_verdict(question) is asks


def test_the_cell_that_corrects_a_quoted_mistake():
    arrow = ["~~She don't swim.~~ → She doesn't swim."]
    assert correcting_cell([" She doesn't swim."], arrow, "she dont swim, ok?") == (
        0, "She don't swim.")  # apostrophes aside
    assert correcting_cell([" She doesn't swim."], arrow, "he dont swim, ok?") is None  # not quoted
    assert correcting_cell([" She doesn't swim."], arrow, "when she dont swim") is None  # asks none
    # of two corrections, the one whose mistake is quoted; of its cells, the one spelled like it
    assert correcting_cell(["bought", " taught"], [ARROWS], "we teached them, right?") == (
        1, "teached")
    cells = ["- We have lived here since May.", "(not "]
    assert correcting_cell(cells, [BEFORE_LINE], "can i say we are living here since may") == (
        0, "We are living here since May")


def test_a_correction_before_a_not_must_be_one_cell_spelled_like_the_mistake():
    listed = ["pay → paid, lay → laid (not ~~payed~~, ~~layed~~)."]
    assert correcting_cell(["pay", " paid", " lay", " laid (not "], listed,
                           "is payed right?") is None  # several corrections, no pairing
    cut = [" hers (not ~~her's~~)"]  # a window that cut the line before the mark
    assert correcting_cell([" hers (not "], cut, "is her's right?") == (0, "her's")
    assert correcting_cell([" theirs (not "], [" theirs (not ~~our's~~)"],
                           "is our's right?") is None  # spelled unlike the mistake


def test_a_correction_must_hold_a_word_the_mistake_lacks():
    # an order-only correction is the span reader's to read, not this rule's
    window = ["~~a wooden big box~~ → a big wooden box"]
    assert correcting_cell([" a big wooden box"], window, "a wooden big box, correct?") is None


ORDER = "~~I go always to the gym.~~ → I always go to the gym."
TAG = "- ~~She can't drive, can't she?~~ → She can't drive, can she?"
TO = "~~You should to see a doctor.~~ → You should see a doctor."


@pytest.mark.parametrize("window, question, answer", [
    (ORDER, "we go always to the park, fix it", "always go"),  # two changed words, alone
    (TAG, "he can't cook, can't he? fix it", None),  # one changed word needs a neighbour
    (TAG, "she can't cook, can't she? fix it", "can she"),
    (TO, "i should to see him, right?", "should see"),  # a deletion: the two words it joins
    (TO, "we should to go, right?", None),  # "see" would be the KB's word, not the learner's
    ("- Jobs: She is a nurse.\n(not ~~She is nurse.~~)", "my dad is nurse, right?",
     "is a nurse"),  # an insertion, and a correction on the line before its mark
    (" to leave early (not ~~I could leave early~~)", "i could go, right?",
     None),  # a "(not" correction that starts with its change: the window cut it
    (ORDER, "we go always to the park", None),  # no verdict asked
])
def test_the_same_mistake_in_other_words(window, question, answer):
    found = analogous_fix(["| go | went | gone |", window], question)
    assert (found and found[:2]) == (answer and (1, answer))


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@given(st.integers(0, 10_000))
def test_whatever_the_weights_a_quoted_mistake_gets_its_correction(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=1e9)  # never, but...
    shown = [make_chunk("Other words: the plural of box is boxes.", "a.md"),
             make_chunk(ARROWS, "b.md")]
    r = reader.read(build_prompt("i teached them french, is that right?", shown, tokenizer=tok))
    assert (r.answer, r.marker, r.corrects) == ("taught", "[#2]", "teached")  # ...the KB's fix
    assert math.isnan(r.span_score) and not r.abstained
    # a question that asks no verdict is the model's to read (here: past a huge margin, never)
    r = reader.read(build_prompt("where does teached come from", shown[1:], tokenizer=tok))
    assert r.abstained and r.corrects is None
    # the same mistake in other words: the correction's change, when the model says nothing
    r = reader.read(build_prompt("we go always to the park, fix it", [make_chunk(ORDER, "c.md")],
                                 tokenizer=tok))
    assert (r.answer, r.corrects) == ("always go", "I go always to the gym.")
