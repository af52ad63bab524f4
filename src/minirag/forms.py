"""Word forms in the KB's arrows: which form an arrow gives, and what a learner calls it.

What it is: the KB lists regular forms as arrows ("stop → stopping", "big → bigger → biggest").
`arrows(text)` finds them, `form_kind` reads which form one gives from the shape of the change
(the -ing form, a plural, a comparative...; the reader's questions use it, training/
questions.py), `regular_forms` keeps the arrows that give a form of their own word, and
FORM_NAMES holds the words a question names that form by ("past", "comparative"): to an arrow
what a table's header is to its rows. Used by the row lookup (tables.RowIndex: "comparative
of big" finds "big → bigger"), by the reader (`other_forms`: to "past of lie", the "lying" of
"lie → lying" is no answer) and by `minirag eval`'s `regular forms` rows.
`stem`, `ending` and `bases` read a learner's own form of a word: what a word's regular forms
share, the ending a form carries, the words that ending may have been added to ("oxes": *ox*).
What it leaves out: irregular forms (the KB puts them in tables, which have headers).
"""

from __future__ import annotations

import os
import re

# "stop → stopping", "careful → more careful", "tall → the tallest" (the article is not part of
# the form); a lookahead, so that the arrows of a chain overlap. One word before the arrow: the
# reader's facts read arrows with their own pattern (training/facts.py), whose two-word sides
# ("give up → gave up") make facts but no row a one-word question can look up
WORD_ARROW = re.compile(r"(?=\b([A-Za-z]+) → (?:the )?((?:more |most )?[A-Za-z]+))")

# The names of a form a question may use (3+ letters, as tokenize gives them): a regular verb's
# past simple and past participle are both its -ed form; "participle" alone is the past one
FORM_NAMES = {
    "ing": frozenset({"ing", "gerund", "continuous", "progressive"}),
    "ed": frozenset({"past", "participle", "preterite"}),
    "s": frozenset({"third", "person"}),
    "plural": frozenset({"plural", "plurals"}),
    "er": frozenset({"comparative", "comparatives"}),
    "est": frozenset({"superlative", "superlatives"}),
    "ly": frozenset({"adverb", "adverbs"}),
}

# "the he/she form", "for he or she": the -s form, named by its subject
# a form of *have* that can stand before a participle: "has", "hadn't", "i've", "weve"
HAVE = r"(?:ha(?:ve|s|d)(?:n'?t)?|(?:i|you|we|they|who)'?ve)"
HE_SHE = re.compile(r"\b(?:he ?(?:/|or) ?she|she ?(?:/|or) ?he)\b")


def arrows(text: str) -> list[tuple[str, str]]:
    """The (word, form) pairs of the arrows in `text`, struck-through marks ignored; a chain
    "big → bigger → biggest" gives (big, bigger) and (big, biggest).
    Example: arrows("add -ing: work → working, stop → stopping") ->
        [("work", "working"), ("stop", "stopping")]"""
    pairs: list[tuple[str, str]] = []
    for a, b in WORD_ARROW.findall(text.replace("~~", "")):
        if pairs and pairs[-1][1] == a:
            a = pairs[-1][0]  # a chain goes on from its first word
        if a.lower() != b.lower() and (a, b) not in pairs:
            pairs.append((a, b))
    return pairs


def form_kind(word: str, form: str, doc_id: str = "") -> str | None:
    """Which form `form` is of `word`, from the shape of the change: "stop → stopping" is the
    -ing form, "baby → babies" a plural (in a file about nouns, `doc_id`) or else a he/she
    form; None for a change it cannot name (two-word keys, "go → went"). The shape alone:
    `regular_forms` also asks that the form be one of the word's.
    Example: form_kind("big", "bigger") -> "er"; form_kind("nice", "most nice") -> "est\""""
    k, a = word.lower(), form.lower()
    if " " in k or k == a:
        return None
    for suffix in ("ing", "ed", "est", "er", "ly"):
        if a.endswith(suffix) and not k.endswith(suffix):
            return suffix
    if a.startswith("more "):
        return "er"
    if a.startswith("most "):
        return "est"
    if a.endswith("s") and not k.endswith("s"):
        return "plural" if "plural" in doc_id or "noun" in doc_id else "s"
    return None


