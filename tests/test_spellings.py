"""A misspelt word read as a window spells it: the edits that make a misspelling,
the pairs that do not (two forms of a word, an edit at either end, a dropped apostrophe), keys
that never correct, and, whatever the reader's weights, a misspelling answered where the
model abstains."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.spellings import misspells, one_edit, respelt, unregular
from tests.fakes import abstaining_read

SWIM = "Double the consonant: swim → swimming, run → running."


@pytest.mark.parametrize("a, b, edit", [
    ("wagon", "waggon", True), ("waggon", "wagon", True),  # insertion, deletion
    ("hisself", "himself", True),  # substitution
    ("recieve", "receive", True),  # two neighbours swapped
    ("wagon", "wagon", False), ("wagon", "wgaons", False), ("abc", "abcde", False),
])
def test_one_edit_apart(a, b, edit):
    assert one_edit(a, b) is edit


@given(st.text("abcde", min_size=1, max_size=8), st.integers(0, 8), st.sampled_from("abcde"))
def test_one_inserted_letter_is_one_edit(word, at, letter):
    longer = word[:at] + letter + word[at:]
    assert one_edit(word, longer) and one_edit(longer, word)


@pytest.mark.parametrize("wrong, right, spelt", [
    ("enjoies", "enjoys", True), ("planed", "planned", True), ("swiming", "swimming", True),
    ("hisself", "himself", True), ("childrens", "children's", True),
    ("wanted", "wants", False),  # two forms of one word
    ("place", "places", False),
    ("think", "thing", False), ("county", "count", False),  # an edit at an end
    ("didnt", "didn't", False),  # an apostrophe a texting learner drops
    ("swimming", "swimming", False),
])
def test_a_misspelling_of_the_kbs_word(wrong, right, spelt):
    assert misspells(wrong, right) is spelt


@pytest.mark.parametrize("windows, question, spelt", [
    ([SWIM], "is 'swiming' right?", (0, "swimming", "swiming")),
    (["Nothing.", SWIM], "swiming - correct or not", (1, "swimming", "swiming")),
    ([SWIM], "how do i spell swiming", (0, "swimming", "swiming")),  # a spelling asked
    ([SWIM], "swiming in the sea, when is it", None),  # no verdict asked
    ([SWIM], "is 'swimming' right?", None),  # the window writes the word: no misspelling
    (["| hisself | himself |"], "is hisself right?", None),  # a table's key, held by a window
    (["| himself | hisself |"], "is 'hisself' right?", None),  # the window writes it too
    (["| him | himself |"], "is 'hisself' right?", (0, "himself", "hisself")),
    (["I believe it.", "A bereive."], "is 'beleive' right?", None),  # two spellings named
    (["I believe it."], "is 'beleive' right?", (0, "believe", "beleive")),
])
def test_a_misspelt_word_read_as_a_window_spells_it(windows, question, spelt):
    assert respelt(windows, question) == spelt


TEACH = "| teach | taught | taught |\n| child | children |\n| sheep | sheep |"


@pytest.mark.parametrize("question, fixed", [
    ("she teached us maths, right?", (0, "taught", "teached")),  # the past
    ("he has teached for years, correct?", (0, "taught", "teached")),  # the participle
    ("the childs play outside, ok?", (0, "children", "childs")),  # a two-cell row's plural
    ("two sheeps - correct?", (0, "sheep", "sheeps")),
    ("she teaches us maths, right?", None),  # an -s form: no cell of a verb's row
    ("the child plays outside, ok?", None),  # the key itself
    ("she teached us maths", None),  # no verdict asked
])
def test_a_regular_ending_on_an_irregular_word(question, fixed):
    assert unregular([TEACH], question) == fixed


def test_after_have_a_pronoun_or_an_adverb_the_participle():
    rows = ["| choose | chose | chosen |"]
    assert unregular(rows, "have you choosed one, is it right?") == (0, "chosen", "choosed")
    assert unregular(rows, "i choosed one, is it right?") == (0, "chose", "choosed")
    assert unregular(rows, "ive never choosed one, is it right?") == (0, "chosen", "choosed")
    # a window cut inside a row holds no row: its last cell is a piece of a word
    assert unregular(["| aircraft | airc"], "two aircrafts, is it right?") is None
    assert unregular(rows + ["I chose it."], "i choosed one, is it right?")[1] == "chose"


def test_after_a_passive_the_participle_and_a_key_that_ends_in_s():
    rows = ["| choose | chose | chosen |"]
    assert unregular(rows, "it was choosed by vote, right?") == (0, "chosen", "choosed")
    assert unregular(rows, "we got choosed first, right?") == (0, "chosen", "choosed")
    # "is" asks the verdict as often as it makes a passive: the past, as with no auxiliary
    assert unregular(rows, "she choosed red, is choosed right?") == (0, "chose", "choosed")
    # a key ending in -s is its word's stem itself ("thesis": stem "thesi")
    assert unregular(["| thesis | theses |"], "two thesises, ok?") == (0, "theses", "thesises")


def test_a_word_read_where_the_learner_first_wrote_it():
    rows = ["| forget | forgot | forgotten |"]  # after "have": the participle, whatever follows
    assert unregular(rows, "i have forgetted it, is forgetted even a word?") == (
        0, "forgotten", "forgetted")


@pytest.mark.parametrize("windows, question, fixed", [
    # a three-cell row keyed by the word less -er / -est: its comparative or superlative
    (["| good (adjective) | better | the best |"], "is gooder right?", (0, "better", "gooder")),
    (["| bad | worse | the worst |"], "the baddest film, ok?", (0, "the worst", "baddest")),
    # an arrow from the word less its ending, of the ending's kind
    (["f → ves: wolf → wolves, leaf → leaves"], "two wolfs, is it right?",
     (0, "wolves", "wolfs")),
    (["double it: thin → thinner, big → bigger"], "thiner, right?", (0, "thinner", "thiner")),
    (["-ic → -ically: basic → basically"], "is basicly ok?", (0, "basically", "basicly")),
    (["y → ied: reply → replied"], "she replyed, correct?", (0, "replied", "replyed")),
    (["thin → thinner"], "thinest, right?", None),  # the arrow gives another kind
    (["thin → thinner; thiner is rare"], "is thiner a word?", None),  # a window writes it
    (["big → bigger"], "thiner, what is it", None),  # no verdict asked
])
def test_a_regular_ending_the_kb_gives_another_form(windows, question, fixed):
    assert unregular(windows, question) == fixed


@given(st.integers(0, 10_000))
def test_a_misspelling_is_answered_where_the_model_abstains(shipped_tok, seed):
    r = abstaining_read(shipped_tok, seed, "is 'swiming' right?", SWIM)
    assert (r.answer, r.marker, r.respells) == ("swimming", "[#1]", "swiming")
