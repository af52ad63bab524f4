"""The prompt augmenter: question + ranked chunks -> a prompt that fits the reader's window.

What it is: two templates. COMPACT_TEMPLATE is the MiniGPT reader's: special tokens as
delimiters, the question first (a causal reader then reads every context token already knowing
the question), each chunk cut to its most query-relevant window so that three fit in 64
tokens. FULL_TEMPLATE is the long "grammar tutor" prompt for an external LLM, with no budget.
What it leaves out: re-ranking (the chunks arrive in rank order and keep it), and what the
reader reads back from a prompt (reader_inputs.py: its windows, its question and what kind).
Follows DESIGN §3 `minirag.prompt`; the budget arithmetic is in theory/05.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from minirag.bm25 import tokenize
from minirag.chunk import Chunk
from minirag.files.special_tokens import CTX, MARKERS, A, Q
from minirag.retrieve import CUE_WEIGHT, check_query
from minirag.tables import cue_words, is_table_rule, row_headers, table_cells

IDK_TEXT = "I don't know — not in the rules I have."
STOPWORDS = frozenset(
    "a an the of to in on at for is are was were be been do does did i you he she it we "
    "they what whats which who how why when where or and with as by this that these those "
    "my your its can could should would will shall me there here not no yes so if".split())


@dataclass(frozen=True)
class Template:
    name: str  # "compact" or "full"
    frame: str  # the whole prompt, with {question} and {context} slots
    item: str  # one chunk, with {marker} and {text} slots
    budgeted: bool  # True: must fit `budget` tokens; chunks are windowed


COMPACT_TEMPLATE = Template("compact", f"{Q}{{question}}{{context}}{A}", f"{CTX}{{marker}}{{text}}",
                            budgeted=True)
FULL_TEMPLATE = Template(
    "full",
    "You are a patient English grammar tutor. Use only the facts in the context below; do "
    "not use anything you remember. Cite every fact with the number of its source, like "
    f"[#1]. If the context does not contain the answer, say exactly: \"{IDK_TEXT}\"\n\n"
    "Context:\n{context}\nQuestion: {question}\nAnswer:",
    "{marker} {text}\n", budgeted=False)
DEFAULT_TEMPLATE = COMPACT_TEMPLATE
MIN_WINDOW = 4  # tokens: a chunk that would get fewer is dropped, not shown as a stub
MAX_QUESTION = 24  # tokens of the question kept in a budgeted prompt
LEND_FLOOR = 4  # tokens another chunk keeps when it lends to a whole table row


@dataclass(frozen=True)
class Prompt:
    text: str  # what the reader sees, special tokens rendered
    token_ids: list[int]  # len(token_ids) <= budget for a budgeted template
    citations: dict[str, str]  # "[#1]" -> chunk id, in rank order
    dropped: list[str]  # ids of the chunks that did not fit
    # a table row shown (as `units` gives it) -> its table's header row, which no window shows
    headers: dict[str, str] = field(default_factory=dict)
    # the question as asked, whole: the ids keep at most MAX_QUESTION tokens of it, the reader's
    # rules (reader.py) read all of it
    question: str = ""


def units(text: str) -> list[str]:
    """A chunk's candidate windows: its lines and the sentences of long lines, without
    headings and table header rows (they name a topic but state no fact), table rules
    ("|---|---|") or the `*` of markdown emphasis (tokens the 64-token window cannot spare).
    `~~wrong~~` stays."""
    out = []
    lines = text.splitlines()
    for line, nxt in zip(lines, [*lines[1:], ""]):
        line = " ".join(line.replace("*", "").split())  # drop bold/italic marks, fold spaces
        if is_table_rule(nxt) or is_table_rule(line) or line.startswith("#") or not line:
            continue  # a table's header row (the rule follows it) labels, it states nothing
        out += [s for s in re.split(r"(?<=[.!?])\s+", line) if s]
    return out


def table_headers(text: str) -> list[str]:
    """The header rows of the markdown tables in `text` (a header row is followed by a rule)."""
    lines = text.splitlines()
    return [line for line, nxt in zip(lines, lines[1:])
            if is_table_rule(nxt) and not is_table_rule(line)]


def query_weights(query: str, vocab: set[str], weight) -> dict[str, float]:
    """What each word of a chunk is worth to this query: weight(w) for a query word, CUE_WEIGHT
    (3) times that for a fill-in's cue (tables.cue_words), and half for a near miss.

    A near miss is a chunk word for a query word the chunk lacks: the shorter of the two has at
    least 3 letters, the other starts with all of it but its last letter (and at least its
    first 3), and they differ in length by at most 4: a learner's "binded" finds the KB's
    "bind", "tomatos" finds "tomato", "leafs" finds "leaf"; "sang" does not find "sing".
    """
    q = set(tokenize(query)) - STOPWORDS
    # subtle: in a fill-in ("the wolf ___ (howl) at the moon") the word in brackets is the one
    # to look up; the rest of the sentence is scenery, so it counts CUE_WEIGHT times over
    cue = set(cue_words(query))
    out = {w: weight(w) * (CUE_WEIGHT if w in cue else 1.0) for w in q & vocab}
    by_start: dict[str, list[str]] = {}  # a near miss shares its first 3 letters: look only there
    for v in vocab - q:
        by_start.setdefault(v[:3], []).append(v)
    for w in q - vocab:
        if len(w) < 3:
            continue
        for v in by_start.get(w[:3], ()):
            stem = min(v, w, key=len)
            if len(stem) >= 3 and abs(len(v) - len(w)) <= 4 and \
                    v[:max(3, len(stem) - 1)] == w[:max(3, len(stem) - 1)]:
                out[v] = max(out.get(v, 0.0), 0.5 * weight(v) * (CUE_WEIGHT if w in cue else 1.0))
    return out


def looked_up(query: str) -> set[str]:
    """The words a question asks a form of: a gap's cue and a word right after "of" or "for".
    Example: looked_up("past of be") -> {"be"}; looked_up("we ___ (do) it") -> {"do"}"""
    words = tokenize(query)
    return set(cue_words(query)) | {b for a, b in zip(words, words[1:]) if a in ("of", "for")}


def best_window(query: str, text: str, max_tokens: int, tokenizer, weight,
                shown: frozenset[str] = frozenset(), header: str = "",
                key_stopwords: bool = True, ranked: tuple | None = None) -> str:
    """The lines or sentences of `text` that answer `query` best, fitted to `max_tokens`
    (`ranked`: `ranked_units` of these same arguments, when the caller has it already).

    Units are ranked by the weight of the query words they hold (query_weights); a table row
    that holds one also holds its table's header words (`header`: the header of a table the
    text starts inside): "| sing | sang | sung |" says "past participle of sing" as much as
    prose that names both does. Ties go to the shorter unit (a table row over a paragraph),
    then the earlier. The best one is always shown (a unit longer than `max_tokens` is cut to
    the token window that starts a little before its most informative query word); the next
    ones join it, whole and in text order, while they fit and hold a query word. Units
    already `shown` from an overlapping chunk are skipped.
    A stopword is worth nothing (query_weights), unless it is the word a question looks up
    (`looked_up`: "past of be", "object of they") and the question names a column of the
    table: then, with `key_stopwords`, the row it keys counts as holding it and the header's
    words (without, no window shows the *be*, *do* or pronoun rows to such a question).
    """
    cands, scores, order, w8 = ranked or ranked_units(query, text, weight, shown, header,
                                                      key_stopwords)
    ids = tokenizer.encode(cands[order[0]])
    if len(ids) > max_tokens:
        return _cut(cands[order[0]], ids, max_tokens, tokenizer, w8)
    picked, room = [order[0]], max_tokens - len(ids)
    for i in order[1:]:
        if scores[i] <= 0:
            break  # sorted by score: the rest hold no query word either
        n = len(tokenizer.encode("\n" + cands[i]))
        if n <= room:
            picked.append(i)
            room -= n
    return "\n".join(cands[i] for i in sorted(picked))


def ranked_units(query: str, text: str, weight, shown: frozenset[str] = frozenset(),
                 header: str = "", key_stopwords: bool = True
                 ) -> tuple[list[str], list[float], list[int], dict[str, float]]:
    """`text`'s units not yet `shown`, their scores, their indices best first, and the query's
    word weights (query_weights): best_window's ranking (see there)."""
    cands = [u for u in units(text) if u not in shown] or [" ".join(text.split())]
    words = [set(tokenize(u)) for u in cands]
    heads = set(tokenize(" ".join(table_headers(text) + [header])))
    w8 = query_weights(query, set().union(heads, *words), weight)
    # a stopword the question looks up ("past of be") keys its row when a column is named
    keys = looked_up(query) & STOPWORDS if key_stopwords and heads & set(w8) else set()
    key_of = [table_cells(u)[0].lower() if u.startswith("|") else "" for u in cands]
    bonus = [weight(k) if k in keys else 0.0 for k in key_of]
    # a row that holds a query word means its cells under the header's names
    words = [ws | heads if u.startswith("|") and (b or any(w in w8 for w in ws)) else ws
             for u, ws, b in zip(cands, words, bonus)]
    # subtle: fsum is exactly rounded, so a score (and every tie) does not depend on the
    # order a set of words is walked in, which changes with PYTHONHASHSEED between runs
    scores = [math.fsum([b, *(w8.get(w, 0.0) for w in ws)]) for ws, b in zip(words, bonus)]
    order = sorted(range(len(cands)), key=lambda i: (-scores[i], len(cands[i]), i))
    return cands, scores, order, w8


