"""The `minirag` command line (also `python -m minirag`): index, search, ask, eval, train, demo.

Every command works offline on the shipped defaults, prints text by default and one JSON
document with --json. Exit codes: 0 success, 1 a user-facing error (one line on stderr, no
traceback), 2 a usage error (argparse). Follows DESIGN §3 cli.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

from minirag.files.kb import DEFAULT_KB, SPLITS, KBError

USER_ERRORS = (ValueError, KBError, OSError, KeyError)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


def read_query(arg: str) -> str:
    """The query itself, or standard input when it is "-" (argv cannot carry a huge query)."""
    from minirag.retrieve import check_query
    query = sys.stdin.read() if arg == "-" else arg
    check_query(query)
    return query


def _embedder(args) -> str:
    """--embedder, or the pipeline's: what `index` caches and `search` ranks is what `ask` reads."""
    from minirag.pipeline import DEFAULT_EMBEDDER
    return args.embedder or DEFAULT_EMBEDDER


def cmd_index(args) -> dict:
    from minirag.index.cache import IndexConfig, load_or_build_index
    t0 = time.perf_counter()
    embedder = _embedder(args)
    index = load_or_build_index(args.kb, IndexConfig(embedder=embedder))
    return {"kb": str(args.kb), "embedder": embedder, "chunks": len(index.chunks),
            "documents": len({c.doc_id for c in index.chunks}), "cache_key": index.key,
            "from_cache": index.loaded_from_cache, "timings_ms": {"total": _ms(t0)}}


def _choice(args, flag: str) -> bool:
    """--rows / --no-rows (or --rerank ...), else the pipeline's DEFAULT_ROWS (DEFAULT_RERANK)."""
    from minirag import pipeline
    given = getattr(args, flag)
    return getattr(pipeline, f"DEFAULT_{flag.upper()}") if given is None else given


def cmd_search(args) -> dict:
    from minirag.encoders.thesaurus import Thesaurus
    from minirag.index.cache import IndexConfig, load_or_build_index
    from minirag.rerank.cross_encoder import CrossEncoder
    from minirag.retrieve import Retriever
    if args.k < 1:
        raise ValueError(f"-k must be >= 1 (got {args.k})")
    query = read_query(args.query)
    t0 = time.perf_counter()
    index = load_or_build_index(args.kb, IndexConfig(embedder=_embedder(args)))
    retriever = Retriever(index.store, index.bm25, rows=_choice(args, "rows"),
                          reranker=CrossEncoder.load() if args.rerank else None,
                          thesaurus=Thesaurus.load() if _choice(args, "thesaurus") else None)
    load_ms, t1 = _ms(t0), time.perf_counter()
    results = retriever.retrieve_scored(query, args.k, args.mode)
    # the text the hybrid's dense and BM25 lists read (the query, or it expanded)
    text = retriever.expanded(query) if args.mode == "hybrid" else query
    out = {"query": query, "mode": args.mode, "rerank": args.rerank, "rows": retriever.rows,
           "thesaurus": retriever.thesaurus is not None, "expanded_query": text,
           "results": [], "timings_ms": {"load_index": load_ms, "search": _ms(t1)}}
    for rank, (c, score) in enumerate(results, start=1):
        row = {"rank": rank, "chunk_id": c.id, "doc_id": c.doc_id,
               "section": c.metadata["section"], "score": round(float(score), 6), "text": c.text}
        if args.explain:
            row["explain"] = {"rrf": retriever.explain(query, c.id, args.mode),
                              "bm25_terms": index.bm25.explain(text, c.id)}
        out["results"].append(row)
    return out


def cmd_eval(args) -> dict:
    from minirag.eval.harness import run
    return run(args.split, args.kb, not args.no_sweep, args.plots, args.set)


def cmd_train(args) -> dict:
    from minirag.training.build import build
    log = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    return build([{"encoder": "biencoder"}.get(args.what, args.what)], log=log)


def answer_json(question: str, a) -> dict:
    """DESIGN §3 cli `ask` JSON for one Answer."""
    return {"question": question, "answer": a.text, "abstained": a.abstained,
            "citations": [{"marker": m, "chunk_id": c.id, "doc_id": c.doc_id,
                           "section": c.metadata["section"]} for m, c in a.citations.items()],
            "prompt": a.prompt.text, "prompt_tokens": len(a.prompt.token_ids),
            "chunks": [{"rank": i + 1, "chunk_id": c.id, "doc_id": c.doc_id,
                        "section": c.metadata["section"], "text": c.text}
                       for i, c in enumerate(a.chunks)],
            "adapter_read": a.reading.by_skill, "ruled_out": list(a.reading.ruled_out),
            "corrects": a.reading.corrects, "defines": a.reading.defines,
            "listed": a.reading.listed, "chosen_over": a.reading.chosen_over,
            "fills": a.reading.fills, "mends": a.reading.mends, "respells": a.reading.respells,
            "keyed_by": a.reading.keyed_by, "formed": a.reading.formed, "timings_ms": a.timings}


