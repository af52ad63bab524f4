"""Reading-comprehension examples for the reader, built from the KB and never from the eval.

What it is: for a fact (facts.py), a question in one of many phrasings with typos and noise,
the chunk that states it among retrieved-looking distractors (BM25 hard negatives), laid out
by the real prompt builder, and the gold span: the answer's tokens inside the prompt, or the
<|a|> position itself when the prompt does not hold the answer ("I don't know").
So that memorising cannot pay, many verb and table facts are rewritten before they are shown:
nonce verbs ("blick, black, blicken") and forms swapped between verbs (counterfactuals); the
held-out verbs never appear at all. Follows DESIGN §3 (reader); why, in theory/07.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk
from minirag.prompt import COMPACT_TEMPLATE, STOPWORDS, build_prompt
from minirag.reader_inputs import columns, windows
from minirag.training.eval_filter import eval_filter
from minirag.training.facts import Fact, mentions, split_cells
from minirag.training.questions import aside, contracted, is_probe, question_for

NONCE_ON = ["bl", "cr", "dr", "fl", "gr", "pl", "sk", "sp", "st", "tr", "br", "gl", "sn", "w",
            "v", "z", "m", "n", "p", "t", "k", "sh", "th", "f", "h", "l", "r", "d", "g", "b"]
NONCE_VOWELS = ["a", "e", "i", "o", "u", "oo", "ee", "ai", "ou", "ea"]
NONCE_CODA = ["ck", "nk", "ng", "sh", "mp", "nd", "ft", "lt", "rk", "st", "x", "p", "t", "b",
              "d", "g", "m", "n", "l", "rm"]


@dataclass(frozen=True)
class Example:
    ids: list[int]  # the prompt, <= 64 tokens
    start: int  # gold span's first token, or the <|a|> position when there is no answer
    end: int  # gold span's last token (== start for no answer)
    question: str
    answer: str | None  # None: the prompt does not hold the answer
    kind: str  # the fact kind, "nonce", "counterfactual" or "none"


def nonce_word(rng: np.random.Generator) -> str:
    parts = [NONCE_ON, NONCE_VOWELS, NONCE_CODA]
    return "".join(p[int(rng.integers(len(p)))] for p in parts)


def nonce_verb(rng: np.random.Generator) -> tuple[str, str, str]:
    """An invented irregular verb: base, past, participle in one of the KB's patterns."""
    on = NONCE_ON[int(rng.integers(len(NONCE_ON)))]
    coda = NONCE_CODA[int(rng.integers(len(NONCE_CODA)))]
    v1, v2, v3 = (NONCE_VOWELS[int(i)] for i in rng.choice(len(NONCE_VOWELS), 3, replace=False))
    base, past, part = on + v1 + coda, on + v2 + coda, on + v3 + coda
    pattern = int(rng.integers(4))
    if pattern == 0:
        return base, base, base  # cut, cut, cut
    if pattern == 1:
        return base, past, past  # keep, kept, kept
    if pattern == 2:
        return base, past, base  # come, came, come
    return base, past, part + ("en" if rng.random() < 0.5 else "")  # sing, sang, sung


def altered(f: Fact, verbs: list[Fact], rng: np.random.Generator) -> tuple[Fact, str]:
    """A verb fact rewritten so that its answer cannot be remembered: a nonce verb, or the
    forms of another verb (counterfactual). The row in the chunk is rewritten to match."""
    cells = split_cells(f.raw)
    col = 1 if f.relation == "Past simple" else 2
    if rng.random() < 0.5:
        base, past, part = nonce_verb(rng)
        new_cells, kind = [base, past, part], "nonce"
    else:
        other = verbs[int(rng.integers(len(verbs)))]
        new_cells, kind = [cells[0]] + split_cells(other.raw)[1:], "counterfactual"
    row = "| " + " | ".join(new_cells) + " |"
    chunk = Chunk(f.chunk.id, f.chunk.text.replace(f.raw, row), f.chunk.doc_id, f.chunk.offset,
                  f.chunk.metadata)
    key = new_cells[0].split("/")[0].strip().lower()
    return Fact("verb", key, f.relation, new_cells[col], row, chunk, row, f.column), kind


