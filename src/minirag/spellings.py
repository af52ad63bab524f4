"""A misspelt word read as a window spells it: "is 'swiming' right?" beside "swim → swimming".

What it is: `respelt(windows, question)`: to a question that asks a verdict, a word of the
question that no window writes, and that a window word misspells (`misspells`: the same stem
and the same ending spelt otherwise, "enjoies" / "enjoys", "planed" / "planned"; or one edit
apart inside the word, "hisself" / "himself"; never two forms of one word, "place" /
"places", nor an apostrophe a texting learner drops, "didnt"), is corrected by that window
word, the only one all such pairs name. A table's first cell and an arrow's first word are
keys the KB looks forms up by, never a correction ("child" is no answer to "childs"). The
reader uses it where its model abstains (reader.py).
What it leaves out: a wrong word that is a word ("there" for "their": it may be what the
learner meant), a misspelling two edits away, and a wrong form whose right one shares neither
("childs" and "children": the table row's plural is the row lookup's).
`unregular(windows, question)`: a word given a regular ending that a window's table row
gives another form ("childs": `| child | children |`; "teached": `| teach | taught | taught |`)
is answered with the row's form.
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.forms import stem
from minirag.mistakes import asks_verdict
from minirag.prompt import STOPWORDS
from minirag.reader_inputs import WORD
from minirag.tables import table_cells, whole_row
from minirag.verb_groups import (
    ASKS_PARTICIPLE,
    TOKEN,
    auxiliary_at,
    is_key,
    only_one,
    unstruck,
)

# a contraction: a learner who types "didnt" drops the apostrophe by habit, it is not the mistake
CONTRACTION = re.compile(r"\w'(?:t|ve|re|ll|d|m)$")
# a form of be or get before a verb: a passive, which wants the participle ("got beated"); not
# "is" or "are", which also ask a verdict ("is throwed correct?")
PASSIVE = re.compile(r"was|were|be|been|being|get|gets|got|gotten|getting")
MIN_LETTERS = 4  # a shorter word is too often another word one letter away
MIN_EDITED = 5  # one edit apart: both words this long at least
ENDINGS = (("ies", "s"), ("es", "s"), ("s", "s"), ("ed", "ed"), ("ing", "ing"), ("est", "est"),
           ("er", "er"))


def ending(word: str) -> str | None:
    """The inflection a word ends in: "s", "ed", "ing", "est", "er", or None ("-ss" is none).
    Example: ending("enjoies") -> "s"; ending("glass") -> None"""
    w = word.lower()
    return None if w.endswith("ss") else next((e for s, e in ENDINGS if w.endswith(s)), None)


def one_edit(a: str, b: str) -> bool:
    """Are `a` and `b` one insertion, deletion, substitution or swap of neighbours apart?
    Example: one_edit("wagon", "waggon") -> True; one_edit("hisself", "himself") -> True"""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return a[i + 1:] == b[i + 1:] or a[i:] == b[i + 1:] or a[i + 1:] == b[i:] or \
        (len(a) == len(b) and a[i:i + 2] == b[i:i + 2][::-1] and a[i + 2:] == b[i + 2:])


def misspells(wrong: str, right: str) -> bool:
    """Is `wrong` a misspelling of the KB's `right`: the same stem and the same ending spelt
    otherwise, or one edit apart inside the word (the same first and last letters; both
    MIN_EDITED letters at least)? A contraction ("didn't") corrects nothing.
    Example: misspells("planed", "planned") -> True; misspells("wanted", "wants") -> False"""
    w, r = wrong.lower(), right.lower()
    if w == r or CONTRACTION.search(r):
        return False
    if stem(w) == stem(r):  # one word's forms: a misspelling only with the same ending
        return ending(w) == ending(r)
    return min(len(w), len(r)) >= MIN_EDITED and w[0] == r[0] and w[-1] == r[-1] and \
        one_edit(w, r)  # an edit at either end makes another word too often: think / thing


def _shown(windows: list[str]) -> tuple[list[str], set[str]]:
    """The windows with struck-out text blanked, and every word they write (lower case)."""
    shown = [unstruck(w) for w in windows]
    return shown, {w for text in shown for w in WORD.findall(text.lower())}


def respelt(windows: list[str], question: str) -> tuple[int, str, str] | None:
    """(window index, the window's spelling, the question's word) for a verdict question with a
    word no window writes and a window word it misspells; None when there is none, or the
    pairs name two spellings.
    Example: respelt(["double it: swim → swimming"], "is 'swiming' right?") ->
        (0, "swimming", "swiming")"""
    if not asks_verdict(question):
        return None
    shown, held = _shown(windows)
    asked = {w for w in (w.strip("'") for w in re.findall(r"[a-z']+", question.lower()))
             if len(w) >= MIN_LETTERS and w not in STOPWORDS and w not in held}
    found: dict[str, tuple[int, str, str]] = {}
    for n, text in enumerate(shown):
        for line in text.splitlines():
            for t in TOKEN.finditer(line):
                right = t.group(0)
                wrong = next((w for w in sorted(asked) if misspells(w, right)), None)
                if wrong is not None and not is_key(line, t):
                    found.setdefault(right.lower(), (n, right, wrong))
    return only_one(found)


def unregular(windows: list[str], question: str) -> tuple[int, str, str] | None:
    """(window index, the row's form, the question's word) for a verdict question that gives a
    word a window's table row lists a regular ending instead of the row's own form: "childs"
    beside `| child | children |` (a two-cell row: its plural), "teached" beside `| teach |
    taught | taught |` (a verb's row: its past, or its participle after a form of *have*,
    "have you teached" too, or of a passive's *be* or *get*, "was teached", "got beated"; not
    after "is" or "are", which ask the verdict as often: "is teached right?"). A key that ends
    in -s is its own stem ("crisises" beside `| crisis | crises |`).
    None when no row's key is the word's stem, the word is one of the row's cells, or the rows
    name two forms.
    Example: unregular(["| teach | taught | taught |"], "she teached us, right?") ->
        (0, "taught", "teached")"""
    if not asks_verdict(question):
        return None
    words = WORD.findall(question.lower())
    shown, held = _shown(windows)
    found: dict[str, tuple[int, str, str]] = {}
    for n, text in enumerate(shown):
        for row in (table_cells(ln) for ln in text.splitlines() if whole_row(ln)):
            key = row[0].lower()
            for i, word in enumerate(words):
                end = ending(word)
                if word in held or word == key or stem(word) not in (stem(key), key) or \
                        (end, len(row)) not in (("s", 2), ("ed", 3)):
                    continue
                aux = auxiliary_at(words, i)  # "have you choosed": the participle
                after_have = aux >= 0 and (ASKS_PARTICIPLE.fullmatch(words[aux]) is not None
                                           or PASSIVE.fullmatch(words[aux]) is not None)
                form = row[1] if end == "s" else row[2 if after_have else 1]
                found.setdefault(form.lower(), (n, form, word))
    return only_one(found)
