"""BM25Index against bm25s (numpy backend) and rank_bm25 on a synthetic Zipf corpus.

The corpus: 100,000 chunks of 20-120 words drawn from a 50,000-word vocabulary with Zipf
frequencies (exponent 1.1), and 200 queries of 2-5 words drawn the same way (so most queries
hold a very common word, as real ones do). Queries are timed pre-tokenised, as term ids for
ours and bm25s and as token lists for rank_bm25 (DESIGN §7), top-10 included; builds are timed
from token lists, and end to end from text with each library's own tokenizer.

Run: python benchmarks/bench_bm25.py [--quick]   (full: ~2 min)
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from common import best_ms, environment, median_ms, table

from minirag.bm25 import BM25Index
from minirag.chunk import Chunk

K, SEED, VOCAB, ZIPF = 10, 0, 50_000, 1.1


def zipf_corpus(rng: np.random.Generator, n_docs: int, n_queries: int):
    """Token lists for the chunks and the queries, words "w0" (commonest) .. "w49999"."""
    words = [f"w{i}" for i in range(VOCAB)]
    p = 1.0 / np.arange(1, VOCAB + 1) ** ZIPF
    p /= p.sum()
    lens = rng.integers(20, 121, size=n_docs)
    flat = rng.choice(VOCAB, size=int(lens.sum()), p=p).tolist()
    ends = np.cumsum(lens).tolist()
    docs = [[words[i] for i in flat[a:z]] for a, z in zip([0] + ends[:-1], ends, strict=True)]
    queries = [[words[i] for i in rng.choice(VOCAB, size=rng.integers(2, 6), p=p)]
               for _ in range(n_queries)]
    return docs, queries


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10,000 chunks instead of 100,000")
    args = ap.parse_args(argv)
    import bm25s
    import rank_bm25

    env = environment(bm25s=bm25s.__version__, rank_bm25="0.2.2")
    n = 10_000 if args.quick else 100_000
    docs, queries = zipf_corpus(np.random.default_rng(SEED), n, 200)
    texts = [" ".join(d) for d in docs]
    chunks = [Chunk(f"{i:012x}", t, "bench", i) for i, t in enumerate(texts)]

    # ---- build
    def ours_build(tokenized=True):
        ix = BM25Index()
        if tokenized:
            ix.add_tokens(chunks, docs)
        else:
            ix.add(chunks)
        return ix

    def bm25s_build(tokenized=True):
        ref = bm25s.BM25(method="lucene", idf_method="lucene", k1=1.2, b=0.75, backend="numpy")
        corpus = docs if tokenized else bm25s.tokenize(texts, stopwords=None, show_progress=False)
        ref.index(corpus, show_progress=False)
        return ref

    build = {
        "ours": best_ms(ours_build), "bm25s": best_ms(bm25s_build),
        "rank_bm25": best_ms(lambda: rank_bm25.BM25Okapi(docs, k1=1.2, b=0.75), repeats=1),
        "ours_from_text": best_ms(lambda: ours_build(False)),
        "bm25s_from_text": best_ms(lambda: bm25s_build(False)),
    }
    ours, ref, okapi = ours_build(), bm25s_build(), rank_bm25.BM25Okapi(docs, k1=1.2, b=0.75)

    # ---- queries, pre-tokenised: (our term ids, bm25s term ids, tokens); bm25s refuses words
    # it has not indexed, so the rare words the corpus lacks are dropped from every query.
    queries = [kept for q in queries if (kept := [t for t in q if t in ours.vocab])]
    q_in = [(ours.term_ids(q), [ref.vocab_dict[t] for t in q], q) for q in queries]

    def bm25s_search(ids):
        return bm25s.selection.topk(ref.get_scores_from_ids(ids), K, backend="numpy")

    def rank_bm25_search(tokens):
        s = okapi.get_scores(tokens)
        return np.argsort(s)[::-1][:K]  # what its get_top_n does

    search = median_ms({"ours": lambda q: ours.search_ids(q[0], K),
                        "bm25s": lambda q: bm25s_search(q[1]),
                        "rank_bm25": lambda q: rank_bm25_search(q[2])}, q_in, warmup=5)
    score = median_ms({"ours": lambda q: ours.scores_ids(q[0]),
                       "bm25s": lambda q: ref.get_scores_from_ids(q[1])}, q_in)

    # ---- same answers? bm25s keeps float32 scores and orders ties its own way: count the
    # queries whose top-10 ids are identical, and those whose top-10 scores agree to 1e-6.
    same_ids = same_scores = 0
    for ids, rids, _ in q_in:
        rows, s = ours.search_ids(ids, K)
        r_scores, r_rows = bm25s_search(rids)  # bm25s pads with zero-score chunks; ours stops
        m = len(rows)
        same_ids += rows.tolist() == r_rows[:m].tolist()
        same_scores += bool(np.allclose((1.2 + 1) * r_scores[:m], s, rtol=1e-6, atol=0)
                            and not r_scores[m:].any())  # bm25s drops Okapi's (k1 + 1)
    figures = {"n": n, "build_ms": build, "search_ms": search, "score_ms": score,
               "search_vs_bm25s": search["ours"] / search["bm25s"],
               "speedup_vs_rank_bm25": search["rank_bm25"] / search["ours"],
               "build_vs_bm25s": build["ours"] / build["bm25s"],
               "same_top10_ids": same_ids, "same_top10_scores": same_scores,
               "postings": len(ours.doc), "terms": len(ours.vocab)}
    print(f"\n{n:,} chunks, {len(ours.vocab):,} terms, {len(ours.doc):,} postings; "
          f"{len(q_in)} queries of 1-5 words, top-{K}")
    print(table(["ms", "ours", "bm25s", "rank_bm25", "ours/bm25s", "rank_bm25/ours"], [
        ("query (median)", search["ours"], search["bm25s"], search["rank_bm25"],
         figures["search_vs_bm25s"], figures["speedup_vs_rank_bm25"]),
        ("scoring only", score["ours"], score["bm25s"], "", score["ours"] / score["bm25s"], ""),
        ("build, token lists", build["ours"], build["bm25s"], build["rank_bm25"],
         figures["build_vs_bm25s"], build["rank_bm25"] / build["ours"]),
        ("build, from text", build["ours_from_text"], build["bm25s_from_text"], "",
         build["ours_from_text"] / build["bm25s_from_text"], ""),
    ]))
    print(f"top-10 vs bm25s: identical ids in {same_ids}/{len(q_in)} queries, identical scores "
          f"(to 1e-6) in {same_scores}/{len(q_in)}: the rest differ in how ties are ordered")
    return {"env": env, **figures}


if __name__ == "__main__":
    main(sys.argv[1:])
