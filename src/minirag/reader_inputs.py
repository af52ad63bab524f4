"""The reader's inputs: what training and reading both compute from a compact prompt's ids.

What it is: `windows` (the token ranges an answer may come from, one per chunk), `columns`
(TAPAS-style: which table cell each token sits in) and `in_question` (DrQA's exact-match flag:
this context word is also a question word), joined in `token_types`, the one id per token the
reader's trunk embeds; two readings of a window's text the reader's answer rules need,
`struck_out` (the KB's "~~wrong~~" forms) and `inside_word`; and the readings of the question
(`question_of`: a compact prompt's question, read back from its ids; `offers_choice`,
`choice_sides`, `has_gap`: what kind of question it is). Training builds its batches with
them (training/reader_train.py), the Reader its inputs at reading time (reader.py).
What it leaves out: the model (minimodel.SpanReader) and the answer rules (reader.py).
Why: theory/07, "Column embeddings" and "Question-match flags".
"""

from __future__ import annotations

import re

from minirag.files.special_tokens import CTX, MARKERS, A, Q
from minirag.forms import stem
from minirag.prompt import STOPWORDS

N_COLUMNS = 8  # table-column ids: 0 (not in a table row), 1 .. 7 (the k-th cell)
# a word of `in_question`: letters and digits, unlike bm25's \w, so a fill-in's "___" is no word
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
STOPWORD_STEMS = frozenset(stem(w) for w in STOPWORDS)
# The words of a verb group before its main verb ("had left", "will have finished", "haven't
# been sleeping"): the answer to a gap that starts at the verb takes them (reader.Reader._widen)
AUXILIARIES = frozenset("""am is are was were be been being have has had do does did will would
    shall should can could may might must not isn't aren't wasn't weren't haven't hasn't hadn't
    don't doesn't didn't won't wouldn't shan't shouldn't can't couldn't mustn't needn't""".split())


def holds_run(words: list[str], run: list[str]) -> bool:
    """Is `run` a contiguous run of `words`?
    Example: holds_run(["a", "big", "box"], ["big", "box"]) -> True"""
    return any(words[i:i + len(run)] == run for i in range(len(words) - len(run) + 1))


def content_stems(text: str) -> set[str]:
    """The stems (forms.stem) of a text's words that are no stopword's, apostrophes dropped as
    learners drop them: what two texts must share to be about the same thing.
    Example: content_stems("Verbs ending in -c") -> {"verb", "end", "c"}"""
    return {stem(w) for w in WORD.findall(text.lower().replace("'", ""))} - STOPWORD_STEMS


def windows(ids: list[int], tokenizer) -> list[tuple[int, int]]:
    """(lo, hi) token ranges of the chunk windows in a compact prompt, in marker order."""
    marker_ids = {tokenizer.encode_special(m)[0] for m in MARKERS}
    stops = {tokenizer.encode_special(t)[0] for t in (CTX, A)}
    # a window runs from its marker to the next <|ctx|> or <|a|>, or to the end
    return [(i + 1, next((j for j in range(i + 1, len(ids)) if ids[j] in stops), len(ids)))
            for i, t in enumerate(ids) if t in marker_ids]


def pieces_of(ids: list[int], tokenizer) -> list[str]:
    """Each token's visible text; a special token (<|q|>, <|ctx|>, a marker) is a line break."""
    specials = set(tokenizer.special_ids.values())
    return ["\n" if t in specials else tokenizer.vocab[t].decode("utf-8", errors="replace")
            for t in ids]


def first_chars(pieces: list[str]) -> list[int]:
    """The text offset of each token's first visible character (its last one if all blank)."""
    out, pos = [], 0
    for p in pieces:
        out.append(pos + min(len(p) - len(p.lstrip()), max(0, len(p) - 1)))
        pos += len(p)
    return out


def columns(ids: list[int], tokenizer, n_columns: int = N_COLUMNS, pieces=None) -> list[int]:
    """The table column each token of a compact prompt sits in: 0 outside a table row, k
    inside the k-th cell of one (capped at n_columns - 1), counted from the row's first "|".

    Example: the window "| go | went | gone |" -> "|" 1, " go" 1, " |" 2, " went" 2, ...
    A row's column is what separates "went" from "gone"; the reader gets it as an input
    embedding (as TAPAS does for table QA) instead of counting bars with attention.
    `pieces`: the ids already decoded (`pieces_of`), if the caller has them.
    """
    pieces = pieces_of(ids, tokenizer) if pieces is None else pieces
    text = "".join(pieces)
    col = [0] * (len(text) + 1)  # per character
    pos = 0
    for line in text.split("\n"):
        if line.lstrip().startswith("|"):  # a table row
            bars = 0
            for i, ch in enumerate(line):
                bars += ch == "|"
                col[pos + i] = min(bars, n_columns - 1)
        pos += len(line) + 1
    return [col[i] for i in first_chars(pieces)]  # a token's column: its first character's


