"""What a term means, read where the KB defines it.

What it is: `asked_term` reads the term a question asks the meaning of ("whats a bare
infinitive", "what does used to mean", "priceless meaning", "give up - meaning pls", "dis as a
prefix, what does it mean", "whats the prefix il for", "principle, with -ple at the end, what
does it mean", or the one phrase a "what does that mean" quotes); `defining_words` finds, in
a prompt's windows, the words the KB defines that term with, in the few shapes the KB writes
definitions:
  - a clause that starts with the term and a defining verb: "A gerund is the -ing form used as
    a noun: ..." -> "the -ing form used as a noun"; "A stative verb describes a situation ..."
    -> "describes a situation ...";
  - a clause that calls the term a word class "meaning" something: "loose /luːs/ is an
    adjective meaning "not tight"" -> "not tight" (its sounds may follow the term);
  - the term, an equals sign and its gloss, in a list of them: "lately = recently", "put off =
    postpone, find out = discover" -> "postpone" (the first item; a remark in brackets may
    follow the term);
  - the term and a colon at a line's start: "- Perfect: the action before ..." (also with a
    pattern between: "be about to + base form: something will happen very soon: ...");
  - the term's table row, the term its first cell: "| must have done | I'm sure it happened |",
    the whole cell under a column named "meaning" where the row's header has one ("| -ment |
    verb | an action or its result |" under "| Suffix | Added to | Meaning | Examples |"); an
    affix asked without its hyphen or after "the prefix" keys it all the same;
  - the term and a gloss in brackets: "stationery (paper, pens)", "I'm beat (= very tired)";
  - a clause that names the term in brackets at its end: "Do not join two complete sentences
    with only a comma (a comma splice)".
The reader answers with them before its model (reader.py): the span reader, trained mostly on
table facts, abstains on most definitions it is shown.
What it leaves out: a definition spread over sentences, a term the KB defines in other words
than the question's (a synonym, a paraphrase), a question that names the idea and asks for its
term (the span reader's to read).
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.forms import column_names
from minirag.prompt import STOPWORDS
from minirag.reader_inputs import content_stems
from minirag.tables import table_cells

# How a question asks the meaning of a term (lowercased; `term` is cleaned by `asked_term`)
ASKS = (
    re.compile(r"\bmean by (?P<term>[^?,;:]+)"),  # before "what do people mean"
    re.compile(r"\bwh?at (?:does|do|did) it mean to (?P<term>[^?,;:]+)"),  # "... to call off"
    re.compile(r"\bwh?at (?:does|do|did) (?P<term>.+?) (?:actually |really |exactly )?mean\b"),
    re.compile(r"\b(?:meaning|definition) of (?P<term>[^?,;:]+)"),
    re.compile(r"^(?:so |and |ok )?wh?at(?:'s|s| is| are) (?P<term>[^?,;:]+?) (?:used )?"
               r"for\s*(?:[?,;:.]|$)"),  # "whats the prefix il for, eg ...": what it is for
    re.compile(r"^(?:so |and |ok )?wh?at(?:'s|s| is| are) (?P<term>[^?,;:]+)"),
    # "X meaning? like ...", not a gloss: "ill (meaning sick)"
    re.compile(r"^(?P<term>[^?,;:]+?)\W*(?<!\()\b(?:meaning|definition)\b"),
    # the term first, then "what does it mean" or "what's it for"
    re.compile(r"^(?P<term>[^?,;:]+?)[\s,;:-]+wh?at(?:'s|s| is| does| do) (?:it|that|this) "
               r"(?:mean|for)\b"),
    # ... or with a remark between: "principle, with -ple at the end, what does it mean?"
    re.compile(r"^(?P<term>[^?,;:.]+?)[,;:]\s[^?]*\bwh?at(?:'s|s| is| does| do) (?:it|that|this) "
               r"(?:mean|for)\b"),
    re.compile(r"^define (?P<term>[^?,;:]+)"),
)
# words around a term that are no part of it: "the word 'priceless'", "a gerund in grammar"
LEAD = re.compile(r"^(?:(?:a|an|the)\s+)?(?:(?:word|phrase|expression|term|idiom|phrasal verb|"
                  r"prefix|suffix|ending)"
                  r"\s+)?(?:(?:a|an|the)\s+)?")
TAIL = re.compile(r"\s+(?:-\s|(?:in|when|if|used|exactly|actually|please|pls|as a|as an|as in)\b"
                  r"|like\s+\S).*$")
# a word that names what kind of term it is, after it ("en suffix", "be about to mean")
KIND_AFTER = re.compile(r"\s+(?:prefix|suffix|ending|mean|means)$")
MAX_TERM_WORDS = 6
MEANING = re.compile(r"\b(?:mean|means|meaning|define|definition)\b")
# verbs by which a clause that starts with a term defines it: the answer keeps the verb
# ("A dynamic verb describes something that happens" -> "describes something that happens"),
# but not a copula ("A gerund is the -ing form ..." -> "the -ing form ...")
COPULA = r"(?:is|are|means|mean)"
DEFINING = r"(?:describes|describe|tells us|tell us|refers to|refer to|expresses|express|" \
           r"shows|show|names|name|ends in|end in)"
REMARK = r"(?:\s*\([^()\n]*\))?"  # a remark in brackets after the term: "towards (US: toward)"
SOUNDS = r"(?:\s*/[^/\n]{1,20}/)?"  # the term's sounds after it: "loose /luːs/ is ..."
# a line's start (after a list mark or not) or a sentence's
CLAUSE_START = r"(?:^[ \t]*(?:[-*\d.)]+[ \t]+)?|(?<=[.:;!?])\s+)"
CLAUSE_END = re.compile(r"[:;\n]|\.(?:\s|$)")
LIST_END = re.compile(r"[:;,\n]|\.(?:\s|$)")  # a definition in a list of them ends at a comma
# quotes around a term, not an apostrophe inside a word ("mustn't")
QUOTES = re.compile(r"[\"*]|(?<![a-z])'|'(?![a-z])")
QUOTED = re.compile(r"\"([^\"]+)\"|(?<![a-z])'(.+?)'(?![a-z])")  # a quoted phrase
IT_MEANS = re.compile(r"\bwh?at(?:'s|s| is| does| do) (?:it|that|this) mean\b")
GLOSSED = re.compile(r"(?:\bmeans?|\bmeaning|=)\s*$")  # a quote after it is a gloss, no term


def asked_term(question: str) -> str | None:
    """The term whose meaning a question asks, lowercase, without articles, quotes or a
    trailing "in grammar"; None if it asks no meaning, or the meaning of stopwords only ("so
    what does this mean"). To "what does it / that mean", the one phrase it quotes, if any.
    Example: asked_term("what is a 'bare infinitive' in grammar?") -> "bare infinitive" """
    q = question.lower().replace("’", "'")
    quoted = [m for m in QUOTED.finditer(q) if not GLOSSED.search(q[:m.start()])]
    term = (quoted[0].group(1) or quoted[0].group(2)).strip() if len(quoted) == 1 else ""
    if IT_MEANS.search(q) and set(term.split()) - STOPWORDS:
        return term  # 'he said "i'm beat". what does that mean'
    q = QUOTES.sub("", q).strip()
    for ask in ASKS:
        found = ask.search(q)
        if found:
            term = TAIL.sub("", LEAD.sub("", found.group("term").strip(" -")))
            if len(term.split()) > MAX_TERM_WORDS:  # kind word and all: "... the verb mean"
                continue
            term = KIND_AFTER.sub("", term)
            if set(term.split()) - STOPWORDS:
                return term
    return None


def meaning_term(question: str) -> str | None:
    """The term of a question that asks its meaning in so many words ("mean", "meaning",
    "define"), or None. Example: meaning_term("break up meaning") -> "break up" """
    return asked_term(question) if MEANING.search(question.lower()) else None


def off_its_line(line: str, term: str | None) -> bool:
    """Is `line` (the line of a window an answer was read from) silent about `term`, the
    `meaning_term` of its question? It holds not every word of the term but stopwords
    (compared by stem): what it says is about something else. No term, no verdict (False).
    Example: off_its_line("She broke the window.", "break up") -> True"""
    return term is not None and not content_stems(term) <= content_stems(line)


def _term(term: str) -> str:
    """A regex for the term as a window writes it: any case, any spaces, -s/-es on its last
    word, an article before it, a remark in brackets between its words ("dynamic (action)
    verb")."""
    words = [re.escape(w) for w in term.split()]
    words[-1] += r"(?:e?s)?"
    return r"(?:(?:a|an|the)\s+)?" + r"(?:\s+\([^()\n]*\))?\s+".join(words)


ROW = "row"  # the table-row shape of `defining_words`, read cell by cell (_row_definition)


def defining_words(window: str, term: str, headers: dict[str, str] | None = None) -> str | None:
    """The words `window` defines `term` with, in one of the shapes the module's docstring
    lists, as the window writes them; None if it defines it in none. A table row's definition
    is its whole cell under a column its header (`headers`: a shown row -> its header row,
    Prompt.headers) names "meaning", else the cell after the term's.
    Example: defining_words("- A gerund is the -ing form used as a noun: Reading relaxes me.",
        "gerund") -> "the -ing form used as a noun" """
    t = _term(term)
    shapes = (  # (pattern, where its definition ends)
        (rf"{CLAUSE_START}{t}{SOUNDS}\s+(?:is|are)\s+(?:also\s+)?an?\s+[a-z]+\s+meaning\s+"
         r"(?P<def>.+)", CLAUSE_END),  # before the copula's: "loose is an adjective meaning ..."
        (rf"{CLAUSE_START}{t}{SOUNDS}\s+{COPULA}\s+(?P<def>.+)", CLAUSE_END),
        (rf"{CLAUSE_START}{t}{REMARK}\s+(?P<def>{DEFINING}\s+.+)", CLAUSE_END),
        (rf"{CLAUSE_START}{t}{REMARK}\s*=\s*(?P<def>.+)", LIST_END),  # "a = b, c = d": "b"
        (rf"{CLAUSE_START}{t}(?:\s*\+[^:\n]*)?:\s*(?P<def>.+)", CLAUSE_END),
        (ROW, None),
        (rf"(?:^|[\s/,;])(?:{t})\s+\((?P<def>[^()\n]+)\)", CLAUSE_END),
        (rf"(?:^|[.:;]\s+|^[ \t]*[-*][ \t]+)(?P<def>[^.:;()\n]+?)\s*\({t}\)", CLAUSE_END),
    )
    for pattern, end in shapes:
        if pattern is ROW:
            words = _row_definition(window, t, headers or {})
        else:
            found = re.search(pattern, window, re.IGNORECASE | re.MULTILINE)
            words = end.split(found.group("def"), maxsplit=1)[0].strip(' |"=') if found else None
        if words:
            return words
    return None


def _row_definition(window: str, t: str, headers: dict[str, str]) -> str | None:
    """The cell that defines the term (regex `t`) in its table row: under the column the row's
    header names "meaning", else the next one; an affix's hyphen is optional ("il" keys "il-").
    A line may be a row's start (a prompt unit ends at a sentence inside a cell): only cells a
    "|" closes count."""
    for line in window.splitlines():
        if not line.strip().startswith("|"):
            continue
        cells = [c.replace("*", "").strip() for c in line.strip().split("|")[1:-1]]
        keys = [k.strip() for k in cells[0].split("/")] if cells else []  # "-able / -ible"
        if len(cells) < 2 or not any(re.fullmatch(rf"-?{t}-?", k, re.IGNORECASE) for k in keys):
            continue
        names = [column_names(n) for n in table_cells(headers.get(line.strip(), ""))]
        meaning = [j for j, ns in enumerate(names) if "meaning" in ns and len(names) == len(cells)]
        return cells[meaning[0] if meaning and meaning[0] > 0 else 1] or None
    return None


def defining_window(windows: list[str], question: str, headers: dict[str, str] | None = None
                    ) -> tuple[int, str, str] | None:
    """(window index, defining words, term) for a question that asks what a term means and the
    first of `windows` that defines it (`headers`: see defining_words); or None.
    Example: defining_window(["| might have done | perhaps it happened |"],
        "might have done meaning") -> (0, "perhaps it happened", "might have done")"""
    term = asked_term(question)
    if term is None:
        return None
    for n, window in enumerate(windows):
        words = defining_words(window, term, headers)
        if words is not None:
            return n, words, term
    return None
