"""A table read backwards: the first cell of the row a question describes.

What it is: the span reader reads a table forwards, from a row's first cell to the column a
question names ("past of swim": the *swim* row, "Past simple"). `described_key(windows,
headers, question)` reads it the other way: a question that names a table's first column
("which pronoun means possession?" names "Pronoun" of `| Pronoun | Used for | Example |`)
and shares a word with another cell of one row ("possession", `| whose | possession | ... |`)
is answered with that row's first cell ("whose"), where one row alone fits. The column a
question names is the one whose header says most of its words (`forms.column_names`, as
`forms.other_columns` reads it); a header's own words describe no row. The reader uses it where
its model abstains (reader.py).
`given_key(windows, question)` reads it back from a cell the question gives whole: "sought is
the past of which verb?" beside `| seek | sought | sought |` -> "seek", "what's the singular of
vertebrae" -> "vertebra", "'the following week' replaces what?" -> "next week" (a cell's
alternatives, split at "/", count one by one); no header needed, since the question asks for
the row's entry, whatever its column is called.
What it leaves out: a row described in words none of its cells use ("the bit before happy that
flips it" for `| un- | not | unhappy |`), a description two rows share ("bread": a slice of, a
loaf of), a table whose header row no window shows (`described_key`), and a cell the question
holds by chance ("which pronoun shows possession? ... his car" beside the *he* row: "he";
"spread: which form for finished actions?" beside `| he / she / it | has | finished |`).
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.definitions import MEANING
from minirag.mistakes import asks_verdict
from minirag.prompt import STOPWORDS
from minirag.reader_inputs import (
    AUXILIARIES,
    WORD,
    content_stems,
    has_gap,
    holds_run,
    offers_choice,
)
from minirag.tables import headed_rows, table_cells, whole_row
from minirag.verb_groups import only_one, unstruck

WH = re.compile(r"\bwh?at|\bwhich\b")  # "what", "whats", "wat", "which": a word is asked for


def described_key(windows: list[str], headers: dict[str, str], question: str
                  ) -> tuple[int, str, str] | None:
    """(window index, a row's first cell, its other cells' words the question shares by stem)
    for a question that names the first column of the row's table best (`headers`: a shown row
    -> its header row, Prompt.headers); None when no row fits or two rows' first cells do.
    Example: row = "| whose | possession | the girl whose bike was stolen |";
        described_key([row], {row: "| Pronoun | Used for | Example |"},
                      "which pronoun means possession?") -> (0, "whose", "possession")"""
    asked = set(re.findall(r"[a-z]+", question.lower())) - STOPWORDS  # "Used for" names "used"
    wanted = content_stems(question)
    found: dict[str, tuple[int, str, str]] = {}
    for n, cells, names, header in headed_rows(windows, headers):
        said = [len(ns & asked) for ns in names]
        if not said[0] or max(said[1:], default=0) >= said[0]:
            continue  # the question names another column as much, or the first not at all
        rest = " ".join(cells[1:]).lower()
        shared = wanted & content_stems(rest) - content_stems(header)
        if shared and not content_stems(cells[0]) & wanted:  # the key is what is asked
            said = [w for w in dict.fromkeys(WORD.findall(rest)) if content_stems(w) & shared]
            found.setdefault(cells[0].lower(), (n, cells[0], " ".join(said)))
    return only_one(found)


def given_key(windows: list[str], question: str) -> tuple[int, str, str] | None:
    """(window index, a row's first cell, the cell the question gives) for a "what" / "which"
    question that holds one of a whole row's later cells (or one of a cell's alternatives split
    at "/") as a run of its words, not stopwords or one auxiliary only, and none of the row's
    first cell; None when no row fits, two rows' first cells do, or the question has a gap,
    offers a choice, asks a verdict or a meaning (those give a cell for other reasons).
    Struck-out text is no cell.
    Example: given_key(["| seek | sought | sought |"], "sought is the past of which verb?")
        -> (0, "seek", "sought")"""
    q = question.lower()
    if not WH.search(q) or has_gap(question) or offers_choice(question) \
            or asks_verdict(question) or MEANING.search(q):
        return None
    asked = WORD.findall(q)
    found: dict[str, tuple[int, str, str]] = {}
    rows = [(n, table_cells(line)) for n, window in enumerate(windows)
            for line in unstruck(window).splitlines() if whole_row(line)]
    for n, cells in rows:
        key = WORD.findall(cells[0].lower()) if cells else []
        if len(cells) < 2 or not key or holds_run(asked, key):
            continue
        for given in (alt.strip() for cell in cells[1:] for alt in cell.split("/")):
            words = WORD.findall(given.lower())
            plain = set(words) - STOPWORDS  # one auxiliary alone is grammar the question uses
            if (plain - AUXILIARIES or len(words) > 1 and plain) \
                    and holds_run(asked, words):  # ("the form after had")
                found.setdefault(cells[0].lower(), (n, cells[0], given))
    return only_one(found)
