"""Reader evaluation: exact match, citation accuracy and abstention, by context, beside how
often the answer was in the prompt at all (the most exact match a span reader can reach) and
the reader's own share, reading accuracy: exact match among the questions whose answer it saw.

What it is: the reader scored on the labelled questions with oracle context (the gold chunk),
retrieved context (end to end), closed-book (no context), plus three probes built from the KB's
verb tables: `counterfactual` (a verb's row rewritten with other forms: the right answer is what
the context says), `held-out` (verbs reader training never saw) and `trained verbs` (every other
row, asked in phrasings training never used). Definitions in theory/04
and theory/05; rows follow DESIGN §3 cli (`reader`).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from minirag.chunk import Chunk
from minirag.eval.metrics import exact_match, mean_of
from minirag.forms import regular_forms
from minirag.prompt import build_prompt, units
from minirag.reader import Reader
from minirag.reader_inputs import windows
from minirag.retrieve import Retriever
from minirag.training.facts import HELD_OUT_VERBS, Fact, table_facts
from minirag.training.questions import EVAL_PHRASINGS
from minirag.training.reader_data import Example, nonce_verb


def gold_chunk(q: dict, chunks: list[Chunk]) -> Chunk | None:
    """The oracle context: the chunk of a gold section whose lines (not its heading, which a
    prompt window never shows) contain the answer; failing that, any chunk of the section
    that contains it. "Contain" as exact match reads it: whole words, any of the alternatives
    an answer lists ("learnt / learned")."""
    gold = {(g["doc_id"], g["section"]) for g in q["gold"]}
    inside = [c for c in chunks if (c.doc_id, c.metadata["section"]) in gold]
    in_lines = (c for c in inside if exact_match(" ".join(units(c.text)), q["answer"]))
    return next(in_lines, None) or next(
        (c for c in inside if exact_match(c.text, q["answer"])), None)


def score(reader: Reader, question: str, chunks: list[Chunk], answer: str | None,
          idf=None) -> dict:
    """One question: the reading, whether it is right, cited right, or abstained, and whether
    the answer was in front of the reader at all (`in_prompt`: in one window of the prompt, as
    exact match reads it). A span reader answers with part of one window, so `in_prompt` is
    the most its `em` can be (barring a span that splits a word at an apostrophe or a digit).
    `cite_ok`: the chunk its marker cites holds the answer (one of its alternatives), as
    whole words, as exact match reads them."""
    prompt = build_prompt(question, chunks, tokenizer=reader.tokenizer, idf=idf)
    r = reader.read(prompt)
    cited = {c.id: c for c in chunks}.get(prompt.citations.get(r.marker, ""), None)
    ok = answer is not None and not r.abstained and bool(exact_match(r.answer, answer))
    shown = [reader.tokenizer.decode(prompt.token_ids[lo:hi])
             for lo, hi in windows(prompt.token_ids, reader.tokenizer)]
    return {"abstained": r.abstained, "em": float(ok), "text": r.text,
            "in_prompt": float(answer is not None and any(exact_match(w, answer) for w in shown)),
            "cite_ok": float(cited is not None and answer is not None
                             and bool(exact_match(cited.text, answer)))}


def rows(context: str, scored: list[tuple[dict, dict]], answerable: bool,
         retriever: str | None = None) -> list[dict]:
    """Aggregate per group (all, verb, type:..., and near-miss for the unanswerable questions
    marked `near_miss`: a word no KB file lists) into DESIGN's reader rows; `retriever` names
    the configuration that gave a retrieved context (None for oracle and closed-book)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for q, m in scored:
        for g in ["all", f"type:{q['type']}"] + (["verb"] if q["topic"] == "verb-conjugation"
                                                   else []) + (["near-miss"] if q.get("near_miss")
                                                               else []):
            groups[g].append(m)
    out = [_row(context, retriever, g if answerable else f"unanswerable:{g}", ms, answerable)
           for g, ms in groups.items()]
    order = {"all": 0, "verb": 1}
    return sorted(out, key=lambda r: (order.get(r["group"], 2), r["group"]))


