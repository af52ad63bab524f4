"""How learners ask about a fact: the question phrasings reader training uses.

What it is: `question_for(fact, rng)`, a generator of questions about one KB fact (facts.py). A
question is composed from the vocabulary of phrasings.py, not picked from a short list: a frame
(a direct question, the key first, a gapped sentence, "A or B?", "is this correct?") filled
with one of many names for the relation ("past tense", "2nd form", "v2"), a cue that implies it
(a past time word for the past simple, have/has/had for the participle, "now" for the -ing
form), a subject, and noise (typos, case, stray punctuation). Thousands of phrasings per fact,
so a reader cannot learn a template by heart and has to learn the cue. Also `contracted`
("we've", "she'd") and `aside`, an off-topic question that borrows a word ("swim near me"),
both for the reader only (the bi-encoder's pseudo-queries use `question_for` alone). What it
leaves out: phrasings written by people; the eval sets hold those, and every generated question
passes the shared eval filter before training sees it (eval_filter.py,
tests/test_eval_filter.py).
"""

from __future__ import annotations

import re

import numpy as np

from minirag.forms import form_kind
from minirag.training.facts import Fact, first_alternative, split_cells
from minirag.training.phrasings import (
    ASIDE_LEADS,
    ASIDES,
    CLOZE,
    EITHER,
    FILL_INS,
    GAP,
    GENERIC,
    HAVE,
    KEY_FIRST,
    LEADS,
    MISTAKES,
    NAMES,
    NOW,
    OBJECTS,
    PAST_TIMES,
    SUBJECTS,
    TABLE,
)
from minirag.training.prose_facts import prose_question


def normalise_question(q: str) -> str:
    """Lowercase, one space between words, no trailing "?": "Past of GO ??" -> "past of go"."""
    return " ".join(q.lower().split()).rstrip(" ?")


# The faithfulness probes' phrasings (eval/reading.py): never a training question, whatever the
# verb, real or invented (`is_probe`; `reader.training_data` checks after `contracted`).
EVAL_PHRASINGS = {
    "Past simple": ["what's the simple past form of the verb {k}?", "{k} — which form for "
                    "finished past actions?", "last year we ___ ({k}) a lot", "tell me {k} in "
                    "the past"],
    "Past participle": ["what's the participle of the verb {k} (3rd column)?", "we've already "
                        "___ ({k})", "{k} + have: which form?", "the form of {k} after had"],
}
_PROBE = re.compile("|".join(
    re.escape(normalise_question(t)).replace(re.escape("{k}"), r"\S+")
    for ts in EVAL_PHRASINGS.values() for t in ts))


def is_probe(q: str) -> bool:
    """Whether `q` is a probe phrasing (normalised) with any word for its verb."""
    return _PROBE.fullmatch(normalise_question(q)) is not None


CONTRACTIONS = ((re.compile(r"\b(i|you|we|they) have\b", re.I), r"\1've"),
                (re.compile(r"\b(i|you|he|she|we|they) had\b", re.I), r"\1'd"))


def contracted(q: str, rng: np.random.Generator) -> str:
    """Half the time, "we have" -> "we've" and "she had" -> "she'd", as people type them."""
    if rng.random() < 0.5:
        return q
    for pattern, short in CONTRACTIONS:
        q = pattern.sub(short, q)
    return q


def aside(word: str, rng: np.random.Generator) -> str:
    """An off-topic question that mentions `word` ("{w} near me"), with a lead and noise."""
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    return noisy(pick(ASIDE_LEADS) + pick(ASIDES[pick(list(ASIDES))]).format(w=word), rng)


def question_for(f: Fact, rng: np.random.Generator) -> str:
    """A learner's question whose answer is `f.answer`, in a random phrasing with noise."""
    return noisy(compose(f, rng), rng)


def compose(f: Fact, rng: np.random.Generator) -> str:
    """The question before noise: a frame, a name for the relation, cues."""
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    if f.kind == "verb":
        q = _verb_question(f, rng, pick)
    elif f.kind == "arrow":
        q = _arrow_question(f, rng, pick)
    elif f.kind == "table":
        q = pick(TABLE).format(k=f.key, r=f.relation.lower())
    elif f.kind == "correction":
        q = pick(MISTAKES).format(x=f.key)
    elif f.kind == "gap":
        q = pick(GAP).format(k=_retold(f.key, rng))
    elif f.kind == "prose":
        q = prose_question(f, rng)
    else:
        q = pick(CLOZE).format(k=f.key)
    return " ".join(q.split())


