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
alternatives, split at "/", count one by one), and from a form an arrow gives, "where does
driest come from?" beside "dry → drier → driest" -> "dry"; no header needed, since the
question asks for the entry, whatever its column is called.
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
from minirag.forms import arrows, asked_kinds, starts_like
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

# A word is asked for ("what", "whats", "wat", "which", "where ... come from"), or the word a form
# comes from is named ("relaxes base form pls", "singular of valleys", "sworn -> infinitive")
ASKS_KEY = re.compile(r"\bwh?at|\bwhich\b|\bwhere\b[^?]*\bcome from\b"
                r"|\b(?:base|dictionary|bare|root|singular|infinitive)\b")
MIN_ARROW_KEY = 3  # an arrow's key is a word: not a spelling's ending ("-ue → -uly")


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
    """(window index, an entry's key, the form the question gives) for a "what" / "which" /
    "where ... come from" question, or one that names the key's kind ("base form", "singular"),
    that holds one of an entry's later forms as a run of its words, not stopwords or one
    auxiliary only, and none of its key (ASKS_KEY). Entries: a whole table row (its first
    cell the key, each later cell and each of a cell's "/" alternatives a form) and
    an arrow ("dry → drier → driest": key "dry", 3 letters at least); a form's leading "the"
    may go unsaid ("farthest" gives "the farthest"). None when no entry fits, two keys do, or
    the question has a gap, offers a choice, asks a verdict or a meaning (those give a form for
    other reasons), or asks a form "of" a word (it reads forwards: "past of beseech? ... keeps
    coming up" gives no "come"). Struck-out text is no entry.
    Example: given_key(["| seek | sought | sought |"], "sought is the past of which verb?")
        -> (0, "seek", "sought")"""
    q = question.lower()
    asked = WORD.findall(q)
    forwards = asked_kinds(question) and any(
        a == "of" and b not in STOPWORDS for a, b in zip(asked, asked[1:]))
    if not ASKS_KEY.search(q) or forwards or has_gap(question) or offers_choice(question) \
            or asks_verdict(question) or MEANING.search(q):
        return None
    found: dict[str, tuple[int, str, str]] = {}
    for n, window in enumerate(windows):
        text = unstruck(window)
        pairs = [(cells[0], alt.strip()) for cells in (table_cells(ln) for ln in text.splitlines()
                                                        if whole_row(ln))
                 for cell in cells[1:] for alt in cell.split("/")]
        pairs += [(word, form) for word, form in arrows(text) if len(word) >= MIN_ARROW_KEY
                  and starts_like(word, form)]
        for key, given in pairs:
            keyed = WORD.findall(key.lower())
            words = WORD.findall(given.lower())
            words = words[1:] if words[:1] == ["the"] else words  # "the farthest"
            plain = set(words) - STOPWORDS  # one auxiliary alone is grammar the question uses
            if keyed and not holds_run(asked, keyed) and holds_run(asked, words) \
                    and (plain - AUXILIARIES or len(words) > 1 and plain):  # ("after had")
                found.setdefault(key.lower(), (n, key, given))
    return only_one(found)