def in_question(ids: list[int], tokenizer, pieces=None, stems: bool = False) -> list[int]:
    """1 for a context token whose word (lowercased) is also a word of the question, else 0.

    Example: "<|q|>past of sit<|ctx|><|#1|>| sit | sat | sat |" -> 1 on " sit" only.
    DrQA's exact-match feature: the reader is told where the question's key sits in the
    context, so finding "sit" in the table is not a skill it must learn (or memorise) per verb.
    With `stems` (reading time only; training flags exact words), a question word of 4+
    letters, no stopword, that the context lacks flags the context words of its stem
    (forms.stem, DrQA's lemma match): "i buyed shoes" flags the "buy" of "| buy | bought |".
    """
    ctx = tokenizer.encode_special(CTX)[0]
    if ctx not in ids:
        return [0] * len(ids)  # no context: nothing to flag
    pieces = pieces_of(ids, tokenizer) if pieces is None else pieces
    text = "".join(pieces).lower()
    word_at = [""] * (len(text) + 1)  # per character: the word it is part of
    for m in WORD.finditer(text):
        word_at[m.start():m.end()] = [m.group()] * (m.end() - m.start())
    starts = first_chars(pieces)
    q_end = ids.index(ctx)
    question = {word_at[c] for c in range(starts[q_end])} - {""}
    shown = {word_at[c] for c in starts[q_end:]}
    lacking = {stem(w) for w in question - shown - STOPWORDS if len(w) >= 4} if stems else set()
    flagged = question | {w for w in shown - {""} if lacking and stem(w) in lacking}
    return [int(i > q_end and word_at[c] in flagged) for i, c in enumerate(starts)]


def token_types(ids: list[int], tokenizer, n_columns: int = N_COLUMNS,
                stems: bool = False) -> list[int]:
    """The reader's token-type ids: column + n_columns * in_question, in [0, 2 * n_columns)."""
    pieces = pieces_of(ids, tokenizer)  # decoded once for both features
    return [c + n_columns * m for c, m in zip(columns(ids, tokenizer, n_columns, pieces),
                                              in_question(ids, tokenizer, pieces, stems))]


def inside_word(text: bytes, at: int) -> bool:
    """Is the boundary before byte `at` of `text` inside a word? It is between two letters,
    and around a hyphen or an apostrophe with a letter on each side ("mother|-in-law",
    "in-|law", "didn|'t"); not before "'" that ends a quote or "-" that starts "-ing".
    Example: inside_word(b"in-law", 2) -> True; inside_word(b" -ing", 1) -> False"""
    letter = lambda j: 0 <= j < len(text) and text[j:j + 1].isalpha()  # noqa: E731
    joiner = lambda j: 0 <= j < len(text) and text[j:j + 1] in (b"-", b"'")  # noqa: E731
    return ((letter(at - 1) and letter(at)) or (joiner(at) and letter(at - 1) and letter(at + 1))
            or (joiner(at - 1) and letter(at - 2) and letter(at)))


def struck_out(pieces: list[str]) -> list[bool]:
    """Per token of one window (its decoded pieces): is it struck-out text or a "~~" mark?
    The KB strikes a wrong form through (LABELLING.md: "~~I have went~~ → I have gone"). A mark
    opens when a word follows it ("~~went") and closes otherwise ("went~~,"); a window may be
    cut inside a struck phrase, so a first mark that closes strikes everything before it.
    Example: pieces of "~~, ~~buyed~~ → bought" -> True for "~~", "buyed", "~~" and the first
    "~~" only."""
    text = "".join(pieces)
    owner = [i for i, p in enumerate(pieces) for _ in p]  # [characters] -> token index
    out, start = [False] * len(pieces), None  # start: where the open struck text began
    for n, m in enumerate(re.finditer("~~", text)):
        nxt = text[m.end():m.end() + 1]
        # an opening mark: a word follows it, or it ends the text with no mark open (the
        # window was cut inside what it strikes); the last mark of "~~hot → hoter~~" closes
        if (nxt and (nxt.isalnum() or nxt in "'\"")) or (not nxt and start is None):
            start = m.start()
            continue
        a = start if start is not None else (0 if n == 0 else m.start())
        for c in range(a, m.end()):
            out[owner[c]] = True
        start = None
    for c in range(start if start is not None else len(text), len(text)):
        out[owner[c]] = True  # struck to the window's end
    return out


# Two options offered: "went or gone?", "a vs b", "x / y" (the frames of choice_data.py)
_CHOICE = re.compile(r"(?<=\S)\s+(?:or|vs\.?|versus)\s+(?=\S)|(?<=\S)\s+/\s+(?=\S)",
                     re.IGNORECASE)


def offers_choice(question: str) -> bool:
    """Does the question offer two options to choose from? The questions the choice adapter
    was trained on, and the only ones it is applied to (reader.ROUTES).
    Example: offers_choice("went or gone?") -> True; offers_choice("past of go") -> False"""
    return bool(_CHOICE.search(question))


def choice_sides(question: str) -> tuple[str, str]:
    """The text before and after the word that offers the choice ("or", "vs", "/"); the whole
    question and "" when it offers none.
    Example: choice_sides("went or gone?") -> ("went", "gone?")"""
    return (*_CHOICE.split(question, 1), "")[:2]


def has_gap(question: str) -> bool:
    """Does the question hold a gap to fill, two or more underscores ("she ___ (go) home")?
    Example: has_gap("we ___ (swim) yesterday") -> True; has_gap("past of swim") -> False"""
    return "__" in question


def question_of(ids: list[int], tokenizer) -> str:
    """The question of a compact prompt's ids: the text between <|q|> and the first
    <|ctx|> (or <|a|>, with no context)."""
    q, stops = tokenizer.encode_special(Q)[0], {tokenizer.encode_special(t)[0] for t in (CTX, A)}
    start = ids.index(q) + 1 if q in ids else 0
    end = next((i for i in range(start, len(ids)) if ids[i] in stops), len(ids))
    return tokenizer.decode(ids[start:end])
