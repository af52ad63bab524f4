"""The words a fill-in's gap stands for, read off a window that writes its cue's verb group.

What it is: `filled_gap(windows, question)`: to a fill-in with one one-word cue ("we ___
(play) cards"), each form of the cue a window writes outside struck-out text (`is_form`:
playing, played, plays, known, taken), with the auxiliaries right before it ("were playing",
"will have finished"), is a candidate answer, less its first words where the question already
writes them before the gap ("he has ___ (take)": "taken", not "has taken"), its first
auxiliary agreed with a pronoun subject ("we" + the KB's "was playing": "were playing"). One
candidate, or one whose line shares more of the question's words than any other's, is the
answer; an -ing form or an -n participle alone never follows a pronoun subject ("i ___").
The reader uses it where its model abstains or answers only part of the group (reader.py).
What it leaves out: which tense a situation calls for (the window must write the group; a
formula such as "was/were + -ing" composes nothing), irregular forms that share no letters
with the cue beyond a stem ("went" for "go": the table rows answer those), two cues in a
question, a noun subject's number.
`mended_group(windows, question)`: to a question that asks a verdict, its verb group with a
wrong form put right by a window's verb row (| base | past | participle |): after *have* the
participle, after *do*, a modal or "to" the base ("has became" -> "has become", "did you saw"
-> "did you see").
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.forms import HAVE, stem
from minirag.mistakes import asks_verdict
from minirag.reader_inputs import AUXILIARIES, WORD, content_stems, has_gap, struck_out
from minirag.tables import table_cells, whole_row

CUE = re.compile(r"\(\s*([a-z]{2,})\s*\)")  # a one-word cue in brackets: "(play)", not "(i)"
TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")  # WORD, case kept
# a participle the cue spells with -n / -en added: know -> known, take -> taken, eat -> eaten
PARTICIPLE_ENDINGS = ("n", "en")
# the first auxiliary of a group, as each pronoun subject takes it (a family per row)
AGREEMENT = {
    "i": {"be": "am", "was": "was", "have": "have", "do": "do"},
    "he": {"be": "is", "was": "was", "have": "has", "do": "does"},
    "you": {"be": "are", "was": "were", "have": "have", "do": "do"},
}
AGREEMENT.update(she=AGREEMENT["he"], it=AGREEMENT["he"], we=AGREEMENT["you"],
                 they=AGREEMENT["you"])
FAMILY = {"am": "be", "is": "be", "are": "be", "was": "was", "were": "was", "have": "have",
          "has": "have", "do": "do", "does": "do"}
# what a contracted auxiliary the question writes before its gap may stand for: "she's ___"
CONTRACTED = {"'ve": {"have"}, "'re": {"are"}, "'m": {"am"}, "'ll": {"will"},
              "'s": {"is", "has"}, "'d": {"had", "would"}}


def unstruck(window: str) -> str:
    """The window with its struck-out text and marks blanked, as the reader's inputs read marks.
    Example: unstruck("~~goed~~ → went") -> " " * 9 + "→ went" (the marks and their text blanked)"""
    marks = struck_out(list(window))  # per character
    return "".join(" " if m else ch for ch, m in zip(window, marks))


def only_one(found: dict):
    """The one value of `found` (the rules' candidates keyed by answer), or None for none or
    several: a rule answers only when all it found agrees."""
    return next(iter(found.values())) if len(found) == 1 else None


def cue_of(question: str) -> str | None:
    """The one-word cue of a fill-in, or None: no gap, no cue, or two cues in brackets.
    Example: cue_of("we ___ (play) cards") -> "play"; cue_of("past of go") -> None"""
    cues = CUE.findall(question.lower())
    return cues[0] if has_gap(question) and len(cues) == 1 else None


def is_form(word: str, cue: str) -> bool:
    """Is `word` a form of the verb `cue` by its letters: the cue, a regular form of it (the
    same forms.stem), or a participle spelt with -n / -en.
    Example: is_form("playing", "play") -> True; is_form("known", "know") -> True;
        is_form("went", "go") -> False"""
    w = word.lower()
    return w == cue or stem(w) == stem(cue) or w in {cue + e for e in PARTICIPLE_ENDINGS}


def before_gap(question: str) -> list[str]:
    """The question's words before its gap, a contraction's auxiliary as a word of its own.
    Example: before_gap("by then she's ___ (go)") -> ["by", "then", "she", "'s"]"""
    words: list[str] = []
    for w in WORD.findall(question.lower().split("__")[0]):
        head, _, tail = w.partition("'")
        words += [head, "'" + tail] if tail and "'" + tail in CONTRACTED else [w]
    return words


def _said(group_word: str, question_word: str) -> bool:
    return group_word == question_word or group_word in CONTRACTED.get(question_word, ())


def fitted(group: list[str], before: list[str]) -> list[str]:
    """The group less its first words that the question writes right before the gap, its first
    auxiliary agreed with a pronoun subject when the question writes none of it.
    Example: fitted(["has", "taken"], ["he", "has"]) -> ["taken"];
        fitted(["was", "playing"], ["we"]) -> ["were", "playing"]"""
    for j in range(len(group) - 1, 0, -1):
        if len(before) >= j and all(map(_said, group[:j], before[-j:])):
            return group[j:]
    low = group[0].lower()
    if before and before[-1] in AGREEMENT and low in FAMILY and len(group) > 1:
        return [AGREEMENT[before[-1]][FAMILY[low]], *group[1:]]
    return group


def groups(window: str, cue: str, negated: bool = True) -> list[tuple[list[str], str]]:
    """Each (verb group, its line) of a window: a form of `cue` outside struck-out text, with
    the auxiliaries right before it on its line (only spaces between the words). The cue alone
    counts only as a table cell of its own (elsewhere it is the word explained, not its form);
    with `negated` False, a group that holds a negation ("wouldn't be") does not count.
    Example: groups("We were playing.", "play") -> [(["were", "playing"], "We were playing.")]"""
    out = []
    for line in unstruck(window).splitlines():
        tokens = list(TOKEN.finditer(line))
        for i, t in enumerate(tokens):
            if not is_form(t.group(0), cue) or is_key(line, t):
                continue
            start = i
            while start > 0 and tokens[start - 1].group(0).lower() in AUXILIARIES and \
                    not line[tokens[start - 1].end():tokens[start].start()].strip():
                start -= 1
            group = [m.group(0) for m in tokens[start:i + 1]]
            bare = len(group) == 1 and group[0].lower() == cue
            if not (bare and not _in_cell(line, t) or not negated and _negative(group)):
                out.append((group, line))
    return out


def _non_finite(words: list[str], cue: str) -> bool:
    """Is the group an -ing form or an -n participle alone ("flying", "known")?"""
    w = words[0].lower()
    return len(words) == 1 and (w.endswith("ing") and w != cue or
                                w in {cue + e for e in PARTICIPLE_ENDINGS})


def _negative(words: list[str]) -> bool:
    return any(w.lower() == "not" or w.lower().endswith("n't") for w in words)


def _in_cell(line: str, token: re.Match) -> bool:
    """Is the word a table cell of its own ("| cost | cost |": the KB gives the cue as its form)?"""
    return line[:token.start()].rstrip(" \t*").endswith("|") and \
        line[token.end():].lstrip(" \t*").startswith("|")


def is_key(line: str, token: re.Match) -> bool:
    """Is the word a key the KB looks a form up by: a table row's first cell ("| cost | cost |"),
    or the word an arrow starts from ("easy → easier")? The form asked is beside it."""
    first_cell = line[:token.start()].strip(" \t*") == "|"
    return first_cell or line[token.end():].lstrip().startswith("→")


def filled_gap(windows: list[str], question: str) -> tuple[int, str] | None:
    """(window index, the words that fill the gap as the window writes them) for a fill-in
    with one one-word cue, or None: no window writes a form of the cue, or candidates
    disagree and no line shares more of the question's words (the cue aside) than the others.
    Example: filled_gap(["They were playing."], "we ___ (play) cards") -> (0, "were playing")"""
    cue = cue_of(question)
    if cue is None:
        return None
    before = before_gap(question)
    situation = content_stems(question) - {stem(cue)}
    found: dict[str, tuple[int, int, str]] = {}  # answer -> (its best line's overlap, window, text)
    for n, window in enumerate(windows):
        for group, line in groups(window, cue, negated=_negative(WORD.findall(question.lower()))):
            words = fitted(group, before)
            if before and before[-1] in AGREEMENT and _non_finite(words, cue):
                continue  # "i ___": a subject needs a finite verb, never "flying" alone
            key, overlap = " ".join(words).lower(), len(situation & content_stems(line))
            if key not in found or overlap > found[key][0]:
                found[key] = (overlap, n, " ".join(words))
    ranked = sorted(found.values(), key=lambda f: -f[0])
    if not ranked or len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
        return None
    return ranked[0][1], ranked[0][2]


def part_of(answer: str, filled: str, cue: str) -> bool:
    """Is `answer` a part of the group `filled` that holds no form of the cue ("were" of
    "were playing")? Such an answer leaves the gap half empty.
    Example: part_of("were", "were playing", "play") -> True"""
    said = WORD.findall(answer.lower())
    return bool(said) and not any(is_form(w, cue) for w in said) and \
        set(said) <= set(WORD.findall(filled.lower()))


# what an auxiliary asks of the verb after it: a form of *have* the participle, *do*, a modal or
# "to" the base form ("has went", "did you saw", "can swims", "to went" are mistakes)
ASKS_PARTICIPLE = re.compile(HAVE)
ASKS_BASE = re.compile(r"(?:do|does|did|can|could|will|would|shall|should|may|might|must)(?:n'?t)?"
                       r"|can'?t|cannot|won'?t|to|[a-z]+'ll")
PRONOUNS = frozenset("i you he she it we they".split())
# adverbs that stand between an auxiliary and its verb: "has never been", "did not go"
MID_ADVERBS = frozenset("never ever already just always not also often still really even finally "
                        "recently".split())


def verb_rows(window: str) -> list[list[str]]:
    """The rows of a window's verb tables: three one-word cells, base | past | participle,
    outside struck-out text.
    Example: verb_rows("| go | went | gone |") -> [["go", "went", "gone"]]"""
    rows = [table_cells(ln) for ln in unstruck(window).splitlines() if whole_row(ln)]
    return [[c.lower() for c in r] for r in rows
            if len(r) == 3 and all(re.fullmatch(r"[A-Za-z]+", c) for c in r)]


def asked_cell(auxiliary: str) -> int | None:
    """The cell of a verb row an auxiliary asks for: 2 (the participle) after *have*, 0 (the
    base) after *do*, a modal or "to"; None after any other word."""
    if ASKS_PARTICIPLE.fullmatch(auxiliary):
        return 2
    return 0 if ASKS_BASE.fullmatch(auxiliary) else None


def auxiliary_at(words: list[str], i: int) -> int:
    """Where the auxiliary of the verb `words[i]` would stand: right before it, before an
    adverb that stands between ("have never ran"), before a subject pronoun ("did you saw"),
    or before both ("have you ever saw"); -1 at the start.
    Example: auxiliary_at(["did", "you", "saw"], 2) -> 0;
        auxiliary_at(["have", "you", "ever", "saw"], 3) -> 0"""
    j = i - 1
    if j >= 1 and words[j] in MID_ADVERBS:
        j -= 1
    return j - (j >= 1 and words[j] in PRONOUNS)


def mended_group(windows: list[str], question: str) -> tuple[int, str, str] | None:
    """(window index, the question's verb group with its verb put right, the wrong form) for a
    question that asks a verdict and writes a verb row's form after an auxiliary that asks for
    another of its cells ("has became": the participle, "become"; "did you saw": the base). The
    group runs from the auxiliaries (and a subject pronoun after the first, "did you") to the
    verb, as the question writes it. None when no window's row holds the form, the form is the
    one asked, or two rows mend it differently.
    Example: mended_group(["| begin | began | begun |"], "is 'it has began' right?") ->
        (0, "has begun", "began")"""
    if not asks_verdict(question):
        return None
    rows = [(n, row) for n, window in enumerate(windows) for row in verb_rows(window)]
    words = WORD.findall(question.lower())
    found: dict[str, tuple[int, str, str]] = {}
    for i, wrong in enumerate(words):
        aux = auxiliary_at(words, i)
        cell = asked_cell(words[aux]) if aux >= 0 else None
        if cell is None:
            continue
        start = aux
        while start > 0 and (words[start - 1] in AUXILIARIES or asked_cell(words[start - 1])):
            start -= 1
        for n, row in rows:
            if wrong in row and row[cell] != wrong:
                mended = " ".join([*words[start:i], row[cell]])
                found.setdefault(mended, (n, mended, wrong))
    return only_one(found)
