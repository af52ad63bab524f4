"""pseudo_queries.py: the facts of a hand-built two-chunk KB, grouped by kind; each question is
about a fact its chunk states; the kinds follow KIND_SHARE; held-out facts are split by key
(every fact of a key on one side); the same seed gives the same questions."""

import re

import numpy as np

from minirag.chunk import Chunk, chunk_id
from minirag.training.pseudo_queries import KIND_SHARE, fact_queries, kb_facts, split_facts

TABLE = ("| Base form | Past simple | Past participle |\n|---|---|---|\n"
         "| drink | drank | drunk |\n| swim | swam | swum |\n")
PROSE = ("Add -ing: *work → working, swim → swimming*.\n"
         "- ~~I have went~~ → *I have gone*.\nWe use the past simple for finished actions.\n")
CHUNKS = [Chunk(chunk_id("v.md", 0), TABLE, "v.md", 0, {"section": "Verbs"}),
          Chunk(chunk_id("p.md", 0), PROSE, "p.md", 0, {"section": "Spelling"})]


def test_kb_facts_by_kind():
    facts = kb_facts(CHUNKS)
    assert set(facts) == set(KIND_SHARE)
    # the prose says "swim → swimming", but "swimming" is no form in the table: no mention fact
    assert [(f.key, f.answer) for f in facts["verb"]] == [
        ("drink", "drank"), ("drink", "drunk"), ("swim", "swam"), ("swim", "swum")]
    assert [(f.key, f.answer) for f in facts["correction"]] == [("I have went", "I have gone")]
    assert ("work", "working") in {(f.key, f.answer) for f in facts["arrow"]}
    assert facts["table"] == [] and facts["cloze"]
    assert all(f.chunk is CHUNKS[0] for f in facts["verb"])


def test_each_question_is_about_a_fact_of_its_chunk():
    facts = kb_facts(CHUNKS)
    pairs = fact_queries(facts, 300, np.random.default_rng(0))
    assert len(pairs) == 300 and all(isinstance(q, str) and q.strip() for q, _ in pairs)
    # the table chunk states only verb facts, so its share of the questions is the verb share
    # among the kinds this KB has (it has no "table" facts): 0.45 / 0.8
    on_table = np.mean([c is CHUNKS[0] for _, c in pairs])
    present = sum(s for k, s in KIND_SHARE.items() if facts[k])
    assert abs(on_table - KIND_SHARE["verb"] / present) < 0.1, on_table
    # and a question names its fact's key or answer (unless a typo hit that very word)
    all_facts = [f for fs in facts.values() for f in fs]
    names = {c.id: {w for f in all_facts if f.chunk is c
                    for w in re.findall(r"[a-z']+", (f.key + " " + f.answer).lower())}
             for c in CHUNKS}  # chunk id -> the words of its facts' keys and answers
    named = [bool(set(re.findall(r"[a-z']+", q.lower())) & names[c.id]) for q, c in pairs]
    assert np.mean(named) > 0.8


def test_same_seed_same_questions_and_edge_cases():
    facts = kb_facts(CHUNKS)
    a, b = (fact_queries(facts, 30, np.random.default_rng(7)) for _ in range(2))
    assert a == b
    assert fact_queries(facts, 0, np.random.default_rng(0)) == []
    assert fact_queries({k: [] for k in KIND_SHARE}, 5, np.random.default_rng(0)) == []


def test_held_out_facts_are_split_by_key():
    facts = kb_facts(CHUNKS)
    train, held = split_facts(facts, 0.5)
    for kind, fs in facts.items():
        assert len(train[kind]) + len(held[kind]) == len(fs)
        assert not {f.key for f in train[kind]} & {f.key for f in held[kind]}
    assert split_facts(facts, 0.5) == (train, held)
    none_held = split_facts(facts, 0.0)[1]
    assert all(fs == [] for fs in none_held.values())