def evaluate_reader(reader: Reader, retrievers: dict[str, Retriever], chunks: list[Chunk],
                    questions: list[dict], unanswerable: list[dict], k: int = 3) -> list[dict]:
    """Oracle and closed-book rows on the labelled sets, retrieved rows for each of
    `retrievers` (config name -> Retriever; the first is the pipeline's), and the
    faithfulness rows."""
    out = []
    idf = next(iter(retrievers.values())).bm25.idf_of  # one KB, one BM25 vocabulary
    answerable = [q for q in questions if q["answer"]]
    contexts = [("oracle", None, lambda q: [c] if (c := gold_chunk(q, chunks)) else [])]
    contexts += [("retrieved", name, lambda q, r=r: r.retrieve(q["question"], k, hybrid=True))
                 for name, r in retrievers.items()]
    contexts.append(("closed-book", None, lambda q: []))
    for context, name, ctx in contexts:
        out += rows(context, [(q, score(reader, q["question"], ctx(q), q["answer"], idf))
                              for q in answerable], True, name)
        if context != "oracle":
            out += rows(context, [(q, score(reader, q["question"], ctx(q), None, idf))
                                  for q in unanswerable], False, name)
    out += faithfulness_rows(reader, retrievers, chunks, k)
    out += form_rows(reader, retrievers, chunks, k)
    return out


# The plainest question for each form an arrow gives (forms.regular_forms)
FORM_QUESTIONS = {"ing": "-ing form of {k}", "ed": "past of {k}", "s": "third person of {k}",
                  "plural": "plural of {k}", "er": "comparative of {k}",
                  "est": "superlative of {k}", "ly": "adverb of {k}"}


def form_questions(chunks: list[Chunk]) -> dict[str, tuple[Chunk, str]]:
    """Every arrow of the KB that gives a regular form of its word ("stop → stopping", "big →
    bigger"; forms.regular_forms), asked the plainest way: question -> (the arrow's chunk,
    the form). A question asked by two chunks keeps the first.
    Example: a chunk "add -er: big → bigger" -> {"comparative of big": (chunk, "bigger")}"""
    asked: dict[str, tuple[Chunk, str]] = {}
    for c in chunks:
        for word, form, kind in regular_forms(" ".join(units(c.text)), c.doc_id):
            asked.setdefault(FORM_QUESTIONS[kind].format(k=word.lower()), (c, form))
    return asked


def form_rows(reader: Reader, retrievers: dict[str, Retriever], chunks: list[Chunk],
              k: int = 3) -> list[dict]:
    """`regular forms`: every question of `form_questions`, with the arrow's chunk (group
    "oracle") and end to end with each retriever ("retrieved"). The regular forms are the
    other half of the verb tables: a learner asks for "played" as often as for "went"."""
    asked = [(q, c, form) for q, (c, form) in form_questions(chunks).items()]
    return probe_rows("regular forms", asked, reader, retrievers, k)


def examples_exact_match(reader: Reader, examples: list[Example]) -> float:
    """Share of examples read right: an answer holding the gold answer's words (the eval's
    exact_match), or an abstention when the example holds no answer."""
    ok = 0
    for e in examples:
        r = reader.read_ids(e.ids)
        ok += r.abstained if e.answer is None else (
            not r.abstained and bool(exact_match(r.answer, e.answer)))
    return ok / len(examples)