def _verb_question(f: Fact, rng: np.random.Generator, pick) -> str:
    rel, cues = f.relation, _cues(pick)
    forms = [first_alternative(c).lower() for c in split_cells(f.raw)] if f.raw else []
    roll = rng.random()
    if len(forms) == 3 and roll < 0.15:  # "sang or sung after had"
        a, b = (forms[1], forms[2]) if rng.random() < 0.5 else (forms[2], forms[1])
        return pick(EITHER[rel]).format(a=a, b=b, k=f.key, **cues)
    if len(forms) == 3 and roll < 0.27:  # "can i say 'they had sang'"
        return pick(MISTAKES).format(x=_mistake(f.key, forms, rel, cues, rng))
    if roll < 0.6:  # "the choir has ___ (sing)"
        return pick(FILL_INS[rel]).format(k=f.key, **cues)
    return _named(f.key, NAMES[rel], pick)


def _arrow_question(f: Fact, rng: np.random.Generator, pick) -> str:
    kind = form_kind(f.key, f.answer, f.chunk.doc_id)
    if kind is None:
        return pick(GENERIC).format(k=f.key)
    if rng.random() < 0.5:
        return pick(FILL_INS[kind]).format(k=f.key, **_cues(pick))
    return _named(f.key, NAMES[kind], pick)


def _retold(sentence: str, rng: np.random.Generator) -> str:
    """A KB sentence as a learner types it into a gap exercise: often only the clause with the
    gap, often lowercase and without its full stop."""
    clauses = re.split(r"(?<=[,;]) ", sentence)
    if len(clauses) > 1 and rng.random() < 0.4:
        sentence = next(c for c in clauses if "___" in c).rstrip(",;")
    if rng.random() < 0.5:
        sentence = sentence.lower()
    return sentence.rstrip(".!") if rng.random() < 0.5 else sentence


def _named(key: str, names: list[str], pick) -> str:
    if pick([True, False]):
        return f"{pick(LEADS)}{pick(names)} of {key}"
    return pick(KEY_FIRST).format(k=key, n=pick(names))


def _cues(pick) -> dict[str, str]:
    subject = pick(SUBJECTS)
    third = subject if subject not in ("i", "you", "we", "they", "my parents", "the kids") \
        else pick(["he", "she", "tom", "my sister", "the teacher"])
    return {"s": subject, "s3": third, "o": pick(OBJECTS), "t": pick(PAST_TIMES),
            "h": pick(HAVE), "now": pick(NOW)}


def _mistake(key: str, forms: list[str], rel: str, cues: dict, rng: np.random.Generator) -> str:
    """A sentence with the wrong form where the fact's form belongs."""
    past, part = forms[1], forms[2]
    regular = key + ("d" if key.endswith("e") else "ed")
    if rel == "Past simple":
        wrong = [w for w in (regular, part) if w != past] or [regular]
        return f"{cues['s']} {wrong[int(rng.integers(len(wrong)))]} {cues['o']} {cues['t']}"
    wrong = [w for w in (past, regular) if w != part] or [regular]
    return f"{cues['s']} {cues['h']} {wrong[int(rng.integers(len(wrong)))]} {cues['o']}"


def noisy(q: str, rng: np.random.Generator) -> str:
    """A learner's typing: sometimes a swapped or dropped letter, random case, extra ?."""
    words = q.split()
    if rng.random() < 0.2 and words:
        i = int(rng.integers(len(words)))
        w = words[i]
        if len(w) > 3 and w.isalpha():
            j = int(rng.integers(1, len(w) - 1))
            swapped = w[:j - 1] + w[j] + w[j - 1] + w[j + 1:]
            words[i] = w[:j] + w[j + 1:] if rng.random() < 0.5 else swapped
    q = " ".join(words)
    if rng.random() < 0.2:
        q = q.capitalize()
    if rng.random() < 0.1:
        q = re.sub(r"'", "", q)  # "whats", "dont": apostrophes are optional when typing
    return q + ("?" * int(rng.integers(0, 3)) if not q.endswith("?") else "")
