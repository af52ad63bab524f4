"""The form a fill-in's sentence asks of its cue: "than" after the gap, "the" or a number
before it, a time in the past, a third conditional or a wish about the past.

What it is: a fill-in's cue is often a word the KB lists forms of ("hot → hotter → hottest", `|
mouse | mice |`), and the sentence around the gap says which one it wants: "this tea is ___ (hot)
than mine" the comparative, "the ___ (tall) tree in the park" the superlative, "five ___
(mouse)" the plural, "she ___ (teach) us to read when we were small" the past simple, "if we
___ (leave) earlier we would have caught it" and "i wish i ___ (go) last night" the past
perfect: "had" and the cue's participle (`asked_kind`). `cue_forms` collects what the windows
give of the cue: each arrow from it, with the kind its change has (`forms.form_kind`), and
each cell of its table row, with the kinds its column's header names (`forms.FORM_NAMES`:
"Comparative", "Plural"; a "Past simple" column and a regular -ed arrow give the past).
`asked_form` answers with the one form of the kind asked; where the sentence names no kind
("there are ___ (mouse)", "she smiled ___ (gentle)"), with the cue's one form if the windows
give one only and the cue is no verb. The reader uses it where its model abstains or answers
the cue or another of its forms (reader.py).
What it leaves out: a mixed conditional, whose if-clause is a state now ("if i ___ (speak)
spanish, i'd have understood": the past simple, though "would have" follows), a kind the
sentence says some other way when the windows give two forms ("much ___ (good)" with no
"than", beside good → better → best), a verb's form the sentence names no kind of ("was
built", "will be working": a group a window writes is `verb_groups.filled_gap`'s), and a form
no window gives.
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.forms import FORM_NAMES, arrows, form_kind
from minirag.reader_inputs import AUXILIARIES, WORD, has_gap
from minirag.tables import headed_rows
from minirag.verb_groups import cue_of, only_one, unstruck

# a word right before a gap that asks for a plural: "two ___ (child)", "several ___ (crisis)"
PLURAL_WORDS = frozenset("two three four five six seven eight nine ten eleven twelve twenty "
                         "hundred several many few these those both various".split())
BRACKET = re.compile(r"^\s*\([^)]*\)")  # the cue's brackets, right after the gap
VERB_KINDS = frozenset({"ed", "past", "ing"})  # a cue with a form of these kinds is a verb
# a time in the past: "yesterday", "two years ago", "last sunday", "when i was eight", "in 2019"
PAST_TIME = re.compile(r"\b(?:yesterday|ago|last (?:night|week|month|year|weekend|time|summer|"
                       r"winter|spring|autumn|monday|tuesday|wednesday|thursday|friday|saturday|"
                       r"sunday)|when (?:i|you|he|she|it|we|they) (?:was|were)"
                       r"|in (?:1[89]|20)\d\d)\b")
# the past perfect's sentences: a third conditional's if-clause, "if they ___ (leave) earlier
# they would have caught it" (IF_GAP and WOULD_HAVE), and a wish about the past, "i wish i ___
# (go) last night" (WISH_GAP and PAST_TIME)
IF_GAP = re.compile(r"\bif \w+(?: \w+)? __")
WOULD_HAVE = re.compile(r"\b(?:would|could|might|should|wouldn'?t|couldn'?t)(?: not)? have\b"
                        r"|\b\w+'d have\b")
WISH_GAP = re.compile(r"\bwish(?:es|ed)? \w+ __")


def asked_kind(question: str) -> str | None:
    """The kind of form the words around a fill-in's gap ask for: "er" when "than" follows it,
    "est" when "the" stands before it, "plural" after a number word, "had" (the past perfect)
    in a third conditional's if-clause or a wish about the past, "past" (the past simple) in a
    sentence set in the past (PAST_TIME) with no auxiliary right before the gap; None otherwise.
    Example: asked_kind("this road is ___ (dry) than that one") -> "er";
        asked_kind("five ___ (mouse) ran off") -> "plural";
        asked_kind("if i ___ (know), i would have come") -> "had";
        asked_kind("she ___ (teach) us when i was ten") -> "past\""""
    if not has_gap(question):
        return None
    q = question.lower()
    before, _, after = q.partition("__")
    last = WORD.findall(before)[-1:]
    if WORD.findall(BRACKET.sub("", after.lstrip("_")))[:1] == ["than"]:
        return "er"
    if last == ["the"]:
        return "est"
    if last and (last[0] in PLURAL_WORDS or last[0].isdigit()):
        return "plural"
    if IF_GAP.search(q) and WOULD_HAVE.search(q) or WISH_GAP.search(q) and PAST_TIME.search(q):
        return "had"
    # a past time asks the past simple, unless an auxiliary before the gap asks another form
    past = PAST_TIME.search(q) and not (last and last[0] in AUXILIARIES)
    return "past" if past else None


