"""The option the KB decides: the options read off a question's "or", each shape of support
on hand-built windows (a window with one option, a line with one, an option struck out, one
option inside the other, a form the windows never write), the questions that choose nothing,
the edit distance against a recursive oracle, and, whatever the reader's
weights, a choice the windows decide is answered where the model abstains or names neither
option."""

from __future__ import annotations

import math
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.choices import chosen_option, edits, names_either, one_thing, options, written_form
from minirag.prompt import build_prompt
from minirag.reader_inputs import WORD, holds_run
from tests.fakes import make_chunk, tiny_reader

PLANS = "- Plans made before now: We're going to paint the kitchen."
DEADLINE = "- Deadlines: by Monday, by then.\nWhile: during the time that."
LITTLE = ("| good outcome | a little: I have a little money.\n"
          "| bad outcome | little: We had little time.")


@pytest.mark.parametrize("windows, question, opts", [
    ([PLANS], "will or going to about plans made earlier", (["will"], ["going", "to"])),
    ([LITTLE], "little or a little for a good outcome", (["little"], ["a", "little"])),
    (["I am tired.", "I am tiring."], "i am tiring or i am tired?",  # "i am" is no option
     (["i", "am", "tiring"], ["i", "am", "tired"])),
    (["~~an red apple~~ → a red apple"], "an red apple or a red apple",
     (["an", "red", "apple"], ["a", "red", "apple"])),  # struck text holds an option too
    (["nothing here"], "will or going to", None),  # no window holds either side
    ([PLANS], "will vs going to - whats the difference", None),  # asks what sets them apart
    ([PLANS], "she ___ (go) or ___ (come)", None),  # a gap to fill
    ([PLANS], "past of go", None),  # no choice offered
    ([PLANS], "going to / is it a plan", None),  # "/" joins clauses as often as options
    (["It is wrong.", "It is correct."], "is 'we goes' correct or wrong?", None),  # a verdict
    ([PLANS], "a word for a time, like now or then", None),  # examples listed, not offered
    ([PLANS], "a word that goes with plans, besides will or going to", None),
    # a fill-in chooses between the alternatives its bracket offers, whatever "or" it holds
    ([PLANS], "we ___ paint it, it is a plan (will / going to)", (["will"], ["going", "to"])),
    ([LITTLE], "there is ___ time for it (little or a little)", (["little"], ["a", "little"])),
    ([PLANS], "we ___ (paint) the kitchen or the hall", None),  # one cue, no choice
    # or in a clause of its own, before or after the sentence, when no one-word cue is there
    ([LITTLE], "there is ___ time for it: little or a little?", (["little"], ["a", "little"])),
    ([PLANS], "'will' or 'going to' - we ___ paint it", (["will"], ["going", "to"])),
    ([PLANS], "we ___ (go) on holiday - will or going to", None),  # the cue asks a form
    ([PLANS], "we ___ paint the kitchen or the hall with a plan", None),  # no clause of its own
])
def test_the_options_of_a_question(windows, question, opts):
    assert options(windows, question) == opts


@pytest.mark.parametrize("windows, question, chosen", [
    # a window that holds one option only: its words shared with the situation
    ([PLANS], "will or going to about plans made earlier", (0, "going to", "will")),
    # a window that holds both: the line that holds one only
    ([DEADLINE], "by or while with a deadline", (0, "by", "while")),
    # one option inside the other: "little" counts outside "a little"
    ([LITTLE], "little or a little for a good outcome", (0, "a little", "little")),
    ([LITTLE], "a little or little for a bad outcome", (0, "little", "a little")),
    # the option struck out loses to the one kept, with no situation at all
    (["- ~~an red apple~~ → a red apple (a consonant sound)."], "an red apple or a red apple",
     (0, "a red apple", "an red apple")),
    # the second window supports it; the answer is as the window writes it
    (["| go | went |", "For a PLAN: Going To."], "will or going to about a plan",
     (1, "Going To", "will")),
    # a fill-in: the sentence around the gap is the situation
    ([DEADLINE], "send it ___ the deadline (by/while)", (0, "by", "while")),
    # no situation, nothing struck: neither is ahead
    (["It's going to rain.", "I'll help you."], "will or going to?", None),
    # both supported as much: neither is ahead
    (["A plan: will.", "A plan: going to."], "will or going to about a plan", None),
])
def test_the_option_a_window_supports(windows, question, chosen):
    assert chosen_option(windows, question) == chosen


@pytest.mark.parametrize("windows, question, chosen", [
    # two forms of one word, no situation shared: the form the windows write
    (["| ox | oxen |"], "oxes or oxen, a farmer owns two", (0, "oxen", "oxes")),
    (["Before a consonant sound: a university, a one-way street."], "an university or a university",
     (0, "a university", "an university")),
    (["| goose | geese |", "| im- | not | Impossible, impolite |"], "unpossible or impossible?",
     (1, "Impossible", "unpossible")),
    # two different words: writing one says nothing against the other
    (["We have lived here for a week."], "since or for?", None),
    (["It's a cat."], "its or it's?", None),  # an apostrophe sets two words apart
    (["Between you and me."], "me or i?", None),  # nothing shared: two words
    # both forms written, or the only one written is struck out: nothing settled
    (["| ox | oxen |", "Oxes is not a word."], "oxes or oxen", None),
    (["~~oxes~~ is wrong"], "oxes or oxen", None),
])
def test_a_form_the_windows_never_write_loses(windows, question, chosen):
    assert chosen_option(windows, question) == chosen