def regular_forms(text: str, doc_id: str = "") -> list[tuple[str, str, str]]:
    """The (word, form, kind) of each arrow in `text` that gives a form of its word: a kind
    `form_kind` names, a form that starts like the word (all but its last two letters: "lie →
    lying", "happy → happier") and no -ss ending for an -s form ("pity → pitiless" is no
    plural). An arrow between two sentences ("... at the airport → arrived at ...") is none.
    Example: regular_forms("big → bigger; airport → arrived") -> [("big", "bigger", "er")]"""
    out = []
    for word, form in arrows(text):
        kind = form_kind(word, form, doc_id)
        stem = form.lower().removeprefix("more ").removeprefix("most ")
        if kind is None or not starts_like(word, stem) \
                or (kind in ("s", "plural") and stem.endswith("ss")):
            continue
        out.append((word, form, kind))
    return out


def starts_like(word: str, form: str) -> bool:
    """Does `form` start like `word`, all but the word's last two letters? A form of the word
    does ("lie → lying", "happy → happier", "argue → argument"); a word cut by a window's start
    does not ("nic → picnicked"), nor an arrow between two sentences.
    Example: starts_like("dry", "driest") -> True; starts_like("nic", "picnicked") -> False"""
    w, f = word.lower(), form.lower()
    return len(os.path.commonprefix([w, f])) >= max(1, len(w) - 2)


def asked_kinds(question: str) -> set[str]:
    """The kinds of form a question names (by FORM_NAMES, and "he/she" or "he or she" for the
    -s form). A he/she -s and a plural have one shape, which `form_kind` tells apart only by
    the file, so naming one names both.
    Example: asked_kinds("past of lie") -> {"ed"}; asked_kinds("what does lie mean") -> set()"""
    words = set(re.findall(r"[a-z]+", question.lower()))
    kinds = {k for k, names in FORM_NAMES.items() if names & words}
    kinds |= {"s"} if HE_SHE.search(question.lower()) else set()
    return kinds | ({"s", "plural"} if kinds & {"s", "plural"} else set())


def other_forms(text: str, question: str) -> set[str]:
    """The forms (lowercase) that the arrows of `text` give of a kind the question does not
    name, when it names one: to "past of lie", "lie → lying" gives an -ing form, no answer.
    Example: other_forms("lie → lying; stop → stopped", "past of lie") -> {"lying"}"""
    kinds = asked_kinds(question)
    if not kinds:
        return set()
    return {form.lower() for _, form, kind in regular_forms(text) if kind not in kinds}


def _alternatives(cell: str) -> set[str]:
    """A table cell's words or phrases: "good / well" -> {"good", "well"}"""
    return {a.strip(" *") for a in cell.split("/") if a.strip(" *")}


def entries(text: str, arrows: bool = True) -> list[tuple[set[str], set[str]]]:
    """The (keys, forms) of each word's entry in `text`, lowercase: a table row's first cell and
    its other cells ("| go | went | gone |"), an arrow's word and form (`regular_forms`).
    A row's keys are the words of its first cell ("good (adjective)": good, adjective).
    Without `arrows`, the rows alone.
    Example: entries("| good / well | better |\nstop → stopped") ->
        [({"good", "well"}, {"better"}), ({"stop"}, {"stopped"})]"""
    out = []
    for line in text.lower().splitlines():
        cells = line.strip().strip("|").split("|")
        keys = set(re.findall(r"[a-z']+", cells[0]))  # "good (adjective)": good, adjective
        if line.strip().startswith("|") and len(cells) > 1 and keys:
            out.append((keys, set().union(*map(_alternatives, cells[1:]))))
    return out + [({w.lower()}, {f.lower()}) for w, f, _ in regular_forms(text) if arrows]


# Header words that name no column: every column holds a "form" ("Base form", "-ing form"), and
# "which form?" asks for one of them, not the base
GENERIC_NAMES = frozenset({"form", "forms"})


def column_names(column: str) -> set[str]:
    """A header cell's words of 3+ letters but the GENERIC_NAMES: "Past participle" -> {"past",
    "participle"}; "Base form" -> {"base"}"""
    return {w for w in re.findall(r"[a-z]+", column.lower()) if len(w) >= 3} - GENERIC_NAMES


