"""The form a fill-in's sentence asks of its cue (gap_forms): the kind read from the words
around the gap, the cue's forms read from arrows and headed rows, and, whatever the reader's
weights, the asked form answered where the model abstains."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.gap_forms import asked_form, asked_kind, cue_forms, misformed
from tests.fakes import abstaining_read

HOT = "Double the consonant: hot → hotter → hottest, big → bigger → biggest."
PLURALS = "| Singular | Plural |"
MOUSE = "| mouse | mice |"
KNOW, VERBS = "| know | knew | known |", "| Base form | Past simple | Past participle |"


@pytest.mark.parametrize("question, kind", [
    ("this road is ___ (dry) than the old one", "er"),
    ("my bag is ___ than yours (light)", "er"),  # the cue at the end
    ("the ___ (big) house in town", "est"),
    ("there were two ___ (mouse) in the shed", "plural"),
    ("she has 3 ___ (child)", "plural"),
    ("several ___ (crisis) at once", "plural"),
    ("he is much ___ (good) now", None),  # no "than": the kind is not said
    ("our coach ___ (teach) us to swim when we were six", "past"),
    ("she ___ (sell) her car two years ago", "past"),
    ("we were ___ (travel) around spain last summer", None),  # an auxiliary asks another form
    ("i ___ (go) there in 2019", "past"),
    ("they ___ (swim) every day", None),
    ("past of swim", None),  # no gap
    # the past perfect: a third conditional's if-clause, a wish about the past
    ("if we ___ (see) the sign, we would have stopped", "had"),
    ("they wouldnt have missed it if they ___ (leave) earlier", "had"),
    ("if my brother ___ (see) it he'd have laughed", "had"),
    ("i wish i ___ (go) to the party last night", "had"),
    ("i wish i ___ (be) taller", None),  # a wish about now
    ("if it ___ (rain) tomorrow we will stay in", None),  # a first conditional
])
def test_the_kind_the_words_around_the_gap_ask(question, kind):
    assert asked_kind(question) == kind


def test_the_forms_of_a_cue_from_arrows_and_headed_rows():
    assert cue_forms([HOT], {}, "hot") == [(0, "hotter", {"er"}), (0, "hottest", {"est"})]
    assert cue_forms(["swim → swims"], {}, "swim") == [(0, "swims", {"s", "plural"})]
    assert cue_forms([MOUSE], {MOUSE: PLURALS}, "mouse") == [(0, "mice", {"plural"})]
    assert cue_forms([MOUSE], {}, "mouse") == []  # no header: no column named
    teach, verbs = "| teach | taught | taught |", "| Base form | Past simple | Past participle |"
    assert cue_forms([teach], {teach: verbs}, "teach") == [
        (0, "taught", {"ed", "past"}), (0, "taught", {"ed"})]  # the participle is no past simple
    assert cue_forms(["work → worked"], {}, "work") == [(0, "worked", {"ed", "past"})]
    assert cue_forms(["~~hot → hoter~~ is wrong"], {}, "hot") == []  # struck out


@pytest.mark.parametrize("windows, headers, question, formed", [
    ([HOT], {}, "spain is ___ (hot) than england", (0, "hotter", "hot")),
    (["x", HOT], {}, "the ___ (big) house", (1, "biggest", "big")),
    ([MOUSE], {MOUSE: PLURALS}, "two ___ (mouse) ran away", (0, "mice", "mouse")),
    ([HOT], {}, "a ___ (hot) day", None),  # no kind asked, two forms shown
    # no kind asked, one form shown of a cue that is no verb: that form
    ([MOUSE], {MOUSE: PLURALS}, "there are ___ (mouse) in here", (0, "mice", "mouse")),
    (["x", "gentle → gently"], {}, "she smiled ___ (gentle)", (1, "gently", "gentle")),
    # ... but a verb's one form needs the sentence: "was built", not "built"
    (["| build | built | built |"],
     {"| build | built | built |": "| Base | Past simple | Participle |"},
     "this castle ___ (build) in 1400", None),
    (["clean → cleaned"], {}, "the room ___ (clean) right now", None),
    ([HOT], {}, "the ___ (cold) day", None),  # no form of the cue shown
    ([HOT, "hot → more hot"], {}, "it is ___ (hot) than ever", None),  # two comparatives
    ([HOT], {}, "the ___ (hot) and (big) day", None),  # two cues
    (["| sell | sold | sold |"], {"| sell | sold | sold |": "| Base | Past simple | Participle |"},
     "we ___ (sell) the car last year", (0, "sold", "sell")),
    # the past perfect: "had" and the participle, from its cell or a regular arrow
    ([KNOW], {KNOW: VERBS}, "if i ___ (know), i'd have helped", (0, "had known", "know")),
    (["x", "finish → finished"], {}, "she wishes she ___ (finish) it yesterday",
     (1, "had finished", "finish")),
    ([KNOW], {KNOW: "| Base | Past simple | Other |"},
     "if i ___ (know), i'd have helped", None),  # no participle column: no participle shown
])
def test_the_asked_form_of_the_cue(windows, headers, question, formed):
    assert asked_form(windows, headers, question) == formed


def test_another_form_of_the_cue_is_misformed():
    formed = (0, "hottest", "hot")
    assert misformed("hotter", [HOT], {}, formed) and misformed("Hot", [HOT], {}, formed)
    assert not misformed("hottest", [HOT], {}, formed)  # the form asked
    assert not misformed("warm", [HOT], {}, formed)  # not a form of the cue
    had = (0, "had known", "know")
    assert misformed("knew", [KNOW], {KNOW: VERBS}, had)  # the past simple, not the perfect
    assert not misformed("had known", [KNOW], {KNOW: VERBS}, had)


@given(st.integers(0, 10_000))
def test_the_past_perfect_is_answered_where_the_model_abstains(shipped_tok, seed):
    r = abstaining_read(shipped_tok, seed, "if i ___ (know), i'd have helped",
                        f"{VERBS}\n|---|---|---|\n{KNOW}")
    assert (r.answer, r.marker, r.formed) == ("had known", "[#1]", "know")


@given(st.integers(0, 10_000), st.sampled_from([
    ("spain is ___ (hot) than england", "hot", "hotter"),
    ("the ___ (big) house", "big", "biggest")]))
def test_the_asked_form_is_answered_where_the_model_abstains(shipped_tok, seed, case):
    question, cue, form = case
    r = abstaining_read(shipped_tok, seed, question, HOT)
    assert (r.answer, r.marker, r.formed) == (form, "[#1]", cue)
