"""The choice skill's second source: the KB's bold forms, one shown and a rival not.

What it is: the KB sets in bold the form a line is about ("We **were** late for the train"),
and a section sets its alternatives in bold on other lines ("I **was** tired"). A learner's
"was or were?" is answered by reading which of the two the prompt shows, in the words around
it. So each bold form A (1-3 words) of a prose line makes a choice question against a rival B:
another bold form of the same section, of as many words, that its line does not hold. The
question offers the two bare forms, or both inside the same words of the line ("we were late
or we was late"); the answer is A (or A in its words). An example is kept only if the rival,
as offered, is nowhere in the windows the reader is shown, so "the one the text shows" is
always the right reading. NONE_SHARE of the examples are "none" twins (A's line left out, the
rival not shown either: no answer), as for the corrections. Every question passes the shared
eval filter and is never a faithfulness probe's phrasing.
What it leaves out: choices whose two options both appear (a line that contrasts two forms,
which only its meaning decides), and table lines (the reader's table facts ask those).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

import numpy as np

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk
from minirag.prompt import units
from minirag.reader_inputs import windows
from minirag.training.choice_data import CHOICE_FRAMES, NONE_SHARE, WHOLE_SHARE
from minirag.training.eval_filter import eval_filter
from minirag.training.facts import Fact
from minirag.training.questions import contracted, is_probe, noisy
from minirag.training.reader_data import Example, make_example

_BOLD = re.compile(r"\*\*([A-Za-z][A-Za-z' ]{0,30}?)\*\*")  # a bold form of words only
_W = r"[A-Za-z][A-Za-z']*"  # a plain word
MAX_WORDS = 3  # longest bold form asked about
MAX_AROUND = 3  # most words of the line kept on each side of the form in a whole option

Rivals = dict[tuple[str, str], list[str]]  # (doc_id, section) -> its bold forms, lowercased


def bold_facts(chunks: list[Chunk]) -> tuple[list[Fact], Rivals]:
    """(facts, rivals): a fact per bold form of 1-MAX_WORDS words in a prose line (key and
    answer = the form, line = the unit that holds it), and every section's bold forms, table
    lines included, as the rivals its questions may offer."""
    facts: list[Fact] = []
    rivals: dict[tuple[str, str], set[str]] = defaultdict(set)
    for chunk in chunks:
        for raw in chunk.text.splitlines():
            forms = [f for f in (b.strip() for b in _BOLD.findall(raw))
                     if f and len(f.split()) <= MAX_WORDS]
            sentences = units(raw) if forms else []  # the line as prompt windows show it
            for form in forms:
                rivals[(chunk.doc_id, chunk.metadata["section"])].add(form.lower())
                line = next((u for u in sentences if _find(u, form)), None)
                if line is not None and not line.startswith("|"):
                    facts.append(Fact("bold", form, "bold", form, line, chunk))
    return facts, {key: sorted(forms) for key, forms in rivals.items()}


def _find(text: str, phrase: str) -> re.Match | None:
    """`phrase` in `text` as whole words, ignoring case."""
    return re.search(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", text, re.IGNORECASE)


def bold_question(f: Fact, rivals: Rivals, rng: np.random.Generator
                  ) -> tuple[str, str, str] | None:
    """(question, answer, the rival as offered) for a bold fact, or None when its section has
    no rival of as many words that the line does not hold. A whole option keeps up to MAX_AROUND
    words on either side that run into the form by spaces alone, so it is a phrase of the line.
    Example: "We were late for the train." (bold "were", rival "was") -> ("was or were?",
    "were", "was") or ("we were late or we was late", "We were late", "We was late")."""
    form = f.answer
    cands = [r for r in rivals.get((f.chunk.doc_id, f.chunk.metadata["section"]), [])
             if r != form.lower() and len(r.split()) == len(form.split())
             and not _find(f.line, r) and not _find(r, form) and not _find(form, r)]
    at = _find(f.line, form)
    if not cands or at is None:
        return None
    rival = cands[int(rng.integers(len(cands)))]
    n_before, n_after = (int(n) for n in rng.integers(0, MAX_AROUND + 1, 2))
    before = _words_before(f.line[:at.start()], n_before)
    after = _words_after(f.line[at.end():], n_after)
    answer = form
    if (before or after) and rng.random() < WHOLE_SHARE:  # both options in the line's words
        answer, rival = (" ".join(before + [x] + after) for x in (form, rival))
    first, second = (answer, rival) if rng.random() < 0.5 else (rival, answer)
    frame = CHOICE_FRAMES[int(rng.integers(len(CHOICE_FRAMES)))]
    question = frame.format(a=first.lower(), b=second.lower())
    return contracted(noisy(question, rng), rng), answer, rival


def _words_before(text: str, n: int) -> list[str]:
    """The last n words or fewer of `text` that run, by spaces alone, up to its end:
    ("- So we ", 3) -> ["So", "we"] (the "-" is no word)."""
    return re.search(rf"(?<![\w'])(?:{_W}\s+){{0,{n}}}$", text).group(0).split()


def _words_after(text: str, n: int) -> list[str]:
    """The first n words or fewer that follow the start of `text` by spaces alone:
    (" home, so we ate.", 3) -> ["home"] (the comma ends the run)."""
    return re.match(rf"(?:\s+{_W}(?![\w'])){{0,{n}}}", text).group(0).split()


def bold_examples(facts: list[Fact], rivals: Rivals, pool: list[Chunk], bm25: BM25Index,
                  tokenizer, n: int, rng: np.random.Generator) -> list[Example]:
    """`n` bold-choice examples laid out by reader_data.make_example (the line's chunk among
    BM25 distractors), NONE_SHARE of them "none" twins; the rival is never in a shown window."""
    examples: list[Example] = []
    for _ in range(100 * n):  # a bound on the draws, far above what the KB's facts need
        if len(examples) == n:
            break
        f = facts[int(rng.integers(len(facts)))]
        asked = bold_question(f, rivals, rng)
        if asked is None or eval_filter().too_close(asked[0]) or is_probe(asked[0]):
            continue
        question, answer, rival = asked
        show = rng.random() >= NONE_SHARE
        ex = make_example(replace(f, answer=answer), question, pool, bm25, tokenizer, rng,
                          "choice" if show else "none", show=show)
        shown = " ".join(tokenizer.decode(ex.ids[lo:hi]) for lo, hi in windows(ex.ids, tokenizer))
        if (ex.answer is not None or not show) and not _find(shown, rival):
            examples.append(ex)
    if len(examples) < n:
        raise ValueError(f"the bold facts gave {len(examples)} clean choices in {100 * n} "
                         f"draws, not {n} (see bold_question)")
    return examples
