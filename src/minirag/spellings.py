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
`unregular(windows, question)`: a word given a regular ending the KB gives another form for
is answered with that form: a table row's ("childs": `| child | children |`; "teached": `|
teach | taught | taught |`; "gooder": `| good | better | the best |`) or an arrow's ("wolfs":
"wolf → wolves"; "thiner": "thin → thinner"; "basicly": "basic → basically").
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.forms import arrows, bases, ending, form_kind, stem
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
# the kinds of change (forms.form_kind) an arrow gives for each regular ending a learner adds
ENDING_KINDS = {"s": {"s", "plural"}, "ed": {"ed"}, "er": {"er"}, "est": {"est"}, "ly": {"ly"}}
REMARK = re.compile(r"\s*\(.*\)$")  # a key's remark: "good (adjective)"


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
    """(window index, the form the KB gives, the question's word) for a verdict question that
    gives a word a regular ending the KB gives another form for, read at the word's first
    occurrence (the learner's sentence; a later "is X even a word?" names it again):
      - a table row keyed by the word's stem: "childs" beside `| child | children |` (a two-cell
        row: its plural), "teached" beside `| teach | taught | taught |` (a verb's row: its past,
        or its participle after a form of *have*, "have you teached" too, or of a passive's *be*
        or *get*, "was teached", "got beated"; not after "is" or "are", which ask the verdict as
        often: "is teached right?"); a key that ends in -s is its own stem ("crisises" beside
        `| crisis | crises |`);
      - a three-cell row keyed by the word less -er or -est (`bases`): "gooder" beside `| good
        (adjective) | better | the best |` takes its second cell, "baddest" its third;
      - an arrow from the word less its ending whose change is of the ending's kind
        (`forms.form_kind`): "wolfs" beside "wolf → wolves", "thiner" beside "thin → thinner",
        "basicly" beside "basic → basically".
    None when nothing fits, the word is written by a window or is a row's key, or the entries
    name two forms.
    Example: unregular(["| teach | taught | taught |"], "she teached us, right?") ->
        (0, "taught", "teached")"""
    if not asks_verdict(question):
        return None
    words = WORD.findall(question.lower())
    shown, held = _shown(windows)
    found: dict[str, tuple[int, str, str]] = {}
    for n, text in enumerate(shown):
        rows = [table_cells(ln) for ln in text.splitlines() if whole_row(ln)]
        pairs = arrows(text)  # (base, form) of each arrow: "wolf → wolves"
        for i, word in enumerate(words):
            end = ending(word) or ("ly" if word.endswith("ly") else None)
            if end is None or word in held or words.index(word) != i:  # its first occurrence
                continue
            for row in rows:
                key = row[0].lower()
                if word == key:
                    continue
                if stem(word) in (stem(key), key) and (end, len(row)) in (("s", 2), ("ed", 3)):
                    aux = auxiliary_at(words, i)  # "have you choosed": the participle
                    after_have = aux >= 0 and (ASKS_PARTICIPLE.fullmatch(words[aux]) is not None
                                               or PASSIVE.fullmatch(words[aux]) is not None)
                    form = row[1] if end == "s" else row[2 if after_have else 1]
                    found.setdefault(form.lower(), (n, form, word))
                elif end in ("er", "est") and len(row) == 3 and \
                        bases(word, end) & {key, REMARK.sub("", key)}:  # "good (adjective)"
                    form = row[1] if end == "er" else row[2]
                    found.setdefault(form.lower(), (n, form, word))
            for base, form in pairs:  # "wolf → wolves" for "wolfs"
                if form_kind(base, form) in ENDING_KINDS.get(end, ()) and \
                        base.lower() in bases(word, end) and form.lower() != word:
                    found.setdefault(form.lower(), (n, form, word))
    return only_one(found)