def fit_tokens(window: str, tokenizer) -> int:
    """The tokens `best_window` counts for a window it returned: its first unit, then each next
    one with the line break that joins it on. The joined text may encode a token shorter (BPE
    merges across the break), so a share of that length could leave a line out.
    Example: fit_tokens("| go | went |\n| be | was |", tok) >= len(tok.encode(that text))"""
    first, *rest = window.split("\n")
    return len(tokenizer.encode(first)) + sum(len(tokenizer.encode("\n" + u)) for u in rest)


def _last_words(text: str, tokenizer, limit: int) -> list[int]:
    """The ids of the whole words that end `text`'s question, at its last "?" (a learner may ask
    first and tell the story after) or else at its end, that encode to `limit` tokens at most
    ([] when that last word alone is longer). Example: with limit 3, "so which one, by or until"
    -> the ids of "by or until"; "past of swim? we argued" -> "past of swim?"."""
    kept: list[int] = []
    words = text.split()
    asked = [i for i, w in enumerate(words) if w.endswith("?")]
    words = words[:asked[-1] + 1] if asked else words
    for k in range(1, min(len(words), limit) + 1):  # each word is a token at least
        ids = tokenizer.encode(" ".join(words[-k:]))
        if len(ids) > limit:
            break
        kept = ids
    return kept