def cmd_ask(args) -> dict:
    from minirag.pipeline import DEFAULT_ADAPTER, RAGPipeline
    if args.k < 1:
        raise ValueError(f"-k must be >= 1 (got {args.k})")
    question = read_query(args.question)
    t0 = time.perf_counter()
    adapter = None if args.no_adapter else args.adapter or DEFAULT_ADAPTER
    pipe = RAGPipeline.from_defaults(args.kb, _embedder(args), args.k, _choice(args, "rerank"),
                                     adapter, _choice(args, "rows"), _choice(args, "thesaurus"))
    load_ms = _ms(t0)
    out = answer_json(question, pipe.ask(question))
    out["timings_ms"]["load"] = load_ms
    return out


EMBEDDERS = ["hashing", "biencoder", "minilm"]
EMBEDDER_HELP = "the hybrid's dense half (default: the pipeline's; minilm needs `make teacher`)"


def add_retriever_options(s: argparse.ArgumentParser) -> None:
    """--embedder, --rows and --thesaurus: what `search` and `ask` retrieve with."""
    s.add_argument("--embedder", choices=EMBEDDERS, help=EMBEDDER_HELP)
    s.add_argument("--rows", action=argparse.BooleanOptionalAction, default=None,
                   help="fuse the table rows the question looks up (default: the pipeline's)")
    s.add_argument("--thesaurus", action=argparse.BooleanOptionalAction, default=None,
                   help="expand the words the KB lacks with the teacher's thesaurus "
                   "(default: the pipeline's)")


DEMO_QUESTIONS = ["what's the past participle of sing?", "plural of mouse", "teached or taught?",
                  "what does vivir mean in portuguese"]


def cmd_demo(args) -> dict:
    from minirag.pipeline import RAGPipeline
    t0 = time.perf_counter()
    pipe = RAGPipeline.from_defaults(args.kb)
    load_ms = _ms(t0)
    return {"load_ms": load_ms, "answers": [answer_json(q, pipe.ask(q)) for q in DEMO_QUESTIONS]}


def print_index(r):
    src = "loaded from cache" if r["from_cache"] else "built and cached"
    n = lambda count, noun: f"{count} {noun}" + ("s" if count != 1 else "")  # noqa: E731
    print(f"{n(r['chunks'], 'chunk')} from {n(r['documents'], 'document')}, {src} "
          f"(key {r['cache_key']}) in {r['timings_ms']['total']:.0f} ms")


def print_search(r):
    if r["expanded_query"] != r["query"]:
        print(f"thesaurus adds: {r['expanded_query'][len(r['query']):].strip()}")
    for row in r["results"]:
        snippet = " ".join(row["text"].split())[:110]
        print(f"{row['rank']:>2}. {row['score']:.4f}  {row['doc_id']} § {row['section']}\n"
              f"    {snippet}")
        if "explain" in row:
            e = row["explain"]
            rows = f", rows rank {e['rrf']['rows']['rank']}" if "rows" in e["rrf"] else ""
            print(f"    dense rank {e['rrf']['dense']['rank']}, bm25 rank "
                  f"{e['rrf']['bm25']['rank']}{rows}, rrf {e['rrf']['rrf']:.5f}; bm25 terms "
                  + ", ".join(f"{t}={v:.3f}" for t, v in e["bm25_terms"].items()))
            if rr := e["rrf"].get("rerank"):
                print(f"    first-stage rank {rr['first_stage_rank']}, re-ranker score "
                      f"{rr['reranker_score']:.3f}, final score {rr['score']:.3f}, final rank "
                      f"{rr['rank']}")
    t = r["timings_ms"]
    print(f"({r['mode']}; index {t['load_index']:.0f} ms, search {t['search']:.2f} ms)")


def print_eval(r):
    from minirag.eval.report import format_eval
    print(format_eval(r))


def print_train(r):
    print("data/models/MANIFEST.json updated: " + ", ".join(sorted(r)))


