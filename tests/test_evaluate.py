"""Isolation tests for minirag.eval.harness's analysis helpers and eval.reading's scoring:
hand-built chunks, no index."""

from fakes import make_chunk, make_chunks

from minirag.chunk import Chunk
from minirag.eval.fusion import best_weight
from minirag.eval.harness import aggregate, lexical_gaps
from minirag.eval.reading import gold_chunk, rows, score
from minirag.eval.report import table
from minirag.files.artifacts import load_tokenizer
from minirag.reader import Reading


def section(i: int) -> Chunk:
    name = "abcdefghijk"[i]
    return Chunk(f"{i:012d}", f"the w{i + 1} rule", "t.md", 0, {"section": name})


def question(qid: str, text: str, sec: str = "c") -> dict:
    return {"id": qid, "question": text, "gold": [{"doc_id": "t.md", "section": sec}]}


def test_a_gap_is_a_question_with_only_common_words_in_common_with_its_gold_section():
    chunks = [section(i) for i in range(11)]  # 11 sections: a rare word is in exactly one
    qs = [question("hit", "the w3 rule"),  # w3 is rare and in section c
          question("common", "the rule please"),  # only words every section has
          question("elsewhere", "w5 stuff"),  # rare, but not in section c
          question("either", "w5 rule", "e"),  # rare and in its gold section e
          question("unknown", "w3", "zz")]  # a gold section the KB does not have
    assert lexical_gaps(qs, chunks) == {"common", "elsewhere", "unknown"}


def test_a_gold_list_is_alternatives_any_section_may_share_the_word():
    chunks = [section(i) for i in range(11)]
    q = {"id": "q", "question": "w7", "gold": [{"doc_id": "t.md", "section": "c"},
                                               {"doc_id": "t.md", "section": "g"}]}
    assert lexical_gaps([q], chunks) == set()


def test_a_printed_rate_is_rounded_once():
    # 34 of 57 is 0.59649...: rounded to 4 places first it would become 0.5965 and print 0.597
    q = {"type": "literal", "topic": "verb-conjugation"}
    hits = [1.0] * 34 + [0.0] * 23
    per_q = [(q, {**{f"recall@{k}": h for k in (1, 3, 5, 10)}, "mrr@10": h, "ndcg@10": h,
                  "ms": 1.0}) for h in hits]
    row = next(r for r in aggregate("bm25", per_q) if r["group"] == "all")
    assert table([row], ["recall@5"]).splitlines()[-1].strip() == "0.596"
    scored = [(q, {"em": h, "abstained": False, "cite_ok": h, "in_prompt": 1.0}) for h in hits]
    reader_row = next(r for r in rows("retrieved", scored, answerable=True) if r["group"] == "verb")
    assert table([reader_row], ["exact_match"]).splitlines()[-1].strip() == "0.596"


def test_best_weight_prefers_mrr_then_recall_then_the_smaller_weight():
    rows = [{"dense_weight": 0.5, "recall@5": 0.70, "mrr@10": 0.63},
            {"dense_weight": 1.0, "recall@5": 0.72, "mrr@10": 0.61},
            {"dense_weight": 2.0, "recall@5": 0.71, "mrr@10": 0.63}]
    assert best_weight(rows) == 2.0  # MRR ties at 0.63: the better recall wins
    rows[2]["recall@5"] = 0.70
    assert best_weight(rows) == 0.5  # a full tie: the smaller weight


def test_near_misses_get_an_abstention_row_of_their_own():
    near = {"type": "literal", "topic": "nouns", "near_miss": True}
    far = {"type": "literal", "topic": "other"}
    scored = [(near, {"em": 0.0, "abstained": a, "cite_ok": 0.0, "in_prompt": 0.0})
              for a in (True, True, False)] + [
             (far, {"em": 0.0, "abstained": True, "cite_ok": 0.0, "in_prompt": 0.0})]
    by_group = {r["group"]: r for r in rows("retrieved", scored, answerable=False)}
    assert by_group["unanswerable:near-miss"]["n"] == 3
    assert by_group["unanswerable:near-miss"]["abstention_rate"] == round(2 / 3, 6)
    assert by_group["unanswerable:all"]["abstention_rate"] == 0.75


def test_reading_accuracy_counts_only_the_questions_whose_answer_was_shown():
    q = {"type": "literal", "topic": "other"}
    seen = lambda em, abstained: {"em": em, "abstained": abstained, "cite_ok": em,  # noqa: E731
                                  "in_prompt": 1.0}
    scored = [(q, seen(1.0, False)), (q, seen(0.0, True)), (q, seen(0.0, False)),
              (q, {"em": 0.0, "abstained": True, "cite_ok": 0.0, "in_prompt": 0.0})]
    row = next(r for r in rows("oracle", scored, answerable=True) if r["group"] == "all")
    assert (row["answer_in_prompt"], row["exact_match"]) == (0.75, 0.25)
    assert row["reading_accuracy"] == round(1 / 3, 6)  # 1 right of the 3 shown
    assert row["false_abstention_rate"] == 0.5  # 2 of 4, one of them not shown
    assert row["false_abstention_in_prompt"] == round(1 / 3, 6)  # 1 of the 3 shown
    # never shown: nothing to read, so no rate (None, not 0); unanswerable rows have none
    unseen = [(q, {"em": 0.0, "abstained": True, "cite_ok": 0.0, "in_prompt": 0.0})]
    for r in rows("oracle", unseen, answerable=True) + rows("retrieved", unseen, False):
        assert r["reading_accuracy"] is None and r["false_abstention_in_prompt"] is None


class Answers:
    """A fake reader that always answers `text`, citing the prompt's first chunk."""

    def __init__(self, text: str):
        self.text, self.tokenizer = text, load_tokenizer()

    def read(self, prompt) -> Reading:
        return Reading(f"{self.text} [#1]", self.text, "[#1]", False, 1.0, 0.0)


def test_a_citation_is_right_when_its_chunk_holds_any_alternative_as_whole_words():
    learned = make_chunk("| learn | learned | learned |", "verbs.md")
    assert score(Answers("learned"), "past of learn", [learned], "learnt / learned")["cite_ok"]
    assert score(Answers("learned"), "past of learn", [learned], "learnt")["cite_ok"] == 0.0
    # a gold word inside a longer word is not held: "learn" is not in "| learned |"
    assert score(Answers("learned"), "base of learned", [make_chunk("| learned |")],
                 "learn")["cite_ok"] == 0.0


def test_the_gold_chunk_is_found_by_any_alternative():
    chunks = make_chunks(["| burn | burned | burned |", "| learn | learned | learned |"])
    q = {"gold": [{"doc_id": "doc.md", "section": "S"}], "answer": "learnt / learned"}
    assert gold_chunk(q, chunks) == chunks[1]