def _cut(unit: str, ids: list[int], max_tokens: int, tokenizer, w8: dict[str, float]) -> str:
    """The `max_tokens` window of a long unit that starts just before its best query word."""
    hits = [(w8[m.group().lower()], -m.start(), m.start())
            for m in re.finditer(r"[A-Za-z0-9']+", unit) if m.group().lower() in w8]
    hit = max(hits)[2] if hits else 0  # the weightiest query word (the earliest on ties)
    start = max(0, min(len(tokenizer.encode(unit[:hit])) - 2, len(ids) - max_tokens))
    return tokenizer.decode(ids[start:start + max_tokens])


def build_prompt(query: str, chunks: list[Chunk], template: Template = DEFAULT_TEMPLATE,
                 budget: int | None = 64, tokenizer=None, idf=None,
                 key_stopwords: bool = True, fair_shares: bool = True,
                 question_end: bool = True, whole_rows: bool = True) -> Prompt:
    """Lay out the question and the chunks (rank order) in `template`.

    Budgeted: the question keeps at most MAX_QUESTION tokens (and at most half the budget;
    `Prompt.question` keeps all of it, for the reader's rules): with `question_end`, a longer
    one keeps the whole words that fit up to its last "?" or else its end (a chatty learner
    asks at the end of a story, or first and tells it after), else its first tokens;
    the chunks share what is left, each shown as its best window: with `fair_shares`, each gets
    what its best window would take of all of it, up to a common level (`water_fill`: a one-line
    table row leaves its room to a definition that runs on), else an equal share; with
    `whole_rows`, a chunk whose best unit is a table row too long for its share takes the
    tokens it lacks from the chunks ranked below it (`lent`): a row cut mid-cell ("rink |
    drank | dru") has no header, so it is read as prose, not as a row;
    `len(token_ids) <= budget` always. With no chunks
    this is the abstention prompt: the question and nothing to answer from. `idf(word)`
    weighs the query words when a window is chosen (the pipeline passes BM25Index.idf_of:
    "keep" says more than "past"); without it, an idf over the lines of these chunks.
    `key_stopwords`: see best_window; it, `fair_shares`, `question_end` and `whole_rows` are set
    by the reader's training data as its reader saw them.
    Example: build_prompt("past of go", [chunk]).text ->
        "<|q|>past of go<|ctx|><|#1|>| go | went | gone |<|a|>"
    A question that is not text, is empty or is oversized is a ValueError (retrieve.check_query).
    """
    check_query(query)
    if tokenizer is None:
        from minirag.files.artifacts import load_tokenizer
        tokenizer = load_tokenizer()
    if not template.budgeted:
        return _full_prompt(query, chunks, template, tokenizer)
    if budget is None or budget < 8:
        raise ValueError(f"budget ({budget}) must be >= 8 tokens for the compact template")
    sp = tokenizer.encode_special
    q_max = min(MAX_QUESTION, (budget - 2) // 2)  # never more than half of the window
    q_ids = tokenizer.encode(" ".join(query.split()))
    if len(q_ids) > q_max:
        q_ids = (question_end and _last_words(query, tokenizer, q_max)) or q_ids[:q_max]
    ids = sp(Q) + q_ids
    room = budget - len(ids) - 1  # what the chunks may use; 1 for the closing <|a|>
    shown: list[Chunk] = []
    dropped: list[str] = []
    seen: list[str] = []  # units already in the prompt
    headers: dict[str, str] = {}  # the rows shown -> their header rows
    per_chunk = room // max(1, min(len(chunks), len(MARKERS))) - 2  # 2: <|ctx|> + marker
    weight = idf or _local_idf([c.text for c in chunks])
    shares = [per_chunk] * len(chunks)
    # each chunk's units ranked once, with nothing shown yet: for its want, its row's need and,
    # unless an earlier window showed one of its units, its window
    ranked = [ranked_units(query, c.text, weight, frozenset(), c.metadata.get("table_header", ""),
                           key_stopwords) for c in chunks] \
        if (fair_shares or whole_rows) and 1 < len(chunks) <= len(MARKERS) else [None] * len(chunks)
    if fair_shares and 1 < len(chunks) <= len(MARKERS):
        wants = [max(MIN_WINDOW, fit_tokens(best_window(
            query, c.text, room, tokenizer, weight, frozenset(), c.metadata.get("table_header", ""),
            key_stopwords, r), tokenizer)) for c, r in zip(chunks, ranked)]  # given all the room
        shares = water_fill(wants, max(0, room - 2 * len(chunks)))
    if whole_rows and 1 < len(chunks) <= len(MARKERS):
        needs = [row_need(r, c, tokenizer) for c, r in zip(chunks, ranked)]
        shares = lent(shares, needs, LEND_FLOOR)
    for c, share, r in zip(chunks, shares, ranked):
        allowance = min(share, room - 2)
        if len(shown) == len(MARKERS) or allowance < MIN_WINDOW:
            dropped.append(c.id)
            continue
        reuse = r if r is not None and not set(r[0]) & set(seen) else None
        text = best_window(query, c.text, allowance, tokenizer, weight, frozenset(seen),
                           c.metadata.get("table_header", ""), key_stopwords, reuse)
        seen += text.split("\n")
        rows = row_headers(c.text, c.metadata.get("table_header", ""))
        headers.update({u: rows[u] for u in text.split("\n") if u in rows})
        window = tokenizer.encode(text)[:allowance]  # subtle: a decoded cut may re-encode longer
        ids += sp(CTX) + sp(MARKERS[len(shown)]) + window
        room -= 2 + len(window)
        shown.append(c)
    ids += sp(A)
    citations = {f"[#{i + 1}]": c.id for i, c in enumerate(shown)}
    return Prompt(tokenizer.decode(ids), ids, citations, dropped, headers, " ".join(query.split()))


def row_need(ranked: tuple, chunk: Chunk, tokenizer) -> int:
    """The tokens of `chunk`'s best unit (`ranked`: its ranked_units) when it is a table row
    under a header, else 0: what a share must be to show that row whole."""
    cands, _, order, _ = ranked
    best = cands[order[0]]
    rows = row_headers(chunk.text, chunk.metadata.get("table_header", ""))
    return len(tokenizer.encode(best)) if best in rows else 0


def lent(shares: list[int], needs: list[int], floor: int) -> list[int]:
    """Shares in which each chunk, in rank order, whose whole row `needs` more tokens than its
    share gets them from the other shares, one at a time from the one with the most to spare
    above max(`floor`, its own need); a need the others cannot meet is left unmet.
    Example: lent([9, 20, 20], [11, 0, 0], 4) -> [11, 19, 19]"""
    out = list(shares)
    for i, need in enumerate(needs):
        spare = [0 if j <= i else max(0, s - max(floor, needs[j])) for j, s in enumerate(out)]
        short = need - out[i]
        if short <= 0 or sum(spare) < short:
            continue
        for _ in range(short):
            j = max(range(len(out)), key=lambda j: (spare[j], j))
            spare[j] -= 1
            out[j] -= 1
            out[i] += 1
    return out


def water_fill(wants: list[int], total: int) -> list[int]:
    """Shares of `total` tokens: each chunk gets what it `wants` up to a common level, the level
    as high as the total allows (max-min fairness; the last, widest chunk takes what integer
    division left).
    Example: water_fill([5, 40, 40], 60) -> [5, 27, 28]"""
    order = sorted(range(len(wants)), key=lambda i: wants[i])
    out, left = [0] * len(wants), total
    for n, i in enumerate(order):
        level = left // (len(wants) - n)
        out[i] = min(wants[i], level)
        left -= out[i]
    return out


def _local_idf(texts: list[str]):
    """weight(word) = ln(1 + n_units / units containing it), over the units of these chunks.

    A word in every line ("past" in a verb table's prose) says little about which line
    answers; the verb that appears in one row says a lot.
    """
    us = [set(tokenize(u)) for t in texts for u in units(t)]
    df: dict[str, int] = {}
    for u in us:
        for w in u:
            df[w] = df.get(w, 0) + 1
    n = max(1, len(us))
    return lambda w: math.log(1 + n / df.get(w, 1))


def _full_prompt(query: str, chunks: list[Chunk], template: Template, tokenizer) -> Prompt:
    items = [template.item.format(marker=f"[#{i + 1}]", text=c.text.strip())
             for i, c in enumerate(chunks)]
    text = template.frame.format(question=query.strip(), context="".join(items) or "(none)\n")
    citations = {f"[#{i + 1}]": c.id for i, c in enumerate(chunks)}
    return Prompt(text, tokenizer.encode(text), citations, [], question=" ".join(query.split()))
