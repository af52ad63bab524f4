"""Isolation tests for minirag.evaluate's analysis helpers: hand-built chunks, no index."""

from minirag.chunk import Chunk
from minirag.evaluate import lexical_gaps


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
