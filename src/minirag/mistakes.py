"""The KB's corrections of its struck-out mistakes, and the one a question asks for.

What it is: the KB strikes a learner's mistake through and shows its correction, after an arrow
("~~I have went.~~ → I have gone.") or before a "(not ...)" ("I've known her for years. (not
~~I've been knowing her~~)"). `corrections` reads those pairs out of a prompt's window. For a
question that asks whether its words are right (VERDICT_WORDS, VERDICT_CUES, VERDICT_PHRASES,
"can I say", or two options):
`correcting_cell` finds the cell that corrects a mistake the question quotes, which the reader
answers whole, before its model; `analogous_fix`, for the same mistake made in the learner's
own words ("we go always to the park" beside "~~I go always to the gym~~ → I always go to the
gym"), what the correction changes ("always go"), which the reader answers only where its model
would abstain (reader.py). Both answer with the window's own words, so they follow an edited KB
as the span reader does.
What it leaves out: a mistake whose changed words the learner did not keep ("bringed" beside
"~~buyed~~ → bought"): the span reader's to read, or to abstain on; corrections the KB gives in
prose without striking the mistake out.
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from minirag.reader_inputs import WORD, holds_run, offers_choice

# Words by which a question asks whether its own words are right: the answer to "is 'more
# taller' correct" is "taller", the question's words minus the wrong one
VERDICT_WORDS = frozenset({"correct", "right", "wrong", "ok", "okay", "mistake", "error", "fix"})
# and words that ask it in other ways, but are never an answer: a teacher's marks ("my teacher
# circled it"), a doubt ("sounds odd"), the spelling or grammar asked for, a typo of "correct"
VERDICT_CUES = frozenset(
    "grammatical ungrammatical grammar grammer spelling spell spelt spelled properly proper "
    "instead circled underlined crossed odd weird corect correctly incorrect wrongly mistakes "
    "errors typo".split())
# or phrases: "is putted even a word", "a real word", "what should it be", "holded??"
VERDICT_PHRASES = re.compile(r"\b(?:real|proper|english) word\b|\bis (?!there\b)[\w']+(?: even|"
                             r" really| actually)? an? word\b|\bshould (?:it|[\w']+) be\b|\?\?")
# "~~wrong~~ → right" (to the line's end or the next struck text) and "right (not ~~wrong~~"
AFTER_ARROW = re.compile(r"~~([^~\n]+)~~[ \t]*→[ \t]*([^~\n]+)")
BEFORE_NOT = re.compile(r"^([^\n]*?)[ \t]*\(not ~~([^~\n]+)~~")
# a correction read before "(not ~~X~~)" must be spelled at least this much like X
# (difflib's ratio, 0..1): a window may have cut the line it stood on
LIKENESS = 0.5
LIST_MARKS = frozenset(",;|→")  # a correction holding one of them is several cells


def corrections(window: str) -> list[tuple[str, str, bool]]:
    """The (wrong, right, by_arrow) triples of the struck-out mistakes in one window of a
    prompt. Before "(not ~~X~~)", the correction runs back to a colon or the line's start, or
    is the line before when the mark starts its line.
    Example: corrections("~~I have went.~~ → I have gone.") ->
        [("I have went.", "I have gone.", True)]"""
    found = [(wrong, right, True) for wrong, right in AFTER_ARROW.findall(window)]
    lines = window.splitlines()
    for n, line in enumerate(lines):
        for before, wrong in BEFORE_NOT.findall(line):
            right = before if before.strip() else (lines[n - 1] if n else "")
            found.append((wrong, right.rsplit(":", 1)[-1], False))
    return found


def trusted_pairs(windows: list[str]):
    """(window index, wrong, right, by_arrow) of the pairs in `windows` a reading may use: every
    one after an arrow, and one before "(not ...)" whose correction is a single cell ("paid,
    laid (not ~~payed~~, ~~layed~~)" pairs several corrections with several mistakes)."""
    for n, window in enumerate(windows):
        for wrong, right, by_arrow in corrections(window):
            if by_arrow or LIST_MARKS.isdisjoint(right):
                yield n, wrong, right, by_arrow


def correction_core(cell: str) -> str:
    """A cell's words that correct: no bullet, no lead-in up to a colon, no remark in brackets,
    no full stop.
    Example: correction_core("- Note: opened (stress first).") -> "opened"
    """
    return cell.split("(")[0].rsplit(":", 1)[-1].strip(" -*\n").removesuffix(".").strip()


def bare_words(text: str) -> list[str]:
    """Lowercase words with apostrophes dropped, as learners type them: "I didn't" -> i, didnt."""
    return WORD.findall(text.lower().replace("'", ""))


def asks_verdict(question: str) -> bool:
    """Does the question ask whether words are right ("... correct?", "can i say ...", "my
    teacher circled it", "is holded a word?"), or which of two is?"""
    return bool(set(bare_words(question)) & (VERDICT_WORDS | VERDICT_CUES | {"say"})) \
        or bool(VERDICT_PHRASES.search(question.lower())) or offers_choice(question)


def correcting_cell(cells: list[str], windows: list[str], question: str
                    ) -> tuple[int, str] | None:
    """(index of the cell, the mistake it corrects) for a question that asks for a verdict
    (`asks_verdict`) and quotes, word for word (apostrophes aside: "she dont swim" quotes
    "~~She don't swim~~"), a mistake one of `windows` strikes out; or None. The cell's
    `correction_core` must be part of that mistake's correction and hold a word the mistake
    lacks. Of several, the one spelled most like the mistake ("paid", not "laid", for
    "~~payed~~"). A correction before "(not ~~X~~)" is trusted less than one after an arrow: it
    must be one cell (`trusted_pairs`) spelled at least LIKENESS like X.
    Example: correcting_cell(["I have gone."], ["~~I have went.~~ → I have gone."],
        "i have went home, correct?") -> (0, "I have went.")"""
    if not asks_verdict(question):
        return None
    asked, cores = bare_words(question), [correction_core(c) for c in cells]
    words = [(WORD.findall(core.lower()), " ".join(bare_words(core))) for core in cores]
    best, most = None, 0.0
    for _, wrong, right, by_arrow in trusted_pairs(windows):
        quoted = bare_words(wrong)
        if not quoted or not holds_run(asked, quoted):
            continue
        fixed, lacked = WORD.findall(right.lower()), set(WORD.findall(wrong.lower()))
        for n, (said, bare) in enumerate(words):
            like = SequenceMatcher(None, " ".join(quoted), bare).ratio()
            if said and holds_run(fixed, said) and set(said) - lacked \
                    and (by_arrow or like >= LIKENESS) and (best is None or like > most):
                best, most = (n, wrong), like
    return best


def changed_span(a: list[str], b: list[str]) -> tuple[int, int, int, int]:
    """(i1, i2, j1, j2): the words a[i1:i2] that became b[j1:j2], the words before and after
    them the same on both sides. Example: changed_span(["i", "go", "always", "home"],
    ["i", "always", "go", "home"]) -> (1, 3, 1, 3)"""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, len(a) - tail, head, len(b) - tail


def analogous_fix(windows: list[str], question: str) -> tuple[int, str, str] | None:
    """(window index, answer, mistake) for a question that asks for a verdict and makes, in
    other words, a mistake a window strikes out: "she can't cook, can't she?" beside "~~She
    can't drive, can't she?~~ → She can't drive, can she?". The mistake's changed words must
    occur in the question: two or more alone, one with a neighbour ("can't she", not "can't",
    which is in most questions of the kind), and where the correction only adds or only deletes
    words, the words around the change ("is nurse" for "~~She is nurse~~ → She is a nurse").
    The answer is what the correction puts there, widened alike ("can she", "is a nurse"), as
    the window writes it: every word of it the correction does not change is the learner's.
    A correction before "(not ~~X~~)" must share a word with X before the change: one that
    starts with it was most likely cut by the window (" to leave early (not ~~I could leave
    early~~)"). Pairs are trusted as `trusted_pairs` says; of several, the longest match, the
    first on a tie.
    Example: analogous_fix(["~~I go always to the gym.~~ → I always go to the gym."],
        "we go always to the park, fix it") -> (0, "always go", "I go always to the gym.")"""
    if not asks_verdict(question):
        return None
    asked, best, longest = bare_words(question), None, 0
    for n, wrong, right, by_arrow in trusted_pairs(windows):
        said = list(WORD.finditer(right.lower()))  # the correction's words, where they stand
        a, b = bare_words(wrong), [w.group().replace("'", "") for w in said]
        i1, i2, j1, j2 = changed_span(a, b)
        if not b or (i1 == i2 and j1 == j2):  # nothing corrected
            continue
        if not by_arrow and (i1 == 0 or j1 == 0):  # a "(not" correction cut by the window
            continue
        # words added on the left and right: both to an insertion or a deletion, none to a
        # change of two words or more, one neighbour (left first) to a one-word change
        widen = [(1, 1)] if i1 == i2 or j1 == j2 else [(0, 0)] if i2 - i1 >= 2 \
            else [(1, 0), (0, 1)]
        for left, right_ in widen:
            key = a[i1 - left:i2 + right_] if i1 >= left else []
            lo, hi = j1 - left, j2 + right_
            if len(key) < 2 or len(key) <= longest or not holds_run(asked, key) \
                    or not 0 <= lo < hi <= len(b):
                continue
            best, longest = (n, right[said[lo].start():said[hi - 1].end()], wrong), len(key)
    return best
