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
What it leaves out: a row described in words none of its cells use ("the bit before happy that
flips it" for `| un- | not | unhappy |`), a description two rows share ("bread": a slice of, a
loaf of), and a table whose header row no window shows.
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.prompt import STOPWORDS
from minirag.reader_inputs import WORD, content_stems
from minirag.tables import headed_rows
from minirag.verb_groups import only_one


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