def cue_forms(windows: list[str], headers: dict[str, str], cue: str
              ) -> list[tuple[int, str, set[str]]]:
    """(window index, form, its kinds) for each form the windows give of `cue`: an arrow from
    it (the kind of its change; a plural's -s shape is the he/she form's too) and each cell of a
    whole row keyed by it whose header (`headers`, Prompt.headers) names a kind of form.
    Example: cue_forms(["hot → hotter → hottest"], {}, "hot") ->
        [(0, "hotter", {"er"}), (0, "hottest", {"est"})]"""
    found, shown = [], [unstruck(w) for w in windows]
    for n, text in enumerate(shown):
        for word, form in arrows(text):
            kind = form_kind(word, form)
            if word.lower() == cue and kind is not None:  # a regular -ed form is the past too
                found.append((n, form, {"s", "plural"} if kind == "s" else
                              {"ed", "past"} if kind == "ed" else {kind}))
    for n, cells, names, _ in headed_rows(shown, headers):
        for cell, named in zip(cells[1:], names[1:]) if cells[0].lower() == cue else ():
            kinds = {k for k, ns in FORM_NAMES.items() if ns & named}
            kinds |= {"past"} if "past" in named and "participle" not in named else set()
            if cell and kinds:
                found.append((n, cell, kinds))
    return sorted(found, key=lambda f: f[0])  # window by window, its arrows before its rows


def asked_form(windows: list[str], headers: dict[str, str], question: str
               ) -> tuple[int, str, str] | None:
    """(window index, the cue's form of the kind the sentence asks, the cue) for a fill-in
    whose windows give one such form (for the past perfect, "had" and the cue's participle:
    "had known"); where the sentence asks no kind, the one form the windows
    give of a cue that is no verb ("there are ___ (mouse)" beside `| mouse | mice |`); None for
    no form or two.
    Example: asked_form(["big → bigger → biggest"], {}, "the ___ (big) house in town") ->
        (0, "biggest", "big")"""
    cue, kind = cue_of(question), asked_kind(question)
    if cue is None:
        return None
    forms = cue_forms(windows, headers, cue)
    if kind == "had":  # "had" and the participle: a participle cell, or a regular -ed form
        forms = [(n, f"had {form}", {"had"}) for n, form, kinds in forms
                 if "ed" in kinds and ("past" not in kinds or form.lower().endswith("ed"))]
    if kind is None and any(kinds & VERB_KINDS for _, _, kinds in forms):
        return None  # a verb's form needs the sentence's reading: "was built", "will be working"
    found: dict[str, tuple[int, str, str]] = {}
    for n, form, kinds in forms:
        if kind is None or kind in kinds:  # no kind asked: a noun's or adjective's one form
            found.setdefault(form.lower(), (n, form, cue))
    return only_one(found)


def misformed(answer: str, windows: list[str], headers: dict[str, str],
              formed: tuple[int, str, str]) -> bool:
    """Is `answer` the cue of `formed` (asked_form's) or another of its forms the windows give,
    not the one its sentence asks? Then the model read the right row and the wrong column.
    Example: misformed("hotter", ["hot → hotter → hottest"], {}, (0, "hottest", "hot")) -> True"""
    cue, asked = formed[2], formed[1].lower()
    others = {cue} | {f.lower() for _, f, _ in cue_forms(windows, headers, cue)}
    return answer.lower() in others - {asked}
