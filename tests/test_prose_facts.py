"""Prose facts and their questions (training/prose_facts.py): the exact facts a hand-built
section gives (bold phrases, tense names and places of rule text, never of an example, a table
row or a phrase the line holds twice; a short sentence read with the one before it), the lead
a phrase's kind gets, and on every fact of the KB the rule each question keeps: it asks with
the line's words and never holds its answer."""

import re

import numpy as np
import pytest

from minirag.files.artifacts import load_tokenizer
from minirag.training.prose_facts import (
    LEADS,
    WORDS,
    category,
    prose_facts,
    prose_question,
)
from minirag.training.reader_train import reader_world
from tests.fakes import make_chunk

LEAD_WORDS = {w for leads in LEADS.values() for lead in leads for w in WORDS.findall(lead)}

TEXT = ("## Perfect\n"
        "Use the **present perfect** for a result now: *I **have lost** my keys.*\n"
        "- **since** + a starting point in time, never **for** with it: *since May*.\n"
        "- The **so** word means so much here.\n"
        "- Short **one**.\n"
        "- Question tags go at the end of the sentence, after a comma.\n"
        "- The doer is the agent of the verb. Name it with **by**.\n"
        "| **x** | y |\n")


def test_prose_facts_are_the_rule_texts_phrases_cut_out():
    facts = prose_facts(make_chunk(TEXT))
    assert [(f.answer, f.key) for f in facts] == [
        ("present perfect", "Use the ___ for a result now:"),  # not the example's "have lost"
        ("for", "- since + a starting point in time, never ___ with it: ."),
        ("since", "- ___ + a starting point in time, never for with it: ."),
        ("after a comma", "- Question tags go at the end of the sentence, ___."),  # places
        ("at the end of the sentence", "- Question tags go ___, after a comma."),
        ("by", "- The doer is the agent of the verb. Name it with ___."),  # with the sentence
    ]  # before it; "so" is in its line twice, "one" leaves too few words to ask with, "x" is
    # a table cell
    assert all(f.kind == "prose" and f.key.replace("___", f.answer) == f.line for f in facts)


@pytest.mark.parametrize("answer, kind", [
    ("present perfect", "tense"), ("Past continuous", "tense"), ("past participle", "phrase"),
    ("since", "preposition"), ("before", "place"), ("at the end", "place"),
    ("whose", "word"), ("statement word order", "phrase")])
def test_category_names_the_kind_of_phrase(answer, kind):
    assert category(answer) == kind


def test_a_question_keeps_the_clause_around_the_cut():
    fact = prose_facts(make_chunk(TEXT))[0]
    questions = {prose_question(fact, np.random.default_rng(s)).lower() for s in range(200)}
    assert all("present perfect" not in q for q in questions)
    assert all(set(q.split()) & {"result", "now", "use"} for q in questions)
    assert any(q.startswith("which tense") for q in questions)
    assert any("what" in q.split() and q.split()[-1] != "what" for q in questions)


@pytest.fixture(scope="module")
def kb_prose():
    return reader_world(tokenizer=load_tokenizer()).facts["prose"]


def test_every_kb_question_asks_with_the_lines_words_and_hides_the_answer(kb_prose):
    assert len(kb_prose) > 200
    rng = np.random.default_rng(0)
    for f in kb_prose:
        q = prose_question(f, rng).lower()
        assert not re.search(rf"(?<![\w']){re.escape(f.answer.lower())}(?![\w'])", q), (q, f)
        asked, line = set(WORDS.findall(q)), set(WORDS.findall(f.key.lower()))
        assert asked <= line | LEAD_WORDS, (q, f.key)  # the lead's words and the line's only
        assert asked & line, (q, f.key)