@pytest.mark.parametrize("a, b, same", [
    ("oxes", "oxen", True), ("an university", "a university", True), ("has", "have", True),
    ("unpossible", "impossible", True), ("since", "for", False), ("i", "me", False),
    ("its", "it's", False), ("will", "going to", False),
])
def test_two_forms_of_one_thing(a, b, same):
    assert one_thing(a, b) is same and one_thing(b, a) is same


def test_the_written_form_is_the_windows_own_text():
    assert written_form(["Two OXEN pulled it."], (["oxes"], ["oxen"])) == (0, "OXEN", "oxes")
    assert written_form(["nothing"], (["oxes"], ["oxen"])) is None


@cache
def _levenshtein(a: str, b: str) -> int:  # the definition, recursively: the oracle
    if not a or not b:
        return len(a) + len(b)
    return min(_levenshtein(a[1:], b) + 1, _levenshtein(a, b[1:]) + 1,
               _levenshtein(a[1:], b[1:]) + (a[0] != b[0]))


@given(st.text("abcx'", max_size=7), st.text("abcx'", max_size=7))
def test_edits_is_the_levenshtein_distance(a, b):
    d = edits(a, b)
    assert d == _levenshtein(a, b) == edits(b, a)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b)) and (d == 0) == (a == b)


def test_an_answer_names_an_option_by_the_words_that_set_it_apart():
    choice = (0, "i am tired", "i am tiring")
    assert names_either("tired", choice) and names_either("I am tiring", choice)
    assert not names_either("i am", choice) and not names_either("sleepy", choice)


def test_the_situation_is_no_contraction_or_auxiliary():
    # "i'll" (read "ill") and "have" are on the line that holds "until": no support for it
    windows = ["By Friday it is done.\nUntil then I'll have to wait."]
    assert chosen_option(windows, "i'll have it done by friday or until friday") == (
        0, "By Friday", "until")


WORDS = st.sampled_from("will going to plan by while a little deadline rain the".split())


@given(st.lists(st.lists(WORDS, max_size=8).map(" ".join), min_size=1, max_size=3),
       st.lists(WORDS, min_size=1, max_size=3), st.lists(WORDS, min_size=1, max_size=3),
       st.lists(WORDS, max_size=3))
def test_a_chosen_option_is_the_questions_words_and_its_windows(windows, a, b, situation):
    question = f"{' '.join(a)} or {' '.join(b)} for {' '.join(situation)}"
    chosen = chosen_option(windows, question)
    if chosen is not None:
        n, text, other = chosen
        words = WORD.findall(text.lower())
        assert holds_run(WORD.findall(question), words)
        assert holds_run(WORD.findall(windows[n].lower()), words)
        assert words != WORD.findall(other)


@given(st.integers(0, 10_000))
def test_a_choice_the_windows_decide_is_answered_where_the_model_has_none(shipped_tok, seed):
    prompt = build_prompt("by or while with a deadline", [make_chunk(DEADLINE, "b.md")],
                          tokenizer=shipped_tok)
    r = tiny_reader(shipped_tok, seed, null_margin=1e9).read(prompt)  # abstains
    assert (r.answer, r.marker, r.chosen_over) == ("by", "[#1]", "while")
    assert not r.abstained and not math.isnan(r.span_score)  # the model read first
    # a model that always answers keeps its answer only if it names an option
    r = tiny_reader(shipped_tok, seed, null_margin=-1e9).read(prompt)
    assert r.chosen_over == "while" or names_either(r.answer, (0, "by", "while"))


def test_the_rules_read_the_whole_question_where_the_prompt_cuts_it(shipped_tok):
    # the prompt keeps MAX_QUESTION tokens of a long question: its second option falls off the
    # ids the model reads, but not off the question the rules read (Prompt.question)
    long = ("after a long week at the office with far too many meetings, emails and calls "
            "about money, is it little or a little for a good outcome")
    prompt = build_prompt(long, [make_chunk(LITTLE, "b.md")], tokenizer=shipped_tok,
                          question_end=False)  # the ids keep the question's start
    asked = prompt.token_ids[:prompt.token_ids.index(shipped_tok.encode_special("<|ctx|>")[0])]
    assert "or a little" not in shipped_tok.decode(asked) and prompt.question == long
    r = tiny_reader(shipped_tok, 0, null_margin=1e9).read(prompt)
    assert r.answer == "a little" and r.chosen_over is not None
    assert tiny_reader(shipped_tok, 0, null_margin=1e9).read_ids(
        prompt.token_ids).abstained  # the ids alone hold no choice

