"""Word forms in arrows: the pairs found in a line (chains, struck marks, two-word forms), the
form each gives, and the questions `minirag eval`'s `regular forms` row asks of them; and a
learner's own form of a word: its ending and the words that ending may have been added to."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.eval.reading import form_questions
from minirag.forms import (
    FORM_NAMES,
    arrows,
    asked_kinds,
    bases,
    ending,
    entries,
    foreign_forms,
    form_kind,
    other_columns,
    other_forms,
    regular_forms,
    starts_like,
    stem,
)
from tests.fakes import make_chunk


def test_arrows_finds_each_pair_and_joins_a_chain():
    assert arrows("add -ing: work → working, stop → stopping.") == [
        ("work", "working"), ("stop", "stopping")]
    assert arrows("big → bigger → biggest") == [("big", "bigger"), ("big", "biggest")]
    assert arrows("tall → taller → the tallest; nice → most nice") == [
        ("tall", "taller"), ("tall", "tallest"), ("nice", "most nice")]
    assert arrows("careful → more careful, *quiet → quietly*") == [
        ("careful", "more careful"), ("quiet", "quietly")]
    assert arrows("~~goed~~ → went") == [("goed", "went")]  # a correction is an arrow too
    assert arrows("→ see above; go -> went") == []


def test_form_kind_reads_the_change():
    assert form_kind("stop", "stopping") == "ing"
    assert form_kind("try", "tried") == "ed"
    assert form_kind("big", "bigger") == "er"
    assert form_kind("careful", "more careful") == "er"
    assert form_kind("careful", "most careful") == "est"
    assert form_kind("watch", "watches") == "s"
    assert form_kind("watch", "watches", "plural-nouns.md") == "plural"
    assert form_kind("quick", "quickly") == "ly"
    assert form_kind("goed", "went") is None  # no ending: a correction, not a form
    assert form_kind("give up", "gave up") is None  # two words: no single change
    assert form_kind("Go", "go") is None


def test_regular_forms_keep_the_forms_of_their_own_word():
    text = ("lie → lying, wife → wives; well → better → best; at the airport → arrived; "
            "pity → pitiless; give up → has given up; tall → taller → the tallest")
    assert regular_forms(text, "nouns.md") == [
        ("lie", "lying", "ing"), ("wife", "wives", "plural"), ("tall", "taller", "er"),
        ("tall", "tallest", "est")]
    assert form_kind("airport", "arrived") == "ed"  # the shape alone says a past


@pytest.mark.parametrize("word, form, like", [
    ("lie", "lying", True), ("happy", "happier", True), ("argue", "argument", True),
    ("dry", "driest", True), ("nic", "picnicked", False), ("airport", "arrived", False),
    ("go", "went", False)])
def test_a_form_starts_like_its_word(word, form, like):
    assert starts_like(word, form) is like


@given(st.from_regex(r"[a-z]{2,8}", fullmatch=True), st.sampled_from(["ing", "ed", "ly"]))
def test_a_suffix_names_its_form_whatever_the_word(word, suffix):
    if not word.endswith(suffix):
        assert form_kind(word, word + suffix) == suffix
        assert arrows(f"x: {word} → {word}{suffix}.") == [(word, word + suffix)]


def test_every_kind_has_names_a_question_can_use():
    kinds = {form_kind(*pair) for pair in (("a", "aing"), ("a", "aed"), ("a", "as"),
                                           ("a", "as", "nouns.md"), ("a", "aer"),
                                           ("a", "aest"), ("a", "aly"))}
    assert kinds == set(FORM_NAMES)
    assert all(len(w) >= 3 for names in FORM_NAMES.values() for w in names)


def test_form_questions_ask_each_arrow_once_the_plainest_way():
    first = make_chunk("Add -er: big → bigger → biggest, *nice → nicer*.", "adjectives.md")
    again = make_chunk("Double it: big → bigger.", "spelling.md")
    nouns = make_chunk("- box → boxes\n- ~~childs~~ → children", "plural-nouns.md")
    asked = form_questions([first, again, nouns])
    assert {q: (c.doc_id, form) for q, (c, form) in asked.items()} == {
        "comparative of big": ("adjectives.md", "bigger"),
        "superlative of big": ("adjectives.md", "biggest"),
        "comparative of nice": ("adjectives.md", "nicer"),
        "plural of box": ("plural-nouns.md", "boxes"),
    }


def test_a_question_names_the_kinds_of_form_it_asks_for():
    assert asked_kinds("past of lie") == {"ed"}
    assert asked_kinds("past continuous of swim") == {"ed", "ing"}
    assert asked_kinds("plural of baby") == {"plural", "s"}  # one shape: both kinds
    assert asked_kinds("third person of go") == {"plural", "s"}
    assert asked_kinds("what does lie mean") == set()


def test_other_forms_are_the_arrows_of_kinds_not_asked_for():
    text = "lie → lying, die → dying; stop → stopped. big → bigger → biggest"
    assert other_forms(text, "past of lie") == {"lying", "dying", "bigger", "biggest"}
    assert other_forms(text, "comparative of big") == {"lying", "dying", "stopped", "biggest"}
    assert other_forms(text, "what does lie mean") == set()  # names no form: nothing ruled out


def test_entries_are_table_rows_and_arrows():
    text = "| good (adjective) | better | the best |\n| much / many | more |\nstop → stopped."
    assert entries(text) == [({"good", "adjective"}, {"better", "the best"}),
                             ({"much", "many"}, {"more"}), ({"stop"}, {"stopped"})]
    assert entries("no table here, no arrow") == []
    assert entries(text, arrows=False) == entries(text)[:2]  # the rows alone


def test_foreign_forms_belong_to_entries_of_words_not_asked_about():
    text = "| drive | drove | driven |\n| ride | rode | ridden |\nbegin → beginning"
    assert foreign_forms(text, {"past", "of", "strive"}) == {
        "drive", "drove", "driven", "ride", "rode", "ridden", "begin", "beginning"}
    assert foreign_forms(text, {"ride"}) == {"drive", "drove", "driven", "begin", "beginning"}
    # a form that the asked word's own entry also gives is never foreign
    assert foreign_forms("| much | more |\n| many | more |", {"much"}) == {"many"}


VERBS = "| Base form | Past simple | Past participle |"
PRONOUNS = "| Subject | Object | Possessive adjective | Possessive pronoun | Reflexive |"


def test_other_columns_are_the_cells_under_a_column_named_less():
    be, cut = "| be | was / were | been |", "| cut | cut | cut |"
    heads = {be: VERBS, cut: VERBS}
    assert other_columns(be, "past participle of be", heads) == {"be", "was", "were"}
    assert other_columns(be, "past simple of be", heads) == {"be", "been"}
    assert other_columns(be, "base form of was", heads) == {"was", "were", "been"}
    assert other_columns(be, "past of be", heads) == {"be"}  # both past columns tie: the reader's
    assert other_columns(cut, "past participle of cut", heads) == set()  # one form, every column
    assert other_columns(be, "is be irregular", heads) == set()  # no column named
    assert other_columns(be, "be + have: which form?", heads) == set()  # "form" names none
    assert other_columns(be, "past participle of be", {}) == set()  # no header known
    # a column of another kind of form than the one asked: "he/she form" asks the -s form
    fly = "| fly | flew | flown |"
    assert asked_kinds("he/she form of fly") == {"s", "plural"}
    assert asked_kinds("fly with he or she") == asked_kinds("she / he: fly") == {"s", "plural"}
    assert asked_kinds("the shed or the hedge") == set()  # whole words only
    assert other_columns(fly, "he/she form of fly", {fly: VERBS}, {"s"}) == {"flew", "flown"}
    assert other_columns(fly, "-ing form of fly", {fly: VERBS}, {"ing"}) == {"flew", "flown"}
    assert other_columns(fly, "-ing form of fly", {fly: VERBS}) == set()  # no kind given
    big, adjectives = "| big | bigger | biggest |", "| Adjective | Comparative | Superlative |"
    assert other_columns(big, "comparative of big", {big: adjectives}) == {"big", "biggest"}
    # said most, then left least unsaid: "object pronoun" is the Object column
    we = "| we | us | our | ours | ourselves |"
    assert other_columns(we, "object pronoun for we", {we: PRONOUNS}) == {"we", "our", "ours",
                                                                           "ourselves"}
    he = "| he | him | his | his | himself |"
    assert other_columns(he, "possessive adjective of he", {he: PRONOUNS}) == \
        {"he", "him", "himself"}


@given(st.lists(st.sampled_from(["past", "participle", "simple", "base", "form", "of", "go"]),
                max_size=6))
def test_a_best_named_column_is_never_banned(words):
    row = "| go | went | gone |"
    banned = other_columns(row, " ".join(words), {row: VERBS})
    names = [{"base"}, {"past", "simple"}, {"past", "participle"}]
    said = [(len(ns & set(words)), -len(ns - set(words))) for ns in names]
    best = {f for f, s in zip(("go", "went", "gone"), said) if s == max(said) or not max(said)[0]}
    assert not banned & best and (banned or len(best) == 3)


def test_stem_joins_a_words_regular_forms_and_their_misspellings():
    groups = [["stop", "stops", "stopped", "stopping", "stoping", "stoped"],
              ["study", "studies", "studied", "studyed", "studying"],
              ["make", "making"], ["open", "opened", "opening", "openning"],
              ["kiss", "kissed", "kisses"], ["agree", "agreed"], ["fall", "falls", "falling"]]
    for forms in groups:
        assert len({stem(w) for w in forms}) == 1, forms
    assert len({stem(forms[0]) for forms in groups}) == len(groups)  # and keeps words apart
    assert stem("went") == "went" and stem("bus") == "bus"  # no lemma table; 3 letters stay


CONSONANTS = "bcdfgkmnprtvxz"  # no l or s (their pairs stay doubled) and no vowel: a clean end


@given(st.text("aeiou" + CONSONANTS, min_size=1, max_size=7), st.sampled_from("aiou"),
       st.sampled_from(CONSONANTS))
def test_a_words_regular_endings_and_their_misspellings_share_its_stem(body, vowel, last):
    word = body + vowel + last  # "stop", "plan": no ending of its own; -ing, -ed, -s attach plainly
    forms = [word + "ing", word + "ed", word + "s", word + last + "ing", word + last + "ed"]
    assert {stem(f) for f in forms} == {stem(word)} == {word}


@pytest.mark.parametrize("word, end", [
    ("enjoies", "s"), ("boxes", "s"), ("planed", "ed"), ("swiming", "ing"), ("biger", "er"),
    ("glass", None), ("walk", None),
])
def test_the_ending_of_a_word(word, end):
    assert ending(word) == end


def test_bases_are_the_words_an_ending_was_added_to():
    assert {"bad"} <= bases("baddest", "est") and {"nice"} <= bases("nicer", "er")
    assert {"funny"} <= bases("funnier", "er") and {"public"} <= bases("publically", "ly")
    assert {"tattoo"} <= bases("tattooes", "s") and {"wolf"} <= bases("wolfs", "s")
    assert {"ox"} <= bases("oxes", "s") and {"fly"} <= bases("fliing", "ing")
    assert {"dance"} <= bases("danceing", "ing")
