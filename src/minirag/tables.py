"""The KB's markdown tables read as dictionaries, and the words a fill-in asks about.

What it is: the table reading the retriever and the prompt share (`is_table_rule`,
`table_cells`, `row_headers`: which header each row sits under), a fill-in's cue in brackets
(`cue_words`), and `RowIndex`: every table row whose first cell is one word, keyed by it, so
that "past of swim" looks up the *swim* row however many chunks mention *swim*; arrows
("big → bigger", forms.py) and struck-out mistakes ("~~I have went~~", "~~buyed~~") are keys
too. The hybrid retriever fuses what it looks up as a third list (retrieve.py, rows=True).
What it leaves out: reading a table's cells for an answer (the reader's work, reader.py);
tables in HTML or without a header row (the KB has none). Why: theory/03, "A table is a
dictionary".
"""

from __future__ import annotations

import math
import re

from minirag.bm25 import tokenize
from minirag.chunk import Chunk
from minirag.forms import (
    FORM_NAMES,
    HAVE,
    arrows,
    asked_kinds,
    bases,
    column_names,
    ending,
    regular_forms,
    stem,
)


def cue_words(query: str) -> list[str]:
    """The tokens in brackets of a fill-in, the word a learner asks about; the rest of the
    sentence is scenery. Example: cue_words("the wolf ___ (howl) at the moon") -> ["howl"]"""
    return tokenize(" ".join(re.findall(r"\(([^)]*)\)", query)))


HEADWORD = re.compile(r"[a-z]+")  # a row key: one plain word (go, mouse, good), not "-ness"
MIN_UNWRITTEN = 4  # a shorter word the KB never writes is more often a typo than a form
STRUCK = re.compile(r"~~([^~]+)~~")  # a wrong form the KB strikes out: "~~I have went~~"


def is_table_rule(line: str) -> bool:
    """A markdown table rule such as "|---|:---:|", the line under a table's header."""
    return line.strip().startswith("|") and not line.strip("|-: \t")


def whole_row(line: str) -> bool:
    """Is `line` a whole table row: it opens and closes with "|", and is no rule? A window the
    prompt cut at its budget may end inside a row ("| aircraft | airc"), whose last cell is
    then no word of the KB. Example: whole_row("| go | went |") -> True"""
    return line.strip().startswith("|") and line.strip().endswith("|") and not is_table_rule(line)


def headed_rows(windows: list[str], headers: dict[str, str]
                ) -> list[tuple[int, list[str], list[set[str]], str]]:
    """(window index, cells, each cell's column names, the header row) of the whole rows the
    windows show whose header is known (`headers`: a shown row, as prompt.units gives it -> its
    header row, Prompt.headers), cell for cell (`forms.column_names`); a row with more or fewer
    cells than its header is none.
    Example: headed_rows(["| go | went |"], {"| go | went |": "| Base form | Past simple |"})
        -> [(0, ["go", "went"], [{"base"}, {"past", "simple"}], "| Base form | Past simple |")]"""
    out = []
    for n, window in enumerate(windows):
        for line in window.splitlines():
            row = " ".join(line.replace("*", "").split())
            if row not in headers or not whole_row(row):
                continue
            cells, names = table_cells(row), [column_names(c) for c in table_cells(headers[row])]
            if len(cells) == len(names):
                out.append((n, cells, names, headers[row]))
    return out


def table_cells(line: str) -> list[str]:
    """Example: table_cells("| **go** | went |") -> ["go", "went"] (bold marks dropped)"""
    return [c.replace("*", "").strip() for c in line.strip().strip("|").split("|")]


