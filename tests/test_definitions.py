"""What a term means and an example of it, read where the KB gives them: the term a question
asks about, the words of each shape of definition the KB writes, the first example of the list
whose lead matches the question, on hand-built windows; and, whatever the reader's weights, a
question that asks what a term means gets the window's defining words, cited, and one that
asks for an example gets the list's first where the model abstains."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.definitions import (
    asked_term,
    defining_window,
    defining_words,
    meaning_term,
    off_its_line,
)
from minirag.examples import asks_example, listed_example
from minirag.prompt import build_prompt
from tests.fakes import abstaining_read, make_chunk, tiny_reader


@pytest.mark.parametrize("question, term", [
    ("what is a linking verb", "linking verb"),
    ("whats an 'adverb of manner' in grammar?", "adverb of manner"),
    ("what does the word petrol mean", "petrol"),
    ("wat does used to actually mean??", "used to"),
    ("meaning of the idiom hold on", "hold on"),
    ("Zero plural - meaning?", "zero plural"),
    ("define collective noun", "collective noun"),
    ("past of go", None),
    ("gerund or infinitive after enjoy?", None),
    ("so what does this mean", None),  # stopwords are no term
    ("whats the third person for swim", "third person for swim"),  # a form of swim: below
    ("what do people mean by a run-on", "run-on"),
    ("what does 'shouldn't' mean", "shouldn't"),  # quotes go, an apostrophe inside a word stays
    ("meaning of the prefix re-", "re"),  # "prefix" names no part of the term
    ("what does the suffix -ful mean", "-ful"),
    ("dis as a prefix, what does it mean", "dis"),  # the term first, then the asking
    ("-ful meaning? as in careful", "ful"),  # "meaning" not at the end; "as in ..." goes
    ("give up - meaning pls", "give up"),
    ("what does it mean to give up", "give up"),
    ("whats the meaning of ought to", "ought to"),  # "meaning of" before "what's"
    ("what's 'be able to' mean", "be able to"),
    ("ill (meaning sick) - its comparative?", None),  # a gloss asks no meaning
    ("what's the simple past form of the verb mean?", None),  # a form of "mean", 7 words
    ("whats the prefix il for, eg illegal", "il"),  # what X is for
    ("what is a gerund used for", "gerund"),
    ("principle, with -ple at the end, what does it mean?", "principle"),  # a remark between
    ('he said "i\'m beat" after work. what does that mean', "i'm beat"),  # the one quote
    ("she says 'not many'. what does that mean", "not many"),
    ("my friend says -less means 'a lot', what does it mean", None),  # a quoted gloss, no term
])
def test_the_term_a_question_asks_the_meaning_of(question, term):
    assert asked_term(question) == term


@pytest.mark.parametrize("window, term, words", [
    # a clause that starts with the term and a defining verb; the clause ends at a colon
    ("- A gerund is the -ing form used as a noun: Reading relaxes me.", "gerund",
     "the -ing form used as a noun"),
    ("Zero plurals are nouns whose plural is the singular. Sheep is one.", "zero plural",
     "nouns whose plural is the singular"),  # the term's plural, to the full stop
    (" A dynamic (action) verb describes a change.", "dynamic verb",
     "describes a change"),  # a window that starts mid-line; a remark between its words
    ("He left. A run-on sentence means two clauses with no joint", "run-on sentence",
     "two clauses with no joint"),  # a sentence's start, not only a line's
    # the term and a colon at a line's start, a pattern between or not
    ("- Perfect: the action before a point, with a link to it.", "perfect",
     "the action before a point, with a link to it"),
    ("- be about to + base form: very soon: The film is about to start.", "be about to",
     "very soon"),
    ("| might have done | perhaps it happened | She might have left. |", "might have done",
     "perhaps it happened"),  # the term's table row: the next cell
    ("| re- | again; back | rewrite |", "re", "again; back"),  # the whole cell; the hyphen
    ("| must have done | I'm sure it happened | The ground is wet.", "must have done",
     "I'm sure it happened"),  # a row cut at a sentence: the cells a "|" closes
    ("| 7 | material | wooden, plastic |", "material", None),  # not the row's first cell
    ("| -ful / -less | with; without | careful |", "less", "with; without"),  # keys: either
    ("- lately = recently: Have you seen her lately?", "lately", "recently"),
    ("towards (US: toward) = in the direction of, not there yet", "towards",
     "in the direction of"),  # a remark in brackets; a list of them ends at a comma
    ('- loose is an adjective meaning "not tight": loose shoes.', "loose", "not tight"),
    ('- loose /luːs/ is an adjective meaning "not tight".', "loose", "not tight"),  # sounds
    ("You may hear I'm beat (= very tired) at work.", "i'm beat", "very tired"),  # "=" goes
    ("Each other (or one another) shows a two-way action.", "each other",
     "shows a two-way action"),
    ("- loose (not tight) / lose (misplace).", "lose", "misplace"),  # a gloss in brackets
    ("Never join two sentences with a comma (a comma splice).", "comma splice",
     "Never join two sentences with a comma"),  # a clause that names the term at its end
    # no definition: the term in the middle of a clause, or not at all
    ("Many learners confuse a gerund with a participle.", "gerund", None),
    ("| go | went | gone |", "gerund", None),
])
def test_the_shapes_of_a_definition(window, term, words):
    assert defining_words(window, term) == words


def test_a_row_defines_its_first_cell_under_the_column_named_meaning():
    row = "| -ful | noun | full of | careful, hopeful |"
    header = {row: "| Suffix | Added to | Meaning | Examples |"}
    assert defining_words(row, "-ful", header) == "full of"
    assert defining_words(row, "-ful") == "noun"  # no header shown: the next cell
    assert defining_window(["| go | went |", row], "what does the suffix -ful mean", header) == (
        1, "full of", "-ful")


@pytest.mark.parametrize("seed", range(3))
def test_whatever_the_weights_a_suffix_row_answers_with_its_meaning(shipped_tok, seed):
    table = ("| Suffix | Added to | Meaning | Examples |\n|---|---|---|---|\n"
             "| -ful | noun | full of | careful, hopeful |")
    r = abstaining_read(shipped_tok, seed, "meaning of the suffix -ful", table)
    assert (r.answer, r.marker, r.defines) == ("full of", "[#1]", "-ful")


@pytest.mark.parametrize("line, question, off", [
    ("She broke the window.", "break up meaning", True),  # a form of a word, not the term
    ("| put up with | tolerate |", "put up with meaning", False),
    ("Hold on means wait.", "what does holding on mean", False),  # the term's words by stem
    ("She broke the window.", "break up, past form?", False)])  # no meaning asked
def test_a_meaning_is_read_on_the_terms_own_line(line, question, off):
    assert off_its_line(line, meaning_term(question)) is off


def test_the_first_window_that_defines_the_term_answers():
    shown = ["| go | went | gone |", "A gerund is a verb used as a noun.", "Gerunds are nouns."]
    assert defining_window(shown, "define gerund") == (1, "a verb used as a noun", "gerund")
    assert defining_window(shown, "what is a participle?") is None
    assert defining_window(shown, "gerund after enjoy") is None  # no meaning asked
    # "the X for Y" asks for Y's X, not what an X is
    person = ["The third person is he, she or it."]
    assert defining_window(person, "whats the third person for swim") is None
    assert defining_window(person, "whats the third person in grammar") == (
        0, "he, she or it", "third person")


@given(st.integers(0, 10_000))
def test_whatever_the_weights_a_definition_is_read_where_the_kb_gives_it(shipped_tok, seed):
    reader = tiny_reader(shipped_tok, seed, null_margin=1e9)  # never, but...
    shown = [make_chunk("| go | went | gone |", "a.md"),
             make_chunk("- A linking verb describes a state: be, seem.", "b.md")]
    r = reader.read(build_prompt("whats a linking verb", shown, tokenizer=shipped_tok))
    assert (r.answer, r.marker, r.defines) == ("describes a state", "[#2]", "linking verb")
    assert math.isnan(r.span_score) and not r.abstained
    # a term no window defines is the model's to read (here: past a huge margin, never)
    r = reader.read(build_prompt("whats an action verb", shown, tokenizer=shipped_tok))
    assert r.abstained and r.defines is None
    # a meaning asked in so many words is read only on a line that holds the term
    r = tiny_reader(shipped_tok, seed, null_margin=-1e9).read(
        build_prompt("action verb meaning", shown, tokenizer=shipped_tok))
    assert r.abstained and not math.isnan(r.span_score)  # the model read; its line is not it


@pytest.mark.parametrize("question, asks", [
    ("one example for a modal verb?", True), ("examples of linking verbs", True),
    ("name a verb which doubles its t", True), ("give one noun with no plural", True),
    ("what is a linking verb", False), ("give up or give in?", False)])
def test_asks_example(question, asks):
    assert asks_example(question) is asks


LISTS = ("These verbs are common. Verbs ending in -c add k: panic → panicked, mimic.\n"
         "- Three-part phrasal verbs: put up with (tolerate), run out of")


@pytest.mark.parametrize("windows, question, found", [
    ([LISTS], "name one verb which adds k before -ed", (0, "panic", "Verbs ending in -c add k")),
    ([LISTS], "examples of three-part phrasal verbs",
     (0, "put up with", "Three-part phrasal verbs")),
    (["| go | went |", "Uses: She works here. He walks."], "example of the uses of a tense",
     None),  # one content word shared ("uses"): too little
    ([LISTS], "what is a three-part phrasal verb", None),  # no example asked
    (["Phrasal verbs: give up.", "Three-part phrasal verbs: run out of."],
     "examples of three-part phrasal verbs", (1, "run out of", "Three-part phrasal verbs")),
])
def test_the_first_example_of_the_list_whose_lead_matches(windows, question, found):
    assert listed_example(windows, question) == found


@given(st.integers(0, 10_000))
def test_an_example_is_read_off_a_list_where_the_model_abstains(shipped_tok, seed):
    r = abstaining_read(shipped_tok, seed, "three-part phrasal verbs, examples?",
                        "- Three-part phrasal verbs: put up with, run out of.")
    assert (r.answer, r.marker, r.listed) == ("put up with", "[#1]", "Three-part phrasal verbs")
    assert not r.abstained and not math.isnan(r.span_score)  # the model read, and abstained
