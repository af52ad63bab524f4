"""The bold-form choices (training/bold_choices.py): facts and rivals read off a hand-built
section, the exact question a fact makes (bare forms or both in the line's words, either
order), no question without a rival of as many words absent from the line, and on the KB the
rule every example keeps: the answer is shown, the rival never is."""

import re

import numpy as np
import pytest

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk
from minirag.files.artifacts import load_tokenizer
from minirag.reader_inputs import windows
from minirag.training.bold_choices import bold_examples, bold_facts, bold_question
from minirag.training.choice_data import NONE_SHARE
from minirag.training.eval_filter import eval_filter
from minirag.training.questions import is_probe
from minirag.training.reader_train import reader_world

TEXT = ("# Past simple\n## Be\n"
        "After *we*, use **were** in the past.\n"
        "- *We **were** late for the train.*\n"
        "- *I **was** tired* is first person.\n"
        "- **would have been able to** is too long to ask.\n"
        "| advice | **had** |\n")
CHUNK = Chunk("b" * 12, TEXT, "past.md", 0, {"section": "Be"})


def test_bold_facts_read_prose_forms_and_every_rival_of_the_section():
    facts, rivals = bold_facts([CHUNK])
    assert [(f.answer, f.line) for f in facts] == [
        ("were", "After we, use were in the past."),
        ("were", "- We were late for the train."),
        ("was", "- I was tired is first person.")]  # not the table's, nor the long one
    assert all(f.kind == "bold" and f.chunk is CHUNK for f in facts)
    assert rivals == {("past.md", "Be"): ["had", "was", "were"]}


def test_a_bold_question_offers_the_form_and_a_rival_the_line_lacks():
    line = "We were late for the train."
    facts, _ = bold_facts([Chunk("c" * 12, f"## S\n- *{line.replace('were', '**were**')}*\n",
                                 "c.md", 0, {"section": "S"})])
    f = facts[0]
    assert f.line == "- " + line
    rivals = {("c.md", "S"): ["late", "sea", "was", "were"]}  # "late" is in the line
    asked = [bold_question(f, rivals, np.random.default_rng(s)) for s in range(60)]
    assert all(a is not None for a in asked)
    bare = [(q, r) for q, a, r in asked if a == "were"]
    whole = [(a, r) for q, a, r in asked if a != "were"]
    assert bare and whole  # both kinds are drawn
    assert {r for _, r in bare} == {"sea", "was"}  # never "late": the line holds it
    for a, r in whole:  # the same words of the line around either form, never the "-"
        assert a in line and r in {a.replace("were", "was"), a.replace("were", "sea")}
    assert {a for a, _ in whole} <= {"We were", "We were late", "We were late for",
                                     "We were late for the", "were late", "were late for",
                                     "were late for the"}
    assert {q.lower().index("were") < q.lower().index(r) for q, r in bare
            if "were" in q.lower() and r in q.lower()} == {True, False}  # either order
    assert bold_question(f, {("c.md", "S"): ["were", "late"]}, np.random.default_rng(0)) is None
    assert bold_question(f, {("c.md", "S"): ["were", "had been"]},
                         np.random.default_rng(0)) is None  # no rival of as many words


def test_too_few_clean_choices_is_an_error_not_an_endless_draw():
    facts, _ = bold_facts([CHUNK])
    with pytest.raises(ValueError, match="clean choices"):
        bold_examples(facts, {}, [], None, None, 3, np.random.default_rng(0))
    assert bold_examples(facts, {}, [], None, None, 0, np.random.default_rng(0)) == []


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


def test_an_example_whose_windows_show_the_rival_is_dropped(tok):
    """Two chunks of one section, each with one bold form: whichever is asked, the other is
    its only rival, and the rival as offered (bare, or in the asked line's words) is never in a
    shown window, although the other chunk is a likely distractor."""
    chunks = [Chunk(c * 12, f"## Mood\n- *{who} **{form}** {rest}.*\n", "mood.md", i,
                    {"section": "Mood"})
              for i, (c, who, form, rest) in enumerate((("d", "We", "were", "home, so we ate"),
                                                         ("e", "I", "was", "late, so I ran")))]
    filler = [Chunk(f"{i:012x}", f"## Nouns\n- Cats and dogs number {i}.\n", "n.md", i,
                    {"section": "Nouns"}) for i in range(6)]  # distractors that name no form
    bm25 = BM25Index()
    bm25.add(chunks + filler)
    facts, rivals = bold_facts(chunks + filler)
    assert rivals == {("mood.md", "Mood"): ["was", "were"]}
    ex = bold_examples(facts, rivals, chunks + filler, bm25, tok, 60, np.random.default_rng(1))
    answered = [e for e in ex if e.answer is not None]  # a "none" twin shows neither phrase
    assert len(answered) > 30
    for e in answered:
        shown = " ".join(tok.decode(e.ids[lo:hi]).lower() for lo, hi in windows(e.ids, tok))
        form, other = ("were", "was") if "were" in e.answer.lower() else ("was", "were")
        rival = re.sub(rf"\b{form}\b", other, e.answer.lower())  # as the question offers it
        assert e.answer.lower() in shown and not re.search(rf"\b{rival}\b", shown)


def test_kb_examples_show_the_answer_in_a_window(tok):
    world = reader_world(tokenizer=tok)
    facts, rivals = bold_facts(world.pool)
    assert len(facts) > 500 and len(rivals) > 100
    ex = bold_examples(facts, rivals, world.pool, world.bm25, tok, 120, np.random.default_rng(5))
    assert len(ex) == 120
    assert abs(sum(e.answer is None for e in ex) / len(ex) - NONE_SHARE) < 0.12
    for e in ex:
        assert not eval_filter().too_close(e.question) and not is_probe(e.question)
        if e.answer is None:
            assert e.start == e.end == len(e.ids) - 1  # the <|a|> position
            continue
        lo, hi = next(w for w in windows(e.ids, tok) if w[0] <= e.start < w[1])
        assert e.end < hi and tok.decode(e.ids[e.start:e.end + 1]).strip() == e.answer
