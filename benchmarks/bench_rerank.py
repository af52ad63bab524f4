"""Re-ranking cost: the cross-encoder on the first stage's top 20, and its share of a whole
`rag_answer`, on the shipped artifacts and the KB.

Queries: the KB's own section headings ("Past simple Form"), never an eval question. Per
query, the medians of: the first stage (hybrid bi-encoder + BM25, top 20); re-ranking those
20 with the chunks' keys and values already cached (the steady state: each chunk's half is
computed once); re-ranking them cold (cache emptied before every call: the chunks' halves run
too); re-ranking without the cache at all (every (chunk, query) sequence run whole, as
training does); and the whole pipeline answer with and without re-ranking.

Run: python benchmarks/bench_rerank.py [--quick]   (full: ~1 min)
"""

from __future__ import annotations

import argparse

import numpy as np
from common import environment, median_ms, table

from minirag.pipeline import RAGPipeline, rag_answer
from minirag.retrieve import Retriever

N = 20  # candidates re-ranked: the Retriever's default first stage


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer queries (~15 s)")
    args = ap.parse_args(argv)
    environment()
    pipe = RAGPipeline.from_defaults(rerank=True)
    r, ce, reader = pipe.retriever, pipe.retriever.reranker, pipe.reader
    plain = Retriever(r.store, r.bm25)
    chunks = r.store.chunks
    queries = list(dict.fromkeys(f"{c.metadata.get('title', '')} {c.metadata['section']}"
                                 for c in chunks))[: 40 if args.quick else 150]
    first = {q: [c for c, _ in plain.retrieve_scored(q, N)] for q in queries}
    ce.score(queries[0], chunks)  # warm: every chunk's states cached

    def whole(q):  # no cache: each (chunk, query) sequence through the whole model
        ids, last, segments = ce.sequences(np.array([ce.passage_ids(c) for c in first[q]]),
                                           [ce.query_ids(q)] * len(first[q]))
        return ce.model.scores(ids, last, segments)

    def cold(q):  # this query's chunks computed afresh; the others stay cached
        kept = {c.id: ce._states.pop(c.id) for c in first[q]}
        ce.score(q, first[q])
        ce._states.update(kept)

    ms = median_ms({"first stage (top 20)": lambda q: plain.retrieve_scored(q, N),
                    "re-rank 20, cached chunks": lambda q: ce.score(q, first[q]),
                    "re-rank 20, cold": cold,
                    "re-rank 20, no cache": whole}, queries, warmup=3)
    ce.score(queries[0], chunks)
    ms.update(median_ms({"rag_answer": lambda q: rag_answer(q, plain, reader),
                         "rag_answer + re-rank": lambda q: rag_answer(q, r, reader)},
                        queries, warmup=3))
    share = ms["re-rank 20, cached chunks"] / ms["rag_answer + re-rank"]
    print(table(["step", "p50 ms"], [(k, v) for k, v in ms.items()]))
    print(f"re-ranking is {share:.0%} of a re-ranked answer; the cache makes it "
          f"{ms['re-rank 20, no cache'] / ms['re-rank 20, cached chunks']:.1f}x faster than "
          f"running each pair whole ({len(queries)} queries)")
    return {"p50_ms": ms, "rerank_share": share}


if __name__ == "__main__":
    main()