def faithfulness_rows(reader: Reader, retrievers: dict[str, Retriever], chunks: list[Chunk],
                      k: int = 3, seed: int = 0) -> list[dict]:
    """`counterfactual`: every KB verb's row rewritten (another verb's forms, or a nonce
    verb's), asked with the eval phrasings, oracle context. `held-out`: the held-out verbs,
    oracle context (group "oracle") and end to end with each retriever (group "retrieved").
    `trained verbs`: the same for every other row of the KB's verb tables, the rows the reader
    trained on, in phrasings it never trained on: the plainest question the course answers,
    asked of every verb it lists."""
    rng = np.random.default_rng(seed)
    idf = next(iter(retrievers.values())).bm25.idf_of
    verbs = [f for c in chunks for f in table_facts(c) if f.kind == "verb"]
    rows_out = []
    cf = []
    for f in verbs:
        if f.key in HELD_OUT_VERBS:
            continue
        other = verbs[int(rng.integers(len(verbs)))]
        forms = nonce_verb(rng)[1:] if rng.random() < 0.5 else _forms(other)
        answer = forms[0] if f.relation == "Past simple" else forms[1]
        row = f"| {f.key} | {forms[0]} | {forms[1]} |"
        chunk = Chunk(f.chunk.id, f.chunk.text.replace(f.raw, row), f.chunk.doc_id,
                      f.chunk.offset, f.chunk.metadata)
        q = _phrase(f, rng)
        cf.append(({"type": "counterfactual", "topic": "verb-conjugation"},
                   score(reader, q, [chunk], answer, idf)))
    rows_out += _faith_row("counterfactual", "all", [m for _, m in cf])
    held = [(f, _phrase(f, rng)) for f in verbs if f.key in HELD_OUT_VERBS]
    trained = [(f, _phrase(f, rng)) for f in verbs if f.key not in HELD_OUT_VERBS]
    for context, asked in (("held-out", held), ("trained verbs", trained)):
        rows_out += probe_rows(context, [(q, f.chunk, _first(f)) for f, q in asked], reader,
                               retrievers, k)
    return rows_out


def probe_rows(context: str, asked: list[tuple[str, Chunk, str]], reader: Reader,
               retrievers: dict[str, Retriever], k: int = 3) -> list[dict]:
    """A probe's rows: its (question, chunk, answer) triples read with the chunk that states
    the answer (group "oracle") and end to end with each retriever (group "retrieved")."""
    idf = next(iter(retrievers.values())).bm25.idf_of
    out = _faith_row(context, "oracle", [score(reader, q, [c], a, idf) for q, c, a in asked])
    for name, r in retrievers.items():
        out += _faith_row(context, "retrieved", [
            score(reader, q, r.retrieve(q, k, hybrid=True), a, idf) for q, _, a in asked], name)
    return out


def _first(f: Fact) -> str:
    return f.answer.split(" / ")[0]


def _forms(f: Fact) -> tuple[str, str]:
    cells = [c.strip() for c in f.raw.strip().strip("|").split("|")]
    return cells[1].split(" / ")[0], cells[2].split(" / ")[0]


def _phrase(f: Fact, rng: np.random.Generator) -> str:
    ts = EVAL_PHRASINGS[f.relation]
    return ts[int(rng.integers(len(ts)))].format(k=f.key)


def _faith_row(context: str, group: str, ms: list[dict], retriever: str | None = None
               ) -> list[dict]:
    """One faithfulness row, or none when the KB has nothing to probe (a KB of one's own
    without the held-out verbs): a rate of no questions is left out, not printed as NaN."""
    return [_row(context, retriever, group, ms, answerable=True)] if ms else []


def _row(context: str, retriever: str | None, group: str, ms: list[dict], answerable: bool
         ) -> dict:
    """One reader row: the rates of the scored questions `ms` (see `score`). The reader's own
    share is read off the questions whose answer was in the prompt (`shown`): exact match
    among them is `reading_accuracy`, abstention among them `false_abstention_in_prompt`;
    a row where no answer was shown has neither (None, not 0)."""
    answered = [m for m in ms if not m["abstained"]]
    shown = [m for m in ms if m["in_prompt"]] if answerable else []
    rate = lambda key, of=ms: mean_of(of, key)  # noqa: E731
    return {"context": context, "retriever": retriever, "group": group, "n": len(ms),
            "answer_in_prompt": rate("in_prompt") if answerable else None,
            "exact_match": rate("em") if answerable else None,
            "reading_accuracy": rate("em", shown) if shown else None,
            "citation_accuracy": rate("cite_ok", answered) if answerable and answered else None,
            "abstention_rate": rate("abstained") if not answerable else None,
            "false_abstention_rate": rate("abstained") if answerable else None,
            "false_abstention_in_prompt": rate("abstained", shown) if shown else None}
