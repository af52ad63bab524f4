"""The eval sets (data/eval/LABELLING.md): both splits well formed, the test split as large
and as varied as its guide promises, no test question a copy of a dev one, every gold section
real and holding the answer.

The test split is blind: these checks report question ids and counts, never a question's
text, so that a failing check does not turn a test question into a read one.
"""

import re
from collections import Counter

import pytest

from minirag.files.kb import DEFAULT_KB, eval_set, load_questions, read_kb

DOCS = {d.doc_id: d for d in read_kb(DEFAULT_KB)}
SETS = {(split, name): load_questions(eval_set(split, name))
        for split in ("dev", "test") for name in ("retrieval", "unanswerable")}
TYPES = {"literal", "paraphrase", "fill-in", "comparison", "error-correction", "definition",
         "example"}
TOPICS = {"verb-conjugation", "tenses", "conditionals", "modals", "passive", "reported-speech",
          "questions", "word-order", "adjectives", "adverbs", "nouns", "articles", "determiners",
          "pronouns", "prepositions", "conjunctions", "relative-clauses", "gerunds-infinitives",
          "phrasal-verbs", "confused-words", "punctuation", "spelling", "pronunciation",
          "word-formation", "causative"}  # LABELLING.md, "Topics"


def flat(text: str) -> str:
    """Lowercase, markdown emphasis dropped, one space between words (LABELLING: answers)."""
    return " ".join(text.replace("*", "").lower().split())


def answer_problems(q: dict) -> list[str]:
    """What is wrong with an answerable question's gold and answer ([] when nothing)."""
    if not q["gold"] or not q["answer"]:
        return ["no gold or no answer"]
    texts = []
    for g in q["gold"]:
        doc = DOCS.get(g["doc_id"])
        if doc is None or doc.section(g["section"]) is None:
            return [f"gold {g['doc_id']} § {g['section']!r} does not exist"]
        texts.append(flat(doc.section_text(g["section"])))
    return [f"alternative {alt!r} in no gold section" for alt in q["answer"].split(" / ")
            if not any(flat(alt) in t for t in texts)]


def test_every_id_is_unique_across_both_splits():
    ids = [q["id"] for qs in SETS.values() for q in qs]
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    assert all(q["id"].startswith("T") for name in ("retrieval", "unanswerable")
               for q in SETS["test", name])


def test_the_test_split_has_the_promised_size_and_spread():
    test = SETS["test", "retrieval"]
    kinds = Counter(q["type"] for q in test)
    topics = Counter(q["topic"] for q in test)
    assert len(test) >= 240 and len(SETS["test", "unanswerable"]) >= 50
    assert topics["verb-conjugation"] >= 60
    assert kinds["paraphrase"] >= 40 and kinds["fill-in"] >= 30
    assert kinds["error-correction"] >= 20
    assert set(kinds) == TYPES and set(topics) == TOPICS
    gold_docs = Counter(d for q in test for d in {g["doc_id"] for g in q["gold"]})
    assert sorted(d for d in DOCS if gold_docs[d] < 2) == []


def test_dev_split_keeps_its_size():
    assert len(SETS["dev", "retrieval"]) >= 200 and len(SETS["dev", "unanswerable"]) >= 40


@pytest.mark.parametrize("split", ["dev", "test"])
def test_types_and_topics_come_from_the_guide(split):
    qs = SETS[split, "retrieval"]
    assert sorted(q["id"] for q in qs if q["type"] not in TYPES or q["topic"] not in TOPICS) == []


def test_no_test_question_is_a_dev_question():
    norm = lambda q: " ".join(re.findall(r"[a-z0-9]+", q["question"].lower()))  # noqa: E731
    dev = {norm(q) for name in ("retrieval", "unanswerable") for q in SETS["dev", name]}
    assert sorted(q["id"] for name in ("retrieval", "unanswerable")
                  for q in SETS["test", name] if norm(q) in dev) == []


@pytest.mark.parametrize("q", SETS["dev", "retrieval"], ids=lambda q: q["id"])
def test_dev_gold_exists_and_holds_the_answer(q):
    assert answer_problems(q) == []


def test_test_gold_exists_and_holds_the_answer():
    bad = {q["id"]: p for q in SETS["test", "retrieval"] if (p := answer_problems(q))}
    assert sorted(bad) == []  # ids only: the test split is read as aggregates


@pytest.mark.parametrize("split", ["dev", "test"])
def test_unanswerable_questions_have_no_gold_and_no_answer(split):
    qs = SETS[split, "unanswerable"]
    assert sorted(q["id"] for q in qs if q["gold"] != [] or q["answer"] is not None) == []


@pytest.mark.parametrize("split", ["dev", "test"])
def test_no_eval_question_occurs_verbatim_in_the_kb(split):
    kb = flat(" ".join(d.text for d in DOCS.values()))
    leaked = [q["id"] for name in ("retrieval", "unanswerable")
              for q in SETS[split, name] if flat(q["question"]) in kb]
    assert leaked == []


def test_the_audited_dev_labels_hold():
    dev = {q["id"]: q for q in SETS["dev", "retrieval"]}
    assert dev["A-035"]["answer"] == "will have finished"
    # A-001 and B-050 ask the same thing in other words: the same gold sections
    assert sorted(map(str, dev["A-001"]["gold"])) == sorted(map(str, dev["B-050"]["gold"]))
    assert all(len(dev[i]["gold"]) >= 2 for i in ("A-006", "A-008", "A-017", "A-026", "A-029",
                                                 "A-048", "A-050", "B-048", "B-052", "B-057",
                                                 "C-027", "C-029"))
