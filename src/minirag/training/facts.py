"""Facts a reader can be taught to find: table rows, arrows, corrections, gaps and cloze lines.

What it is: the structured statements of the KB, each tied to the chunk that states it, for
building reading-comprehension examples (reader_data.py). A table row gives one fact per
column ("drink" -> Past simple -> "drank"); "work → working" is an arrow fact; "~~I have
went~~ → I have gone" a correction (the KB strikes through every wrong form: LABELLING.md); a
sentence that uses a verb form is a gap fact ("The choir had ___ (sing)." -> "sung"); any other
sentence can be a cloze (a word to fill in).
Also the held-out verbs: a fixed list that reader training never sees (issue: the reader must
read, not remember), and `scrub`, which removes every line that mentions them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minirag.chunk import Chunk
from minirag.prompt import STOPWORDS, units

# 27 irregular verbs whose forms never appear in reader training, as answer or distractor:
# held-out exact match measures reading, because memorising them was impossible.
HELD_OUT_VERBS = (
    "creep", "weep", "sweep", "bleed", "breed", "flee", "seek", "cling", "fling", "sling",
    "sting", "swing", "wring", "shrink", "stink", "swear", "weave", "freeze", "forbid",
    "forgive", "arise", "shake", "tread", "spin", "steal", "dig", "drink")
VERB_HEADER = ("base form", "past simple", "past participle")


@dataclass(frozen=True)
class Fact:
    kind: str  # "verb", "table", "arrow", "correction", "gap", "cloze" or "prose" (prose_facts)
    key: str  # what a question names: a verb, a noun, a wrong sentence, a gapped line
    relation: str  # a column name ("Past participle"), or the kind of a fact that is no cell
    answer: str  # the words the reader should copy; they occur in `line`
    line: str  # the unit of the chunk that states the fact (prompt.units form)
    chunk: Chunk  # the chunk that contains the line
    raw: str = ""  # the line exactly as in chunk.text (table facts: rewritten for counterfactuals)
    column: int = 0  # table fact: its cell as reader_inputs.columns numbers it (key = 1); 0: prose


def split_cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def first_alternative(cell: str) -> str:
    """"good (adjective)" -> "good"; "learnt / learned" -> "learnt"."""
    return re.split(r"\s*[/(]", cell, maxsplit=1)[0].strip()


def table_facts(chunk: Chunk) -> list[Fact]:
    """One fact per (row, column) of the table rows in a chunk (first column = key)."""
    header = chunk.metadata.get("table_header", "")
    facts = []
    for line in chunk.text.splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        if not header or line == header:
            header = line if not header else header
            continue
        names, cells = split_cells(header), split_cells(line)
        if len(cells) != len(names) or len(cells) < 2:
            continue
        key = first_alternative(cells[0]).lower()
        kind = "verb" if tuple(n.lower() for n in names) == VERB_HEADER else "table"
        shown = units(line)[0] if units(line) else line
        facts += [Fact(kind, key, name, cell, shown, chunk, line, column)
                  for column, (name, cell) in enumerate(zip(names[1:], cells[1:]), start=2)
                  if cell and key]
    return facts


_ARROW = re.compile(r"([A-Za-z][A-Za-z']*(?: [A-Za-z']+)?) → ([A-Za-z][A-Za-z']*(?: [A-Za-z']+)?)")
_CORRECTION = re.compile(r"~~([^~]{3,60})~~\s*→\s*([^.;~]{2,60})")


def line_facts(chunk: Chunk) -> list[Fact]:
    """Arrow, correction and mistake facts in the lines of a chunk, table rows included: a
    spelling table's row "| double the consonant | stop → stopping, swim → swimming |" holds
    two arrows."""
    facts = []
    for u in units(chunk.text):
        for wrong, right in _CORRECTION.findall(u):
            facts.append(Fact("correction", wrong.strip(" .,"), "correction",
                              right.strip(" .,"), u, chunk))
        for a, b in _ARROW.findall(u.replace("~~", "")):
            if a.lower() != b.lower():
                facts.append(Fact("arrow", a, "arrow", b, u, chunk))
    return facts




def unwrapped(text: str) -> str:
    """Markdown with each wrapped list item on one line (a continuation line is indented)."""
    return re.sub(r"\n[ \t]+", " ", text)


WORD = re.compile(r"[A-Za-z][a-z']{2,}")


def cloze_facts(chunk: Chunk, stopwords: frozenset[str]) -> list[Fact]:
    """Each prose sentence of 5-12 words (short enough to be shown whole in a prompt), with
    one word that occurs in it once as the gap."""
    facts = []
    for u in units(chunk.text):
        words = u.split()
        if u.startswith("|") or not 5 <= len(words) <= 12:
            continue
        cands = [w for w in WORD.findall(u) if w.lower() not in stopwords
                 and len(re.findall(rf"\b{re.escape(w)}\b", u)) == 1]
        facts += [Fact("cloze", u.replace(w, "___", 1), "cloze", w, u, chunk) for w in cands]
    return facts


def held_out_forms(verb_facts: list[Fact]) -> frozenset[str]:
    """Every form of every held-out verb, lowercase (alternatives split)."""
    forms = set(HELD_OUT_VERBS)
    for f in verb_facts:
        if f.key in HELD_OUT_VERBS:
            forms.update(a.strip().lower() for a in f.answer.split("/"))
    return frozenset(forms)


def mentions(text: str, forms: frozenset[str]) -> bool:
    return any(w in forms for w in re.findall(r"[a-z']+", text.lower()))


def scrub(text: str, forms: frozenset[str]) -> str:
    """The text without any line that mentions one of `forms` (a held-out verb's)."""
    return "\n".join(line for line in text.split("\n") if not mentions(line, forms))


def mention_facts(verb_facts: list[Fact], chunks: list[Chunk]) -> list[Fact]:
    """Verb facts restated by prose: a sentence that names both the verb and the form
    ("keep, kept" in "Many verbs shorten the vowel (keep, kept)") teaches the reader that a
    fact need not sit in a table row."""
    by_word: dict[str, list[tuple[str, Chunk]]] = {}
    for c in chunks:
        for u in units(c.text):
            if not u.startswith("|"):
                for w in set(re.findall(r"[a-z']+", u.lower())):
                    by_word.setdefault(w, []).append((u, c))
    out = []
    for f in verb_facts:
        answer = first_alternative(f.answer).lower()
        for u, c in by_word.get(f.key, []):
            if answer != f.key and re.search(rf"\b{re.escape(answer)}\b", u.lower()):
                out.append(Fact("verb", f.key, f.relation, first_alternative(f.answer), u, c))
    return out


def gap_facts(chunk: Chunk, bases: dict[str, str]) -> list[Fact]:
    """Each prose sentence of 4-16 words that uses an inflected form of `bases` (form -> base
    form), with that form as a gap and its base as the hint: "Come at six; the choir will have
    sung by then." -> "Come at six; the choir will have ___ (sing) by then." -> "sung". A line with
    a struck-through wrong form is not used, nor a line with an arrow (it names forms, it does
    not use them)."""
    facts = []
    for u in units(unwrapped(chunk.text)):
        if u.startswith("|") or "→" in u.removeprefix("→ ") or "~~" in u:
            continue
        u = u.removeprefix("→ ").removeprefix("- ")
        said = u.rsplit(": ", 1)[-1].strip('"')  # "Facts about people: He works in a bank."
        u = said if len(said.split()) >= 4 else u
        if not 4 <= len(u.split()) <= 16:
            continue
        for form in dict.fromkeys(re.findall(r"[a-z']+", u)):
            base = bases.get(form)
            if base and len(re.findall(rf"\b{re.escape(form)}\b", u)) == 1:
                gapped = re.sub(rf"\b{re.escape(form)}\b", f"___ ({base})", u)
                facts.append(Fact("gap", gapped, "gap", form, u, chunk))
    return facts


def base_forms(verb_facts: list[Fact], arrow_facts: list[Fact]) -> dict[str, str]:
    """Inflected form -> base form, from the verb tables ("drank" -> "drink") and from the
    one-word arrows that add an ending ("stopping" -> "stop"). Function words ("was", "did")
    are left out: they are everywhere, and a gap on them teaches nothing about a table."""
    bases: dict[str, str] = {}
    for f in verb_facts:
        for form in f.answer.lower().split("/"):
            bases.setdefault(form.strip(), f.key)
    for f in arrow_facts:
        a, b = f.key.lower(), f.answer.lower()
        if " " not in a + b and b[:2] == a[:2] and b.endswith(("s", "ed", "ing")):
            bases.setdefault(b, a)
    return {form: base for form, base in bases.items()
            if form != base and form and form not in STOPWORDS}


def all_facts(chunks: list[Chunk]) -> dict[str, list[Fact]]:
    """Every fact of the chunks by kind: "verb", "table", "arrow", "correction",
    "cloze" (in chunk order), "mention" (verb facts restated by prose, mention_facts) and
    "gap" (a form used in a sentence, gap_facts)."""
    facts: dict[str, list[Fact]] = {k: [] for k in ("verb", "table", "arrow", "correction",
                                                   "cloze")}
    for c in chunks:
        for f in table_facts(c) + line_facts(c) + cloze_facts(c, STOPWORDS):
            facts[f.kind].append(f)
    facts["mention"] = mention_facts(facts["verb"], chunks)
    bases = base_forms(facts["verb"], facts["arrow"])
    facts["gap"] = [f for c in chunks for f in gap_facts(c, bases)]
    return facts
