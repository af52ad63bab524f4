"""The shared eval filter (minirag.training.eval_filter): its three rules on hand-built
questions, then every generator of training text sampled 20,000 times with zero survivors
(no output too close to a dev or test question), and no eval question's 5-word window in src/.

Failures name question ids, never a question's text: the test split stays blind.
"""

from pathlib import Path

import numpy as np
import pytest

from minirag.chunk import load_kb
from minirag.files.artifacts import load_tokenizer
from minirag.files.kb import all_eval_questions
from minirag.training.eval_filter import EvalFilter, eval_filter, words
from minirag.training.pseudo_queries import fact_queries, kb_facts
from minirag.training.questions import question_for
from minirag.training.reader_data import draw_question
from minirag.training.reader_train import reader_world

SAMPLES = 20_000
ROOT = Path(__file__).resolve().parents[1]
CODE = [ROOT / "src", ROOT / "tests", ROOT / "benchmarks"]  # no eval phrase in any of it


def test_words_normalise_case_apostrophes_and_punctuation():
    assert words("What's the PAST of go??") == ["whats", "the", "past", "of", "go"]
    assert words("don\u2019t — 2 cats!") == ["dont", "2", "cats"]
    assert words(" ?! ") == []


def test_each_rule_on_hand_built_questions():
    gate = EvalFilter(["what is the plural of cactus", "what is the past of go"])
    assert gate.too_close("What is the PLURAL of cactus?")  # identical once normalised
    assert gate.too_close("tell me what is the plural of cactus pls")  # a shared 5-gram
    assert gate.too_close("what is past of go")  # no 5-gram, but Jaccard 5/6
    assert not gate.too_close("plural of cactus")  # Jaccard 3/6, no 5-gram
    assert not gate.too_close("tell me the past of come")  # Jaccard 3/9, no 5-gram
    assert not gate.too_close("")


def test_jaccard_threshold_is_inclusive_at_0_8():
    gate = EvalFilter(["a b c d"])  # four words, no 5-gram possible
    assert gate.max_jaccard({"a", "b", "c", "d", "e"}) == pytest.approx(0.8)
    assert gate.too_close("a b c d e")  # 4 / 5 = 0.8: too close
    assert not gate.too_close("a b c x y")  # 3 / 7
    assert not gate.too_close("a b c")  # 3 / 4 = 0.75: far enough


def test_the_filter_reads_both_splits():
    ids = {q["id"][:1] for q in all_eval_questions()}
    assert "T" in ids and ids & {"A", "B", "C", "D", "U"}
    assert len(eval_filter().exact) > 500


@pytest.fixture(scope="module")
def facts():
    return reader_world(tokenizer=load_tokenizer()).facts  # what reader training draws from


def test_raw_templates_do_come_close_so_the_filter_is_needed(facts):
    """Without the filter the composer does produce near copies of eval questions: the
    zero-survivor checks below could fail."""
    gate, rng = eval_filter(), np.random.default_rng(0)
    verbs = facts["verb"]
    close = sum(gate.too_close(question_for(verbs[int(rng.integers(len(verbs)))], rng))
                for _ in range(SAMPLES))
    assert close > 0


def test_bi_encoder_fact_questions_have_no_survivors():
    chunks = load_kb(tokenizer=load_tokenizer())
    queries = fact_queries(kb_facts(chunks), SAMPLES, np.random.default_rng(1))
    gate = eval_filter()
    assert len(queries) == SAMPLES
    assert sum(gate.too_close(q) for q, _ in queries) == 0


def test_reader_questions_have_no_survivors(facts):
    rng, gate, drawn = np.random.default_rng(2), eval_filter(), []
    while len(drawn) < SAMPLES:
        d = draw_question(facts, rng, frozenset())
        if d is not None:
            drawn.append(d[2])
    assert sum(gate.too_close(q) for q in drawn) == 0


def test_no_eval_question_has_a_5_word_window_in_code():
    grams = {}
    for q in all_eval_questions():
        w = words(q["question"])
        for i in range(len(w) - 4):
            grams.setdefault(" ".join(w[i:i + 5]), q["id"])
    found = []
    for path in sorted(p for d in CODE for p in d.rglob("*.py")):
        w = words(path.read_text(encoding="utf-8"))
        found += sorted({(path.relative_to(ROOT).as_posix(), grams[g])
                         for i in range(len(w) - 4) if (g := " ".join(w[i:i + 5])) in grams})
    assert found == []  # (file, question id): rewrite the example in your own words
