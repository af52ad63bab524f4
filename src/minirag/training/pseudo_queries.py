"""Pseudo-queries for the bi-encoder: questions asked about the KB's own facts.

What it is: doc2query (Nogueira et al., "Document Expansion by Query Prediction", 2019) with
templates instead of a language model. Each fact of the KB (facts.py: a verb-table cell, a
table cell, an "a → b" arrow, a "~~wrong~~ → right" correction, a gapped sentence) is phrased
as a learner's question by the reader's generator (`questions.question_for`), and the chunk
that states the fact is its positive passage. ICT pairs teach that a sentence finds its chunk;
these teach that "past of sing" finds the row "| sing | sang | sung |".
Every question passes the shared eval filter (eval_filter.py): one too close to a dev or test
question is drawn again. What it leaves out: questions written by people or a model.
"""

from __future__ import annotations

import numpy as np

from minirag.chunk import Chunk
from minirag.embed import stable_hash
from minirag.training.eval_filter import eval_filter
from minirag.training.facts import Fact, all_facts
from minirag.training.questions import question_for

# share of each kind of fact among the pseudo-queries; "verb" includes prose mentions. The
# reader's "gap" facts are left out (a gapped KB sentence is the passage's own text)
KIND_SHARE = {"verb": 0.45, "table": 0.2, "arrow": 0.15, "correction": 0.1, "cloze": 0.1}


def kb_facts(chunks: list[Chunk]) -> dict[str, list[Fact]]:
    """Every fact of the chunks (facts.all_facts), by the kinds of KIND_SHARE: prose
    mentions of a verb's forms count as verb facts."""
    facts = all_facts(chunks)
    return {k: facts[k] + (facts["mention"] if k == "verb" else []) for k in KIND_SHARE}


def split_facts(facts: dict[str, list[Fact]], holdout: float
                ) -> tuple[dict[str, list[Fact]], dict[str, list[Fact]]]:
    """(training facts, held-out facts): a fact is held out by a hash of its key, so every
    fact about a held-out verb (or noun, or wrong sentence) is, whatever the config."""
    def held(f: Fact) -> bool:
        return stable_hash(f.key.lower()) % 10_000 < holdout * 10_000
    return ({k: [f for f in fs if not held(f)] for k, fs in facts.items()},
            {k: [f for f in fs if held(f)] for k, fs in facts.items()})


def fact_queries(facts: dict[str, list[Fact]], n: int, rng: np.random.Generator
                 ) -> list[tuple[str, Chunk]]:
    """`n` (question, chunk that states its answer) pairs: a kind drawn by KIND_SHARE, a fact
    of that kind, one phrasing of it. Example: a verb fact (drink, Past simple, drank) ->
    ("the past tense of sing?", the chunk of the row "| sing | sang | sung |")."""
    return [(q, f.chunk) for q, f in fact_questions(facts, n, rng)]


def fact_questions(facts: dict[str, list[Fact]], n: int, rng: np.random.Generator
                   ) -> list[tuple[str, Fact]]:
    """`n` (question, the fact it asks about) pairs, drawn as `fact_queries` says."""
    kinds = [k for k in KIND_SHARE if facts.get(k)]
    if not kinds or n < 1:
        return []
    share = np.array([KIND_SHARE[k] for k in kinds])  # [kinds]
    gate, out = eval_filter(), []
    for _ in range(20 * n):  # a bound, not a budget: a draw is too close a few times in 1,000
        fs = facts[kinds[int(rng.choice(len(kinds), p=share / share.sum()))]]
        f = fs[int(rng.integers(len(fs)))]
        q = question_for(f, rng)
        if not gate.too_close(q):
            out.append((q, f))
            if len(out) == n:
                return out
    raise ValueError(f"only {len(out)} of {n} questions passed the eval filter")
