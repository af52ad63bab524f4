"""A new skill for a LoRA adapter: "A or B?" questions, built from the KB's correction lines.

What it is: the KB strikes through a wrong form and gives the right one, after it ("~~I have
went~~ → I have gone") or before it ("*I always walk*, not ~~Always I walk~~"). The shipped
reader is taught to read the first kind when asked "is 'I have went' correct?" (facts.py,
questions.MISTAKES), but never when the learner offers both forms and asks which one is right,
so it often abstains with the line in front of it. Here each correction (of either kind:
`negated_corrections` reads the second) becomes a choice question: only the words where the
two sides differ ("went or gone?", answer "gone"), or both whole sides (answer the whole right
side), in either order, in frames of our own, with typos and contractions. A share of the
examples ("none" twins) is asked beside chunks that do not hold the line: the target is then
"no answer", so the skill does not teach the reader to guess. Every question passes the
shared eval filter and is never a faithfulness probe's phrasing. Why the answer is the
differing words, not always the whole right side: a reader that answers "I have gone" to
"went or gone?" fits fewer of its 8 answer tokens to longer lines, and measured on dev it
learned the skill less (EXPERIMENTS.md).
What it leaves out: choices the KB states in prose only; bold_choices.py reads the forms that
such prose sets in bold.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk
from minirag.prompt import units
from minirag.training.eval_filter import eval_filter
from minirag.training.facts import Fact
from minirag.training.questions import contracted, is_probe, noisy
from minirag.training.reader_data import Example, make_example

CHOICE_FRAMES = ["{a} or {b}?", "is it {a} or {b}", "{a} or {b} - which is right",
                 "which is correct: {a} or {b}", "should i say {a} or {b}", "{a} vs {b}?",
                 "do we say {a} or {b}", "{a} / {b} ??", "right one: {a} or {b}",
                 "{a} or {b} in english", "which do i use, {a} or {b}", "{a} or is it {b}"]
WHOLE_SHARE = 0.3  # of the questions, those that offer both whole sides, not the differing words
NONE_SHARE = 0.25  # of the examples, "none" twins: the line is not in the prompt
MAX_WORDS = 4  # longest differing part offered as a choice
# the KB's other way to correct: "*a big old house* (not ~~a big, old house~~)"
_NEGATED = re.compile(r"\*([^*~]{2,60})\*\s*,?\s*\(?not ~~([^~]{2,60})~~")


def differing_words(wrong: str, right: str) -> tuple[str, str]:
    """The words where two sides of a correction differ, common words at both ends removed:
    ("I have went", "I have gone") -> ("went", "gone"); ("few", "a few") -> ("", "a")."""
    w, r = wrong.split(), right.split()
    head = 0
    while head < min(len(w), len(r)) and w[head].lower() == r[head].lower():
        head += 1
    tail = 0
    while tail < min(len(w), len(r)) - head and w[-1 - tail].lower() == r[-1 - tail].lower():
        tail += 1
    strip = " .,?!'\""
    return (" ".join(w[head:len(w) - tail]).strip(strip),
            " ".join(r[head:len(r) - tail]).strip(strip))


def choice_question(f: Fact, rng: np.random.Generator) -> tuple[str, str] | None:
    """(question, answer) for a correction fact, or None when its sides make no clean choice
    (a side that only adds or drops words, or a differing part longer than MAX_WORDS)."""
    if not _clean_choice(f):
        return None
    a, b = differing_words(f.key, f.answer)
    if rng.random() < WHOLE_SHARE:
        a, b = f.key, f.answer
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    frame = CHOICE_FRAMES[int(rng.integers(len(CHOICE_FRAMES)))]
    return contracted(noisy(frame.format(a=first.lower(), b=second.lower()), rng), rng), b


def _clean_choice(f: Fact) -> bool:
    a, b = differing_words(f.key, f.answer)
    return bool(a) and bool(b) and len(b.split()) <= MAX_WORDS and a.lower() != b.lower()


def choice_examples(corrections: list[Fact], pool: list[Chunk], bm25: BM25Index, tokenizer,
                    n: int, rng: np.random.Generator) -> list[Example]:
    """`n` choice examples laid out by reader_data.make_example (the line's chunk among BM25
    distractors), NONE_SHARE of them "none" twins (the line's chunk left out)."""
    if not any(_clean_choice(f) for f in corrections):  # else the loop below never ends
        raise ValueError("no correction line makes a clean choice (see choice_question)")
    examples: list[Example] = []
    while len(examples) < n:
        f = corrections[int(rng.integers(len(corrections)))]
        asked = choice_question(f, rng)
        if asked is None or eval_filter().too_close(asked[0]) or is_probe(asked[0]):
            continue
        show = rng.random() >= NONE_SHARE
        ex = make_example(replace(f, answer=asked[1]), asked[0], pool, bm25, tokenizer, rng,
                          "choice" if show else "none", show=show)
        if ex.answer is not None or not show:  # a line cut out of its window: draw again
            examples.append(ex)
    return examples


def negated_corrections(chunks: list[Chunk]) -> list[Fact]:
    """Correction facts from the lines that give the right form first and strike the wrong
    one after it ("*I always walk*, not ~~Always I walk~~"), which facts.py's correction kind
    (wrong → right) does not read: key = the wrong form, answer = the right one."""
    facts = []
    for chunk in chunks:
        for line in chunk.text.replace("**", "").splitlines():  # units() drops the *s
            for right, wrong in _NEGATED.findall(line):
                unit = next((u for u in units(line) if f"~~{wrong}~~" in u), line)
                facts.append(Fact("correction", wrong.strip(" .,"), "correction",
                                  right.strip(" .,"), unit, chunk))
    return facts


def split_facts(facts: list[Fact], held_out: float, seed: int = 0
                ) -> tuple[list[Fact], list[Fact]]:
    """(train, held-out) facts, split by fact so held-out examples ask lines never trained on."""
    order = np.random.default_rng(seed).permutation(len(facts))
    cut = len(facts) - int(round(held_out * len(facts)))
    return [facts[i] for i in sorted(order[:cut])], [facts[i] for i in sorted(order[cut:])]