def row_headers(text: str, header: str = "") -> dict[str, str]:
    """Each table row of `text`, as prompt.units gives it, -> the header row of its table (`header`:
    the header of a table the text starts inside, chunk.metadata["table_header"]).
    Example: row_headers("| Base form | Past |\n|---|---|\n| go | went |") ->
        {"| go | went |": "| Base form | Past |"}"""
    out: dict[str, str] = {}
    lines = text.splitlines()
    for line, nxt in zip(lines, [*lines[1:], ""]):
        if is_table_rule(nxt) and not is_table_rule(line):
            header = line
        elif line.startswith("|") and not is_table_rule(line) and header:
            out[" ".join(line.replace("*", "").split())] = header
    return out


HAVE_FORM = re.compile(HAVE)  # a form of *have* before a verb: a participle should follow


def past_not_participle(cells: list[str], header: list[str]) -> set[str]:
    """The one-word past simple forms of a verb row that are not also its participle, by the
    columns its header names ("Past simple", "Past participle"); none outside a verb table.
    Example: past_not_participle(["write", "wrote", "written"],
                                 ["Base form", "Past simple", "Past participle"]) -> {"wrote"}"""
    names = [set(tokenize(h)) for h in header]
    past = next((j for j, n in enumerate(names) if "past" in n and "participle" not in n), None)
    part = next((j for j, n in enumerate(names) if "participle" in n), None)
    if past is None or part is None or max(past, part) >= len(cells):
        return set()
    forms = [{f.strip().lower() for f in cells[j].split("/")} for j in (past, part)]
    return {f for f in forms[0] - forms[1] if HEADWORD.fullmatch(f)}


