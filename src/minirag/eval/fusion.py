"""Choosing the weights of weighted RRF on the dev split, and only there.

What it is: `sweep_fusion` scores one hybrid retriever's fused ranking for each weight of the
dense list (BM25's weight stays 1) and returns Recall@5 and MRR@10 per weight; `best_weight`
picks the weight with the best MRR@10 (Recall@5, then the smaller weight, break ties). The
harness runs the sweep on `--split dev` only: a weight chosen on the questions it is reported
on would be one more look at them (theory/04).
What it leaves out: fusing raw scores (theory/03 shows why ranks are the safer currency).
"""

from __future__ import annotations

from minirag.eval.metrics import mean_of
from minirag.retrieve import Retriever

DENSE_WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)  # BM25's weight is 1
# embedder -> the dense weight `best_weight` picked from `minirag eval --split dev`'s sweep:
# the weights of the wrrf(<embedder>+bm25) rows, which are then reported on test
CHOSEN_ON_DEV = {"hashing": 0.25, "biencoder": 0.5, "minilm": 0.5}


def sweep_fusion(retriever: Retriever, questions: list[dict], score_question,
                 weights: tuple[float, ...] = DENSE_WEIGHTS) -> list[dict]:
    """One row per dense weight w: {"dense_weight", "recall@5", "mrr@10"} of RRF with
    weights (w, 1). `score_question(retriever, mode, q)` is the harness's per-question scorer."""
    rows = []
    for w in weights:
        r = replace_weights(retriever, (w, 1.0))
        per_q = [score_question(r, "hybrid", q) for q in questions]
        rows.append({"dense_weight": w, "recall@5": mean_of(per_q, "recall@5"),
                     "mrr@10": mean_of(per_q, "mrr@10")})
    return rows


def best_weight(rows: list[dict]) -> float:
    """The dense weight with the best MRR@10, then Recall@5, then the smaller weight."""
    return max(rows, key=lambda r: (r["mrr@10"], r["recall@5"], -r["dense_weight"]))[
        "dense_weight"]


def replace_weights(retriever: Retriever, weights: tuple[float, float]) -> Retriever:
    """The same store and BM25 index (and row lookup, if any), fused with other weights."""
    return Retriever(retriever.store, retriever.bm25, retriever.k_rrf, retriever.depth, weights,
                     rows=retriever.rows, thesaurus=retriever.thesaurus)

