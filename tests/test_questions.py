"""Isolation tests for minirag.training.questions: hand-built facts, no KB, no model."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minirag.chunk import Chunk
from minirag.training.facts import Fact
from minirag.training.phrasings import ASIDES
from minirag.training.questions import (
    EVAL_PHRASINGS,
    aside,
    compose,
    is_probe,
    noisy,
    normalise_question,
    question_for,
)

ROW = "| swim | swam | swum |"
CHUNK = Chunk("c1", f"## Vowel change\n\n| Base form | Past simple | Past participle |\n|---|---|"
                    f"---|\n{ROW}\n", "irregular-verbs-abc.md", 0, {"section": "Vowel change"})


def verb(relation: str, answer: str) -> Fact:
    return Fact("verb", "swim", relation, answer, ROW, CHUNK, ROW)


def test_no_training_question_is_an_eval_phrasing():
    rng = np.random.default_rng(0)
    for rel, answer in (("Past simple", "swam"), ("Past participle", "swum")):
        asked = {normalise_question(question_for(verb(rel, answer), rng)) for _ in range(5000)}
        assert not [q for q in asked if is_probe(q)]
        assert all(is_probe(t.format(k="swim").upper()) for t in EVAL_PHRASINGS[rel])
        assert len(asked) > 1000  # composed, not a short list a reader could learn by heart


def test_an_aside_mentions_its_word_and_names_no_grammar_relation():
    rng = np.random.default_rng(0)
    asked = [aside("sit", rng) for _ in range(2000)]
    assert all("sit" in q.lower() for q in asked)  # noise never touches a 3-letter word
    grammar = re.compile(r"\b(past|participle|plural|tense|form|comparative|superlative)\b")
    assert not any(grammar.search(f) for frames in ASIDES.values() for f in frames)
    assert len({normalise_question(q) for q in asked}) > 400
    assert sum(len(frames) for frames in ASIDES.values()) >= 40


def test_fill_ins_put_the_verb_in_brackets_and_the_cue_in_the_sentence():
    rng = np.random.default_rng(1)
    qs = [compose(verb("Past participle", "swum"), rng) for _ in range(400)]
    gaps = [q for q in qs if "___" in q]
    assert gaps and all("(swim)" in q for q in gaps)
    assert all(re.search(r"(have|has|had|was|been)", q) for q in gaps)
    # the answer is never given away: it appears only beside its rival, as in "swam or swum"
    words = [set(re.findall(r"[a-z]+", q)) for q in qs]
    assert all("swam" in ws or "swum" not in ws for ws in words)
    assert any(re.search(r"\bswum or swam\b|\bswam or swum\b", q) for q in qs)


def test_a_mistake_question_shows_a_wrong_form_never_the_answer():
    rng = np.random.default_rng(2)
    qs = [compose(verb("Past simple", "swam"), rng) for _ in range(600)]
    mistakes = [q for q in qs if re.search(r"correct|right or wrong|can i say|wrong with|"
                                           r"good english|is that right|ok\?", q.lower())]
    assert mistakes
    for q in mistakes:
        words = set(re.findall(r"[a-z]+", q.lower()))
        assert "swam" not in words and words & {"swimed", "swum"}


@given(st.text(st.characters(max_codepoint=127), min_size=1, max_size=40),
       st.integers(0, 2**32 - 1))
def test_noise_drops_at_most_one_letter_and_adds_at_most_two_marks(q, seed):
    out = noisy(q, np.random.default_rng(seed))
    letters = lambda s: len(re.findall(r"[^\W\d_]", s))  # noqa: E731
    assert letters(q) - 1 <= letters(out) <= letters(q)
    assert len(out) <= len(q) + 2


def test_a_gap_question_keeps_the_gap_and_its_hint():
    key = "When I got home, she had ___ (go) to bed."
    fact = Fact("gap", key, "gap", "gone", key.replace("___ (go)", "gone"), CHUNK)
    rng = np.random.default_rng(0)
    asked = [compose(fact, rng) for _ in range(300)]
    assert all("___ (go) to bed" in q.lower() for q in asked)
    assert any(not q.lower().startswith("when i got home") for q in asked)  # the clause alone
    assert any(q.startswith("she had ___") for q in asked)  # lowercase, as typed