def answer_span(ids: list[int], shown: int, answer: str, tokenizer, column: int = 0
                ) -> tuple[int, int] | None:
    """Token positions of `answer` inside the window of the `shown`-th chunk, if it is there.
    `column` (a table fact's): of several occurrences, the one in that cell of a row. In
    "| cut | cut | cut |" the past is the second cell and the participle the third; taking
    the first "cut" would teach the reader that a participle sits in the key's column."""
    spans = windows(ids, tokenizer)
    if shown >= len(spans):
        return None
    lo, hi = spans[shown]
    window = ids[lo:hi]
    hits = [(lo + i, lo + i + len(a) - 1)
            for a in (tokenizer.encode(" " + answer), tokenizer.encode(answer))
            for i in range(len(window) - len(a) + 1) if window[i:i + len(a)] == a]
    if len(hits) < 2:
        return hits[0] if hits else None
    cells = columns(ids, tokenizer)  # [T], only needed to choose between occurrences
    return next((h for h in hits if cells[h[0]] == column), hits[0])


def make_example(f: Fact, question: str, pool: list[Chunk], bm25: BM25Index,
                 tokenizer, rng: np.random.Generator, kind: str, show: bool = True,
                 answerable: bool = True) -> Example:
    """Lay out `question` with the fact's chunk among 0-2 distractors (`show`), or 0-3
    distractors that do not state the fact's answer (not `show`: the target is "no answer").
    Three chunks is the common case (k = 3); fewer teach the reader the wider windows an
    oracle or a short retrieval list gives. Not `answerable`: the chunk is shown but the
    question asks something it does not say (the target is "no answer" all the same)."""
    hits = [c for c, _ in bm25.search(question, 12)] if question.strip() else []
    # A distractor never states the answer, so the gold span is the only one. It may name the
    # key ("go" in a sentence about verbs of movement), as retrieval's near misses do; only a
    # rewritten row (nonce, counterfactual) keeps away from its key, whose true forms would
    # contradict it.
    words = f.answer + (" " + f.key if kind in ("nonce", "counterfactual") else "")
    banned = frozenset(re.findall(r"[a-z']+", words.lower()))
    avoid = lambda c: c.id == f.chunk.id or mentions(c.text, banned)  # noqa: E731
    cands = [c for c in hits if not avoid(c)]
    n_chunks = int(rng.choice(4, p=CONTEXT_SIZES))
    n_distract = max(0, n_chunks - 1) if show else n_chunks
    picked: list[Chunk] = []
    while len(picked) < n_distract:
        c = (cands.pop(int(rng.integers(len(cands)))) if cands and rng.random() < 0.75
             else pool[int(rng.integers(len(pool)))])
        if not avoid(c) and c.id not in {p.id for p in picked}:
            picked.append(c)
    if show:
        picked.insert(int(rng.integers(len(picked) + 1)), f.chunk)
    p = build_prompt(question, picked, COMPACT_TEMPLATE, 64, tokenizer, idf=bm25.idf_of,
                     key_stopwords=KEY_STOPWORDS, fair_shares=FAIR_SHARES,
                     question_end=QUESTION_END, whole_rows=WHOLE_ROWS)
    null = len(p.token_ids) - 1  # the <|a|> position
    span = None
    if show and answerable and f.chunk.id in p.citations.values():
        shown = list(p.citations.values()).index(f.chunk.id)
        span = answer_span(p.token_ids, shown, f.answer.split(" / ")[0], tokenizer, f.column)
    if span is None:
        return Example(p.token_ids, null, null, question, None,
                       "none" if show and answerable else kind)
    return Example(p.token_ids, span[0], span[1], question, f.answer, kind)


CONTEXT_SIZES = [0.03, 0.17, 0.15, 0.65]  # P(0, 1, 2, 3 chunks in the prompt); 0: closed book
MIX = {"verb": 0.176, "mention": 0.072, "table": 0.072, "arrow": 0.072, "correction": 0.048,
       "gap": 0.056, "cloze": 0.064, "prose": 0.2, "none": 0.24}  # "none": nothing to answer
