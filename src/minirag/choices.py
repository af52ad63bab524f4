"""The option the KB decides, to a question that offers two ("much or many with plural nouns?").

What it is: `chosen_option(windows, question)` reads the options off the words around the
question's "or" (`options`: the longest run of the left side's last words and of the right
side's first words that a window holds), and the question's other content words as the
situation it asks about ("plural nouns"). A window that holds one option only supports it with
the words it shares with that situation; a window that holds both, line by line; a window that
strikes an option out (~~payed~~) and keeps the other supports the one kept. The option with
support, more than the other's, is the answer, as the window writes it. With neither ahead,
two forms of one word ("oxes or oxen?", `written_form`) are settled by which one the windows
write: the KB never writes the wrong one outside a strike-out. A fill-in chooses
too when its bracket offers two alternatives ("there is ___ time left (little / a little)"),
or a clause of their own ("..., for or during?"): they are the options, the sentence around
the gap the situation. The reader uses it where
its model would abstain or answers with neither option (reader.py).
What it leaves out: meaning beyond shared words (a learner's "gave up my old job" never
matches the KB's "end an activity"); a choice of three; a window that names one option with
no word of the situation ("since or for?" beside "for a week" alone chooses nothing: two
different words, each right somewhere). Two right forms of which the windows write one only
("did you use to or used to?" beside "I used to swim") fool `written_form`.
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.definitions import MEANING, QUOTES
from minirag.forms import stem
from minirag.mistakes import VERDICT_WORDS
from minirag.prompt import STOPWORDS
from minirag.reader_inputs import (
    AUXILIARIES,
    WORD,
    content_stems,
    has_gap,
    holds_run,
    struck_out,
)
from minirag.verb_groups import unstruck

# the word that offers a choice: "or", "vs" ("/" joins as many clauses as options)
OFFERS = re.compile(r"(?<=\S)\s+(?:or|vs\.?|versus)\s+(?=\S)")
# a fill-in's bracket that offers two alternatives: "(a / an)", "(little or a little)"
BRACKET_CHOICE = re.compile(r"\(\s*([^()/]+?)\s*(?:/|\bor\b)\s*([^()/]+?)\s*\)")
# or, in a fill-in with no one-word cue in brackets, a clause of its own: "..., for or during?"
CUE = re.compile(r"\(\s*[a-z']+\s*\)")
CLAUSES = re.compile(r"[,;:?!]|\s[-/]\s")
SIDE = r"((?:[a-z']+\s+){0,2}[a-z']+)"  # one to three words
CLAUSE_CHOICE = re.compile(SIDE + r"\s+(?:or|vs\.?)\s+" + SIDE)
# a word before the options that lists them as examples ("a place like a town or a city")
EXAMPLE_LEADS = frozenset("like besides including eg".split())
ARTICLES = frozenset("a an the".split())
# a question that asks what sets two things apart (or what they mean: definitions.MEANING)
# asks no choice
DIFFERENCE = re.compile(r"\bdiffer\w*")
MAX_OPTION_WORDS = 4  # an option is at most this many words either side of the "or"
# words of a choice question that ask for the choice and say nothing of the situation
ASKING_STEMS = frozenset(stem(w) for w in VERDICT_WORDS | set(
    "better best use say write one right way form".split()))


def options(windows: list[str], question: str) -> tuple[list[str], list[str]] | None:
    """The two options' words: the longest run of the left side's last words, and of the
    right side's first words, MAX_OPTION_WORDS at most, that a window holds, struck out or not;
    a run must be its side's whole text, or hold a word that is no stopword and not start
    (end) a longer run of the other side: "i am" is no option against "i am bored", "little"
    is one against "a little". A side no window holds: its shortest such run. None when no
    window holds either side, when a question offers no choice by "or" or "vs" (OFFERS) or
    asks what sets the two apart or what they mean, when an option is a verdict ("correct or
    wrong?") or follows a word that lists examples ("like a town or a city"). A fill-in's
    options are the two alternatives its bracket offers (BRACKET_CHOICE) or, with no one-word
    cue in brackets, a clause of its own offers ("slept ___ all night, for or during?"), or None.
    Example: options(["It's going to rain.", "will: a decision"], "shall i say will or going
        to, it is cloudy") -> (["will"], ["going", "to"])"""
    asked = question.lower()
    if has_gap(question):  # a fill-in chooses only between the alternatives it offers apart
        offered = BRACKET_CHOICE.search(asked) or (None if CUE.search(asked) else next(
            filter(None, (CLAUSE_CHOICE.fullmatch(QUOTES.sub("", c).strip())
                          for c in CLAUSES.split(asked))), None))
        a, b = (WORD.findall(offered.group(g)) for g in (1, 2)) if offered else ([], [])
        return (a, b) if a and b and a != b else None
    if not OFFERS.search(asked) or DIFFERENCE.search(asked) or MEANING.search(asked):
        return None
    left, right = (WORD.findall(side) for side in (*OFFERS.split(asked, maxsplit=1), "")[:2])
    said = [WORD.findall(w.lower()) for w in windows]

    n = MAX_OPTION_WORDS
    lefts = [left[-k:] for k in range(1, min(n, len(left)) + 1)]
    rights = [right[:k] for k in range(1, min(n, len(right)) + 1)]
    # a run that begins (ends) a longer run of the other side is what the two share: no option
    lefts = [r for r in lefts if r == left or set(r) - STOPWORDS and not any(
        len(o) > len(r) and o[-len(r):] == r for o in rights)]
    rights = [r for r in rights if r == right or set(r) - STOPWORDS and not any(
        len(o) > len(r) and o[:len(r)] == r for o in lefts)]
    a, b = ([r for r in runs if any(holds_run(ws, r) for ws in said)] for runs in (lefts, rights))
    if not (a or b) or not (lefts and rights):
        return None
    # the longest run a window holds; a side none holds: its shortest run that is an option
    a, b = max(a, key=len) if a else lefts[0], max(b, key=len) if b else rights[0]
    lead = [w for w in left[:-len(a)] if w not in ARTICLES][-1:]  # the word before the options
    if a == b or {" ".join(a), " ".join(b)} & VERDICT_WORDS or set(lead + a[:1]) & EXAMPLE_LEADS:
        return None  # the same words; a verdict asked ("correct or wrong"); examples listed
    return a, b


def chosen_option(windows: list[str], question: str) -> tuple[int, str, str] | None:
    """(window index, the chosen option as the window writes it, the other option) for a
    question that offers two `options`: the one with the most support (see the module's
    docstring), one at least, more than the other's; None when neither is ahead.
    Example: chosen_option(["- Deadlines: by Monday, by then.\nWhile: during the time that."],
        "by or while with a deadline") -> (0, "by", "while")"""
    opts = options(windows, question)
    if opts is None:
        return None
    plain = " ".join(w for w in WORD.findall(question.lower())
                     if "'" not in w and w not in AUXILIARIES)  # "i'll", "have": no situation
    situation = content_stems(plain) - ASKING_STEMS - {stem(w) for o in opts for w in o}
    support = [(0, -1, ""), (0, -1, "")]  # per option: (support, window, line it is read on)
    for n, window in enumerate(windows):
        marks = struck_out(list(window))  # per character, as the reader's inputs read marks
        unstruck = "".join(" " if m else ch for ch, m in zip(window, marks))
        has = _holds(unstruck, opts)
        struck = _holds("".join(ch if m else " " for ch, m in zip(window, marks)), opts)
        for i in (0, 1):
            if has[0] and has[1]:  # both: each line that holds this option only
                lines = [ln for ln in unstruck.splitlines() if _holds(ln, opts) == (i == 0, i == 1)]
            else:  # this option only: the whole window is its evidence
                lines = [unstruck] if has[i] else []
            for line in lines:
                score = len(situation & content_stems(line)) + (struck[1 - i] and not has[1 - i])
                if score > support[i][0]:
                    support[i] = (score, n, line)
    best = max((0, 1), key=lambda i: support[i][0])
    (score, n, line), other = support[best], support[1 - best][0]
    if score < 1 or score <= other:
        return written_form(windows, opts)
    return n, _as_written(line, opts[best]), " ".join(opts[1 - best])


def written_form(windows: list[str], opts: tuple[list[str], list[str]]
                 ) -> tuple[int, str, str] | None:
    """(window index, the option as it writes it, the other option) for two options that are
    forms of one thing (`one_thing`) of which the windows write one only, outside any strike-out:
    the KB writes English as it should be written, so the form it never writes loses ("oxes or
    oxen?" beside `| ox | oxen |`). None for two different words ("since or for?": a window
    that writes one of them says nothing against the other) or when both or neither are written.
    Example: written_form(["| ox | oxen |"], (["oxes"], ["oxen"])) -> (0, "oxen", "oxes")"""
    if not one_thing(*(" ".join(o) for o in opts)):
        return None
    written: list[list[tuple[int, str]]] = [[], []]  # per option: (window, its unstruck text)
    for n, window in enumerate(windows):
        text = unstruck(window)
        for i, has in enumerate(_holds(text, opts)):
            if has:
                written[i].append((n, text))
    if bool(written[0]) == bool(written[1]):
        return None
    i = 0 if written[0] else 1
    n, text = written[i][0]
    return n, _as_written(text, opts[i]), " ".join(opts[1 - i])


def one_thing(a: str, b: str) -> bool:
    """Are options `a` and `b` two forms of one word or phrase: at most max(2, a third of the
    longer's letters) edits apart, fewer edits than the shorter has letters ("i" and "me" are
    two words), and not the same letters but for an apostrophe ("its" and "it's" are two words)?
    Example: one_thing("an university", "a university") -> True; one_thing("for", "since")
        -> False"""
    d = edits(a, b)
    return (d <= max(2, max(len(a), len(b)) // 3) and d < min(len(a), len(b))
            and a.replace("'", "") != b.replace("'", ""))


def edits(a: str, b: str) -> int:
    """The Levenshtein distance: the fewest insertions, deletions and substitutions of one
    character that turn `a` into `b`, by dynamic programming over `b`, one row per letter of `a`.
    Example: edits("oxes", "oxen") -> 1; edits("unpossible", "impossible") -> 2"""
    row = list(range(len(b) + 1))  # row[j]: edits from a[:i] to b[:j]
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _holds(text: str, opts: tuple[list[str], list[str]]) -> tuple[bool, bool]:
    """Does `text` hold each option as whole words? An option inside the other ("few" in "a
    few") counts only outside the other's occurrences."""
    words = WORD.findall(text.lower())
    longer, shorter = sorted((0, 1), key=lambda i: -len(opts[i]))
    rest = f" {' '.join(words)} ".replace(f" {' '.join(opts[longer])} ", " | ").split()
    found = {longer: holds_run(words, opts[longer]), shorter: holds_run(rest, opts[shorter])}
    return found[0], found[1]


def names_either(answer: str, choice: tuple[int, str, str]) -> bool:
    """Does `answer` name either option of a `chosen_option` result: hold the words that set
    it apart from the other ("bored" names "i am bored" against "i am boring")?"""
    said = set(WORD.findall(answer.lower()))
    a, b = (set(WORD.findall(o.lower())) for o in choice[1:])
    return any(own and own <= said for own in (a - b, b - a))


def _as_written(line: str, option: list[str]) -> str:
    """The option's words as `line` writes them (its case, its punctuation between words)."""
    found = re.search(r"(?<![a-z0-9])" + r"\W+".join(map(re.escape, option)) + r"(?![a-z0-9])",
                      line, re.IGNORECASE)
    return found.group(0) if found else " ".join(option)