# `ask --json` keys that name what a reading rule answered from (reader.Reading), as printed
RULE_NOTES = (
    ("corrects", "from the KB's own correction of ~~{}~~"),
    ("defines", 'from the KB\'s own definition of "{}"'),
    ("listed", 'the first example the KB lists after "{}:"'),
    ("chosen_over", 'the option a window supports, over "{}"'),
    ("fills", 'the verb group of "({})" as a window writes it'),
    ("mends", '"{}" put right by its verb row: the form its auxiliary asks for'),
    ("respells", '"{}" as a window spells it'),
    ("keyed_by", 'the first cell of the table row that says "{}"'),
    ("formed", 'the form of "({})" that the words around the gap ask for'),
)


def print_ask(r):
    routed = "   (read with the adapter: the question is of its task)" if r["adapter_read"] else ""
    print(f"Q: {r['question']}\nA: {r['answer']}{routed}")
    for c in r["citations"]:
        print(f"   {c['marker']} {c['doc_id']} § {c['section']}")
    if r["ruled_out"]:
        print("   ruled out (in the prompt, but not the form or the word asked about): "
              + ", ".join(r["ruled_out"]))
    for key, note in RULE_NOTES:  # the reading rule that gave the answer, if one did
        if r[key]:
            print("   " + note.format(r[key]))
    print(f"   prompt ({r['prompt_tokens']} tokens): {r['prompt']}")
    print("   retrieved: " + "; ".join(f"{c['doc_id']} § {c['section']}" for c in r["chunks"]))
    print("   ms: " + ", ".join(f"{k} {v:.2f}" for k, v in r["timings_ms"].items()))


def print_demo(r):
    print(f"RAG by hand: hybrid retrieval -> 64-token prompt -> MiniGPT span reader "
          f"(artifacts and index loaded in {r['load_ms']:.0f} ms)\n")
    for a in r["answers"]:
        print_ask(a)
        print()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minirag", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, func, printer, help, kb=True):
        s = sub.add_parser(name, help=help)
        s.set_defaults(func=func, printer=printer)
        s.add_argument("--json", action="store_true", help="print one JSON document")
        if kb:  # every command but train runs on a KB folder of one's choice
            s.add_argument("--kb", type=Path, default=DEFAULT_KB, help="knowledge-base folder")
        return s

    s = add("index", cmd_index, print_index, "build or refresh the cached index of the KB")
    s.add_argument("--embedder", choices=EMBEDDERS, help=EMBEDDER_HELP)

    s = add("search", cmd_search, print_search, "retrieve the best chunks for a query")
    s.add_argument("query", help='the question; "-" reads it from standard input')
    s.add_argument("-k", type=int, default=5, help="number of results (>= 1)")
    s.add_argument("--mode", choices=["dense", "bm25", "hybrid"], default="hybrid")
    s.add_argument("--explain", action="store_true", help="show ranks and BM25 term weights")
    s.add_argument("--rerank", action="store_true", help="re-rank the top 20 by cross-encoder")
    add_retriever_options(s)

    s = add("eval", cmd_eval, print_eval, "Recall@k, MRR, nDCG, latency for every config")
    s.add_argument("--split", choices=SPLITS, default="test",
                   help="test (blind: aggregate rows only) or dev (also each miss)")
    s.add_argument("--set", type=Path, help="a questions file of your own instead of a split")
    s.add_argument("--no-sweep", action="store_true", help="skip the chunk-size sweep")
    s.add_argument("--plots", type=Path, default=Path("results"), help="folder for PNG plots")

    s = add("ask", cmd_ask, print_ask, "answer a question with citations, or abstain")
    s.add_argument("question", help='the question; "-" reads it from standard input')
    s.add_argument("-k", type=int, default=3, help="chunks to retrieve (>= 1)")
    s.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                   help="re-rank with the cross-encoder (default: the pipeline's choice)")
    add_retriever_options(s)
    adapters = s.add_mutually_exclusive_group()
    adapters.add_argument("--adapter", type=Path, help="a LoRA adapter (default: the pipeline's)")
    adapters.add_argument("--no-adapter", action="store_true", help="read with the base alone")

    s = add("train", cmd_train, print_train, "rebuild shipped artifacts in data/models/", kb=False)
    s.add_argument("what", choices=["tokenizer", "encoder", "thesaurus", "reader", "reranker",
                                   "adapter", "all"])

    add("demo", cmd_demo, print_demo, "show the pipeline on the shipped artifacts")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    warnings.formatwarning = lambda message, *_: f"minirag: warning: {message}\n"  # one line
    try:
        result = args.func(args)
    except USER_ERRORS as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"minirag: error: {msg}", file=sys.stderr)
        return 1
    try:
        if args.json:
            print(json.dumps(result, ensure_ascii=False))
        else:
            args.printer(result)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader of a pipe stopped early (`| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush at exit
    return 0