KINDS, KIND_P = list(MIX), np.array(list(MIX.values()))  # drawn once per question
# The shipped reader was trained on windows that never show a row keyed by a looked-up
# stopword ("past of be", "object of they": prompt.best_window's key_stopwords); it reads with
# them. True changes some training prompts and, through the draws, the order of the rest: a
# rebuild of every model (EXPERIMENTS.md, 2026-12-03)
KEY_STOPWORDS = False
# and on windows that shared the prompt's room equally (prompt.build_prompt's fair_shares); it
# reads with each chunk's fair share. True would change training prompts: a rebuild
FAIR_SHARES = False
# and on questions cut to their first MAX_QUESTION tokens when longer (build_prompt's
# question_end); it reads a long question's words up to its last "?", else its last words.
# True would change training prompts
QUESTION_END = False
# and on shares that never grew for a table row (build_prompt's whole_rows); it reads with a
# chunk's best row shown whole where lower-ranked chunks can lend the tokens. True would change
# training prompts
WHOLE_ROWS = False
ALTERED_SHARE = 0.6  # of the verb examples, rewritten as nonce or counterfactual (`altered`)


def training_set(facts: dict[str, list[Fact]], pool: list[Chunk], bm25: BM25Index, tokenizer,
                 n: int, rng: np.random.Generator, forbidden_words: frozenset[str]
                 ) -> list[Example]:
    """`n` examples in the MIX proportions. No question too close to an eval question
    (eval_filter) and no faithfulness probe's phrasing (`is_probe`) is ever a training one.
    `forbidden_words`: words a nonce verb may not be (real ones)."""
    examples: list[Example] = []
    while len(examples) < n:
        drawn = draw_question(facts, rng, forbidden_words)
        if drawn is None:
            continue
        kind, f, q, label, shown = drawn
        ex = make_example(f, q, pool, bm25, tokenizer, rng, label, show=shown,
                          answerable=kind != "none")
        if kind == "none" or ex.answer is not None:  # a fact cut out of its window: skip it
            examples.append(ex)
    return examples


def draw_question(facts: dict[str, list[Fact]], rng: np.random.Generator,
                  forbidden_words: frozenset[str]) -> tuple[str, Fact, str, str, bool] | None:
    """One training question in the MIX proportions: (kind, fact, question, label, shown), or
    None when the draw is rejected (an invented word that is real, a question too close to an
    eval question, a probe's phrasing); the caller draws again."""
    kind = KINDS[int(rng.choice(len(KINDS), p=KIND_P))]
    shown = kind != "none"
    if kind == "none":
        f, roll = _pick_fact(facts, rng), rng.random()
        if roll < 0.45:  # a grammar question whose fact is not in the prompt
            q, label = contracted(question_for(f, rng), rng), "none"
        elif roll < 0.85:
            # an off-topic question about a word the prompt does show ("go near me" beside
            # "| go | went | gone |"): seeing the word is not being asked about it
            q, label, shown = aside(_shown_word(f, rng), rng), "offtopic", True
        else:  # an off-topic question about an invented word
            word = nonce_word(rng)
            if word in forbidden_words:
                return None  # an invented word that happens to be a real one
            q, label = aside(word, rng), "none"
    else:
        f = facts[kind][int(rng.integers(len(facts[kind])))]
        label = kind
        if kind == "verb" and f.raw and rng.random() < ALTERED_SHARE:
            f, label = altered(f, facts["verb"], rng)
            if label == "nonce" and set(split_cells(f.raw)) & forbidden_words:
                return None  # an invented verb that happens to be a real word
        q = contracted(question_for(f, rng), rng)
    if eval_filter().too_close(q) or is_probe(q):
        return None  # never train on (nearly) an eval question or a probe's phrasing
    return kind, f, q, label, shown


def _shown_word(f: Fact, rng: np.random.Generator) -> str:
    """The fact's key (a cloze, gap or prose fact's key is a sentence) or another word of its
    chunk."""
    if f.kind not in ("cloze", "gap", "prose") and rng.random() < 0.5:
        return f.key
    words = [w for w in re.findall(r"[a-z]{3,}", f.chunk.text.lower()) if w not in STOPWORDS]
    return words[int(rng.integers(len(words)))] if words else f.key


def _pick_fact(facts: dict[str, list[Fact]], rng: np.random.Generator) -> Fact:
    kind = ["verb", "table", "arrow", "gap", "cloze", "prose"][int(rng.integers(6))]
    return facts[kind][int(rng.integers(len(facts[kind])))]