class RowIndex:
    """The KB's tables read as dictionaries: a row whose first cell is one word is keyed by it.

    A question naming a key and a column of its table ("past of swim": key *swim*, column *Past
    simple*) looks the row up, however many chunks mention *swim*. Columns: the header's words
    of 3+ letters outside the first column (a chunk that starts inside a table has its header in
    metadata["table_header"]). An arrow is a row too: "big → bigger" is keyed by *big*, and its
    columns are the names of the form it gives (forms.FORM_NAMES: "comparative"); an arrow whose
    form has no name by its shape ("go → went") has no columns, and only a gap's cue finds it
    ("they ___ (go)": any of the cue's forms may fill the gap). So is a
    mistake the KB strikes out: a question that quotes "~~I have went~~" word for word looks up
    its chunk, as "past of swim" looks up the *swim* row. A quote of one word is a key only if
    the KB never writes that word unstruck: a misspelling ("~~buyed~~"), not a real word used
    wrongly ("~~come~~" for *came*), which questions also use rightly. And a verb table's past
    simple that is not also its participle ("wrote", not "cut") is keyed for the question that
    puts it after *have* ("she has wrote three books"): the row shows the participle it wants.
    A word the KB never writes (outside a strike-out) finds the keys it shares a stem with
    (forms.stem) or may have been given a regular ending from (forms.bases): "tooths" the
    *tooth* row, "teached" the *teach* row, "oxes" the *ox* row, "danceing" the *dance →
    dancing* arrow, whatever their columns, for a learner's own wrong form of a word is a
    question about that word's row.
    `lookup` is the hybrid's third list (rows=True)."""

    def __init__(self, chunks: list[Chunk]):
        self.chunks = chunks
        self.keys: dict[str, list[tuple[int, frozenset[str]]]] = {}  # key -> (chunk, columns)
        self.mistakes: dict[str, list[tuple[tuple[str, ...], int]]] = {}  # word 1 -> (quote, chunk)
        self.after_have: dict[str, list[int]] = {}  # a past simple that is no participle -> chunks
        self.written = {w for c in chunks for w in tokenize(STRUCK.sub(" ", c.text))}
        for i, c in enumerate(chunks):
            for m in STRUCK.finditer(c.text):
                quote = tuple(tokenize(m.group(1)))
                if len(quote) >= 2 or (len(quote) == 1 and quote[0] not in self.written):
                    self.mistakes.setdefault(quote[0], []).append((quote, i))
            for row, header in row_headers(c.text, c.metadata.get("table_header", "")).items():
                if HEADWORD.fullmatch(key := table_cells(row)[0].lower()):
                    columns = tokenize(" ".join(table_cells(header)[1:]))
                    self.keys.setdefault(key, []).append(
                        (i, frozenset(w for w in columns if len(w) >= 3)))
                for past in past_not_participle(table_cells(row), table_cells(header)):
                    self.after_have.setdefault(past, []).append(i)
            regular = regular_forms(c.text, c.doc_id)
            for word, _, kind in regular:
                if HEADWORD.fullmatch(key := word.lower()):
                    self.keys.setdefault(key, []).append((i, FORM_NAMES[kind]))
            named = {(w, f) for w, f, _ in regular}
            for word, form in arrows(c.text):
                if (word, form) not in named and HEADWORD.fullmatch(key := word.lower()):
                    self.keys.setdefault(key, []).append((i, frozenset()))
        self.by_stem: dict[str, list[str]] = {}  # forms.stem(key) -> keys
        for key in self.keys:
            self.by_stem.setdefault(stem(key), []).append(key)

    def keys_of_form(self, word: str) -> list[str]:
        """The keys `word` (a form the KB never writes) may be a form of: those that share its
        stem, then those among the words its regular ending may have been added to (forms.bases:
        "oxes" *ox*, "danceing" *dance*, "springed" *spring*, "fliing" *fly*, which the stemmer
        cuts otherwise).
        Example, with rows keyed *ox* and *spring*: keys_of_form("oxes") -> ["ox"]"""
        keys = list(self.by_stem.get(stem(word), ()))
        end = ending(word)
        if end is not None:
            keys += sorted(k for k in bases(word, end) if k in self.keys and k not in keys)
        return keys

    def lookup(self, query: str, idf) -> list[Chunk]:
        """Chunks with a row keyed by a query word whose table's columns the query names (or
        whose arrow gives a kind of form it asks for: "he/she" asks the -s form, whose names
        are "third person", forms.asked_kinds), or keyed by a fill-in's cue, whatever its
        columns (a gap asks for one of its cue's forms), rarest key first (`idf(word)`,
        BM25's); and chunks that strike out a phrase the query quotes, weighed by the sum of
        its words' idf; and the rows of a verb whose past simple, no participle, follows a form of
        *have* ("she has wrote": the commonest verb mistake asks for the participle's row);
        and the rows keyed by a word a query word the KB never writes is a form of ("tooths":
        *tooth*, "oxes": *ox*, `keys_of_form`), weighed by the key's idf; ties in KB order."""
        tokens = tokenize(query)
        words, cues = set(tokens), set(cue_words(query))
        named = words.union(*(FORM_NAMES[k] for k in asked_kinds(query)))
        best: dict[int, float] = {}  # chunk index -> the weight of its best matching key
        for w in words:
            for i, columns in self.keys.get(w, ()):
                if w in cues or columns & named:
                    best[i] = max(best.get(i, 0.0), idf(w))
        for a, w in zip(tokens, tokens[1:]):  # "she has wrote": the participle's slot
            if HAVE_FORM.fullmatch(a):
                for i in self.after_have.get(w, ()):
                    best[i] = max(best.get(i, 0.0), idf(w))
        for a, w in enumerate(tokens):
            for quote, i in self.mistakes.get(w, ()):
                if tuple(tokens[a:a + len(quote)]) == quote:
                    best[i] = max(best.get(i, 0.0), math.fsum(idf(t) for t in quote))
        for w in words:  # "tooths": a form the KB never writes, of a word it has a row for
            if len(w) >= MIN_UNWRITTEN and w not in self.written and w not in self.keys:
                for key in self.keys_of_form(w):
                    for i, _ in self.keys[key]:
                        best[i] = max(best.get(i, 0.0), idf(key))
        return [self.chunks[i] for i in sorted(best, key=lambda i: (-best[i], i))]
