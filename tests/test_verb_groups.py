"""The words a fill-in's gap stands for: a cue's forms and their auxiliaries on hand-built
windows (struck-out text, table cells, arrow keys, negations), the question's own words before
the gap left out, a pronoun's agreement, candidates that disagree, and, whatever the reader's
weights, a group the windows write answered where the model abstains."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.prompt import build_prompt
from minirag.verb_groups import (
    asked_cell,
    before_gap,
    cue_of,
    filled_gap,
    fitted,
    groups,
    is_form,
    mended_group,
    part_of,
    verb_rows,
)
from tests.fakes import make_chunk, tiny_reader

SNOW = "- Background: The kids were playing outside when the lights went out."
STRUCK = "- Using was with plural subjects: ~~They was playing.~~ → They were playing."


@pytest.mark.parametrize("question, cue", [
    ("they ___ (play) all day", "play"),
    ("They ___ (Play) all day", "play"),
    ("past of play", None),  # no gap
    ("they ___ all day", None),  # no cue
    ("they ___ (play) and ___ (sing)", None),  # two cues
    ("a friend of ___ (i)", None),  # one letter: a pronoun, no verb
    ("we ___ the ferry (take or catch)", None),  # alternatives, not a cue
])
def test_the_cue_of_a_fill_in(question, cue):
    assert cue_of(question) == cue


@pytest.mark.parametrize("word, cue, form", [
    ("playing", "play", True), ("played", "play", True), ("plays", "play", True),
    ("stopping", "stop", True), ("studied", "study", True), ("known", "know", True),
    ("taken", "take", True), ("eaten", "eat", True), ("been", "be", True),
    ("went", "go", False), ("player", "play", False), ("sung", "sing", False),
])
def test_a_form_of_the_cue_by_its_letters(word, cue, form):
    assert is_form(word, cue) is form


@pytest.mark.parametrize("window, cue, found", [
    (SNOW, "play", [["were", "playing"]]),
    (STRUCK, "play", [["were", "playing"]]),  # never the struck-out mistake
    ("By June she will have finished it.", "finish", [["will", "have", "finished"]]),
    ("The past perfect: had gone, had seen, had known.", "know", [["had", "known"]]),
    ("| cost | cost | cost |", "cost", [["cost"], ["cost"]]),  # the key cell is no form
    ("| go | went | gone |", "go", []),  # irregular forms are the table lookup's
    ("easy → easier → easiest", "easy", []),  # an arrow's key is no form
    ("Use play for games.", "play", []),  # the cue alone, in prose: the word explained
    ("They had, played", "play", [["played"]]),  # a comma ends the group
    ("She would not be late.", "be", []),  # a negation the question does not ask for
])
def test_the_groups_a_window_writes(window, cue, found):
    assert [g for g, _ in groups(window, cue, negated=False)] == found


def test_a_negated_question_keeps_a_negated_group():
    assert groups("She would not be late.", "be", negated=True)[0][0] == ["would", "not", "be"]


@pytest.mark.parametrize("group, question, fit", [
    (["has", "taken"], "he has ___ (take) three photos", ["taken"]),
    (["will", "have", "finished"], "by may i will have ___ (finish)", ["finished"]),
    (["have", "been", "running"], "i've ___ (run)", ["been", "running"]),  # a contraction
    (["has", "gone"], "by now she's ___ (go)", ["gone"]),
    (["was", "sleeping"], "they ___ (sleep) on the sofa", ["were", "sleeping"]),  # agreement
    (["are", "playing"], "he ___ (play) now", ["is", "playing"]),
    (["were", "playing"], "i ___ (play) then", ["was", "playing"]),
    (["was", "sleeping"], "the kids ___ (sleep)", ["was", "sleeping"]),  # a noun: left as written
    (["played"], "they ___ (play)", ["played"]),
])
def test_the_group_fitted_to_the_question(group, question, fit):
    assert fitted(group, before_gap(question)) == fit


@given(st.lists(st.sampled_from("am is was have has had will been being not".split()),
                max_size=4),
       st.lists(st.sampled_from("i she they has have was will been to the".split()),
                max_size=5))
def test_a_fitted_group_keeps_the_cues_form(auxiliaries, before):
    fit = fitted([*auxiliaries, "played"], before)
    assert fit and fit[-1] == "played" and len(fit) <= len(auxiliaries) + 1


@pytest.mark.parametrize("windows, question, filled", [
    ([SNOW], "we ___ (play) cards when the phone rang", (0, "were playing")),
    (["Nothing here.", STRUCK], "they ___ (play) in the park", (1, "were playing")),
    # two groups: the one whose line shares more of the question's words
    (["She has played chess. They were playing football in the park."],
     "the kids ___ (play) football in the park", None),  # one line: a tie
    (["She has played chess.\nThey were playing football in the park."],
     "the kids ___ (play) football in the park", (0, "were playing")),
    (["She has played chess.\nHe had played it."], "we ___ (play) cards", None),  # a tie
    ([SNOW], "past of play", None),
    (["Pilots like flying."], "we are fond of ___ (fly)", (0, "flying")),
    (["Pilots like flying."], "tomorrow we ___ (fly) home", None),  # a subject: no -ing alone
    (["No form here."], "they ___ (play)", None),
])
def test_the_words_that_fill_the_gap(windows, question, filled):
    assert filled_gap(windows, question) == filled


def test_a_part_of_the_group_leaves_the_gap_half_empty():
    assert part_of("were", "were playing", "play")
    assert not part_of("were playing", "were playing", "play")  # the whole group
    assert not part_of("played", "were playing", "play")  # a form of the cue: the model's own
    assert not part_of("had", "were playing", "play")  # no word of the group
    assert not part_of("", "were playing", "play")


BEGIN = "| begin | began | begun |\n| ring | rang | rung |"


def test_the_verb_rows_of_a_window():
    assert verb_rows(BEGIN) == [["begin", "began", "begun"], ["ring", "rang", "rung"]]
    assert verb_rows("| be | was / were | been |\n| child | children |") == []  # not 3 words
    assert verb_rows("| go | ~~goed~~ | gone |") == []  # a cell struck out
    assert verb_rows("| go | went | go") == []  # cut inside its last cell: "go" of "gone"


@pytest.mark.parametrize("word, cell", [
    ("has", 2), ("hadn't", 2), ("i've", 2), ("ive", 2), ("did", 0), ("didnt", 0),
    ("can't", 0), ("won't", 0), ("mustn't", 0), ("to", 0), ("she'll", 0), ("was", None),
    ("she", None),
])
def test_the_cell_an_auxiliary_asks_for(word, cell):
    assert asked_cell(word) == cell


@pytest.mark.parametrize("question, mended", [
    ("is 'the bell has rang' right?", (0, "has rung", "rang")),
    ("did the film began late, correct?", None),  # a noun subject: no auxiliary before
    ("did you began early, correct?", (0, "did you begin", "began")),  # inverted: did + you
    ("she might have began it, is that ok", (0, "might have begun", "began")),  # the whole run
    ("they can't rang him, right?", (0, "can't ring", "rang")),
    ("it has never began on time, ok?", (0, "has never begun", "began")),  # an adverb between
    ("have you ever began a diary, right?", (0, "have you ever begun", "began")),
    ("the bell has rung, right?", None),  # already the cell asked
    ("the bell has rang here", None),  # no verdict asked
    ("is 'he has went' right?", None),  # no row of *go* in the windows
    ("did you began or has it began, correct?", None),  # two mends that differ
])
def test_a_wrong_form_after_an_auxiliary_mended_by_its_row(question, mended):
    assert mended_group([BEGIN], question) == mended


@pytest.mark.parametrize("question, text, field, value, answer, keeps", [
    ("we ___ (play) cards when the phone rang", SNOW, "fills", "play", "were playing",
     lambda a: not part_of(a, "were playing", "play")),  # unless a part of the group
    ("is 'the bell has rang' right?", BEGIN, "mends", "rang", "has rung",
     lambda a: "rung" in a.split()),  # only if it holds the form asked
])
@given(seed=st.integers(0, 10_000))
def test_the_rules_answer_where_the_model_has_not(shipped_tok, question, text, field, value,
                                                   answer, keeps, seed):
    prompt = build_prompt(question, [make_chunk(text, "v.md")], tokenizer=shipped_tok)
    r = tiny_reader(shipped_tok, seed, null_margin=1e9).read(prompt)  # the model abstains
    assert (r.answer, r.marker, getattr(r, field)) == (answer, "[#1]", value)
    assert not r.abstained and not math.isnan(r.span_score)  # the model read first
    # a model that always answers keeps its answer where the rule allows it
    r = tiny_reader(shipped_tok, seed, null_margin=-1e9).read(prompt)
    assert getattr(r, field) == value or keeps(r.answer)