def other_columns(text: str, question: str, headers: dict[str, str],
                  kinds: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """The forms (lowercase) of `text`'s table rows that stand under a column the question does
    not name best (`headers`: a row -> its table's header row, which no window shows).

    A column is named by the words of its header cell (`column_names`): best is the one the
    question says most of, then the one with fewest left unsaid. To "past participle of be",
    under "| Base form | Past simple | Past participle |", the "was / were" of "| be | was /
    were | been |"; to "object pronoun for we", "Object" (all said) before "Possessive
    pronoun" (half). A form that also stands under a best-named column stays ("| cut | cut |
    cut |"); a question that names no column bans nothing by name. The cells under a column of
    another kind of form than the `kinds` asked for are banned too (`asked_kinds`; a column's
    kinds are those its names give by FORM_NAMES): to "he/she form of fly", "flew" and "flown".
    Example: row = "| be | was / were | been |";
        other_columns(row, "past participle of be",
                      {row: "| Base form | Past simple | Past participle |"})
        -> {"be", "was", "were"}"""
    asked = set(re.findall(r"[a-z]+", question.lower()))
    out: set[str] = set()
    for line in text.splitlines():
        row = line.strip()
        cells = row.strip("|").split("|")
        names = [column_names(n) for n in headers.get(row, "").strip().strip("|").split("|")]
        if row not in headers or len(cells) != len(names):
            continue
        said = [(len(ns & asked), -len(ns - asked)) for ns in names]  # more said, less unsaid
        best = max(said) if max(said)[0] else None  # None: the question names no column
        column_kinds = [{k for k, fs in FORM_NAMES.items() if fs & ns} for ns in names]
        other = [(best is not None and s < best) or bool(kinds and ks and not ks & kinds)
                 for s, ks in zip(said, column_kinds)]
        forms = [_alternatives(c.lower()) for c in cells]
        kept = set().union(*(f for f, o in zip(forms, other) if not o))
        out |= set().union(*(f for f, o in zip(forms, other) if o)) - kept
    return out


def foreign_forms(text: str, asked: set[str]) -> set[str]:
    """The words and forms of the entries of other words than the `asked` ones in `text`, that
    no asked word and no asked word's entry has: to "-ing form of zigzag", "begin" and
    "beginning" of "begin → beginning".
    Example: foreign_forms("| go | went | gone |\n| do | did | done |", {"do"}) ->
        {"go", "went", "gone"}"""
    found = entries(text)
    mine = {f for keys, forms in found if keys & asked for f in forms | keys}
    return {f for keys, forms in found if not keys & asked for f in forms | keys} - mine - asked


STEM_SUFFIXES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """What a word's regular forms share, misspelt ones included: one ending of STEM_SUFFIXES
    off (three letters must stay; an -ss word keeps its s) and a consonant it doubled undone,
    or else a final e dropped. A light stemmer for matching a learner's word to the KB's, not
    a dictionary's lemma ("went" stays "went").
    Example: stem("stopping") == stem("stoping") == stem("stop") == "stop";
        stem("studyed") == stem("studies") == "study"; stem("making") == stem("make") == "mak"
    """
    w = word.lower()
    for suffix, put in STEM_SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: len(w) - len(suffix)] + put
            doubled = len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiouls"
            return w[:-1] if doubled else w  # stopp -> stop; fall, kiss keep their pair
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


# the regular endings a learner adds, and the ending each is read as ("ies": the -s of "enjoies")
ENDINGS = (("ies", "s"), ("es", "s"), ("s", "s"), ("ed", "ed"), ("ing", "ing"),
           ("est", "est"), ("er", "er"))


def ending(word: str) -> str | None:
    """The inflection a word ends in: "s", "ed", "ing", "est", "er", or None ("-ss" is none).
    Example: ending("enjoies") -> "s"; ending("glass") -> None"""
    w = word.lower()
    return None if w.endswith("ss") else next((e for s, e in ENDINGS if w.endswith(s)), None)


def bases(word: str, end: str) -> set[str]:
    """The words `word` may be a regular `end` ("s", "ed", "ing", "er", "est", "ly") added to,
    as a learner adds it: the word less the ending, with an "e" back ("nicer"), one doubled
    consonant dropped ("baddest"), "i" back to "y" ("funnier", "fliing"), "al" dropped before
    "ly" ("publically"), "e" dropped before "s" ("tattooes", "oxes").
    Example: bases("baddest", "est") -> {"badd", "badde", "bad"}"""
    w = word[:-len(end)] if word.endswith(end) else word
    out = {w, w + "e"}
    if len(w) > 2 and w[-1] == w[-2]:
        out.add(w[:-1])
    if w.endswith("i"):
        out.add(w[:-1] + "y")
    if end == "ly" and w.endswith("al"):
        out.add(w[:-2])
    if end == "s" and w.endswith("e"):
        out.add(w[:-1])
    return out
