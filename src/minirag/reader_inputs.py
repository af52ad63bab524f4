"""The reader's inputs beside the token ids: where each chunk's window is, which table cell each
token sits in, and which context words the question also uses.

What it is: functions of a compact prompt's token ids (and the tokenizer that made them):
`windows` (the spans an answer may come from), `columns` (TAPAS-style cell ids), `in_question`
(DrQA's exact-match flag) and `token_types`, the one id per token the reader's trunk embeds.
Training (reader_data: which cell a gold span is in) and reading (reader) use the same ones.
What it leaves out: the model; how the types are embedded is MiniGPT's (`n_segments`).
Why, with the formulas: theory/07, "Column embeddings" and "Question-match flags".
"""

from __future__ import annotations

import re

from minirag.files.special_tokens import CTX, MARKERS, A

N_COLUMNS = 8  # table-column ids: 0 (not in a table row), 1 .. 7 (the k-th cell)
# A word of `in_question`: letters and digits only, unlike bm25.tokenize's \w, so the gap
# "___" of a fill-in question is not a word that could match a gap in a chunk.
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def windows(ids: list[int], tokenizer) -> list[tuple[int, int]]:
    """(lo, hi) token ranges of the chunk windows in a compact prompt, in marker order."""
    marker_ids = {tokenizer.encode_special(m)[0] for m in MARKERS}
    stops = {tokenizer.encode_special(t)[0] for t in (CTX, A)}
    out = []
    for i, t in enumerate(ids):
        if t in marker_ids:
            hi = next((j for j in range(i + 1, len(ids)) if ids[j] in stops), len(ids))
            out.append((i + 1, hi))
    return out


def _pieces(ids: list[int], tokenizer) -> list[str]:
    """Each token's visible text; a special token (<|q|>, <|ctx|>, a marker) is a line break."""
    specials = set(tokenizer.special_ids.values())
    return ["\n" if t in specials else tokenizer.vocab[t].decode("utf-8", errors="replace")
            for t in ids]


def _first_chars(pieces: list[str]) -> list[int]:
    """The text offset of each token's first visible character (its last one if all blank)."""
    out, pos = [], 0
    for p in pieces:
        out.append(pos + min(len(p) - len(p.lstrip()), max(0, len(p) - 1)))
        pos += len(p)
    return out


def columns(ids: list[int], tokenizer, n_columns: int = N_COLUMNS) -> list[int]:
    """The table column each token of a compact prompt sits in: 0 outside a table row, k
    inside the k-th cell of one (capped at n_columns - 1), counted from the row's first "|".

    Example: the window "| go | went | gone |" -> "|" 1, " go" 1, " |" 2, " went" 2, ...
    A row's column is what separates "went" from "gone"; the reader gets it as an input
    embedding (as TAPAS does for table QA) instead of counting bars with attention.
    """
    return _columns(_pieces(ids, tokenizer), n_columns)


def in_question(ids: list[int], tokenizer) -> list[int]:
    """1 for a context token whose word (lowercased) is also a word of the question, else 0.

    Example: "<|q|>past of sit<|ctx|><|#1|>| sit | sat | sat |" -> 1 on " sit" only.
    DrQA's exact-match feature: the reader is told where the question's key sits in the
    context, so finding "sit" in the table is not a skill it must learn (or memorise) per verb.
    """
    return _in_question(ids, _pieces(ids, tokenizer), tokenizer.encode_special(CTX)[0])


def token_types(ids: list[int], tokenizer, n_columns: int = N_COLUMNS) -> list[int]:
    """The reader's token-type ids: column + n_columns * in_question, in [0, 2 * n_columns)."""
    pieces = _pieces(ids, tokenizer)  # decoded once for both features
    flags = _in_question(ids, pieces, tokenizer.encode_special(CTX)[0])
    return [c + n_columns * m for c, m in zip(_columns(pieces, n_columns), flags)]


def _columns(pieces: list[str], n_columns: int) -> list[int]:
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
    return [col[i] for i in _first_chars(pieces)]  # a token's column: its first character's


def _in_question(ids: list[int], pieces: list[str], ctx: int) -> list[int]:
    if ctx not in ids:
        return [0] * len(ids)  # no context: nothing to flag
    text = "".join(pieces).lower()
    word_at = [""] * (len(text) + 1)  # per character: the word it is part of
    for m in WORD.finditer(text):
        word_at[m.start():m.end()] = [m.group()] * (m.end() - m.start())
    starts = _first_chars(pieces)
    q_end = ids.index(ctx)
    question = {word_at[c] for c in range(starts[q_end])} - {""}
    return [int(i > q_end and word_at[c] in question) for i, c in enumerate(starts)]
