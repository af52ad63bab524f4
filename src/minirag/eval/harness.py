"""The evaluation harness: every retriever configuration over the labelled questions.

What it is: run each configuration (dense hashing, BM25, hybrid, the bi-encoder rows when its
weights exist, the teacher's when it is installed) over one split's questions
(data/eval/{dev,test}/retrieval.jsonl); Recall@{1,3,5,10}, MRR@10, nDCG@10 and query latency
p50/p95, overall, for the verb set, and per question type and topic; PNG plots under
results/. On dev it also lists each miss and sweeps chunk size and overlap and the dense
weight of weighted RRF (tuning happens there: eval/fusion.py); on test it reports aggregate
rows only, so the blind split stays blind. Metrics: minirag.eval.metrics (theory/04).
"""

from __future__ import annotations

import platform
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from minimodel.checkpoint import CheckpointError
from minirag.bm25 import tokenize
from minirag.chunk import Chunk
from minirag.encoders.minilm import TeacherMissing
from minirag.encoders.thesaurus import THESAURUS_PATH, Thesaurus
from minirag.eval.fusion import CHOSEN_ON_DEV, replace_weights, sweep_fusion
from minirag.eval.metrics import hit_at_k, mean_of, mrr, ndcg_at_k, percentile, recall_at_k
from minirag.files.artifacts import kb_sha256
from minirag.files.kb import DEFAULT_EVAL, DEFAULT_KB, eval_set, load_questions
from minirag.index.cache import Index, IndexConfig, build_index, load_or_build_index
from minirag.rerank.cross_encoder import RERANKER_PATH, CrossEncoder
from minirag.retrieve import Retriever

KS = (1, 3, 5, 10)
RARE_SHARE = 0.1  # a word in fewer than this share of the KB's sections carries content
SWEEP = ((32, 0), (32, 8), (64, 0), (64, 12), (150, 0), (150, 20), (300, 0), (300, 40))


def configurations(kb: Path = DEFAULT_KB) -> dict[str, tuple[Retriever, str]]:
    """Config name (DESIGN §3 cli) -> (retriever, mode); bi-encoder rows only if it is shipped,
    the teacher's (minilm) only if it is installed (`make teacher`), "+rerank" rows (each
    hybrid's top 20, re-ranked by the cross-encoder) only if the re-ranker is shipped,
    "+thesaurus" rows (the query expanded, encoders/thesaurus.py) only if the thesaurus is."""
    configs = {}
    reranker = CrossEncoder.load() if RERANKER_PATH.is_file() else None  # one cache for all
    thesaurus = Thesaurus.load() if THESAURUS_PATH.is_file() else None
    for embedder in ("hashing", "biencoder", "minilm"):
        try:
            index = load_or_build_index(kb, IndexConfig(embedder=embedder))
        except TeacherMissing:
            continue  # no teacher installed: its rows are left out, not faked
        except (FileNotFoundError, ImportError, ValueError):
            if embedder != "biencoder":
                raise
            continue  # no trained bi-encoder yet: its rows are left out, not faked
        r = Retriever(index.store, index.bm25)
        configs[f"dense({embedder})"] = (r, "dense")
        if embedder == "hashing":
            configs["bm25"] = (r, "bm25")
        variants = {"": {}, "+rows": {"rows": True}}  # name suffix -> the Retriever's options
        if thesaurus is not None:
            variants["+rows+thesaurus"] = {"rows": True, "thesaurus": thesaurus}
        for suffix, options in variants.items():
            configs[f"hybrid({embedder}+bm25{suffix})"] = (
                Retriever(index.store, index.bm25, **options), "hybrid")
        if reranker is not None:
            for suffix, options in variants.items():
                configs[f"hybrid({embedder}+bm25{suffix})+rerank"] = (
                    Retriever(index.store, index.bm25, reranker=reranker, **options), "hybrid")
        weighted = replace_weights(r, (CHOSEN_ON_DEV[embedder], 1.0))
        configs[f"wrrf({embedder}+bm25)"] = (weighted, "hybrid")
    return configs


def score_question(retriever: Retriever, mode: str, q: dict) -> dict:
    """Per-question metrics and latency for one configuration."""
    t0 = time.perf_counter()
    results = retriever.retrieve_scored(q["question"], max(KS), mode)
    ms = (time.perf_counter() - t0) * 1000
    keys = [(c.doc_id, c.metadata["section"]) for c, _ in results]
    gold = {(g["doc_id"], g["section"]) for g in q["gold"]}
    out = {f"recall@{k}": recall_at_k(keys, gold, k) for k in KS}
    out.update({"hit@5": hit_at_k(keys, gold, 5), "mrr@10": mrr(keys, gold, 10),
                "ndcg@10": ndcg_at_k(keys, gold, 10), "ms": ms, "top": keys[:5]})
    return out


def groups_of(q: dict) -> list[str]:
    gs = ["all", f"type:{q['type']}", f"topic:{q['topic']}"]
    return gs + (["verb"] if q["topic"] == "verb-conjugation" else [])


def aggregate(config: str, per_q: list[tuple[dict, dict]]) -> list[dict]:
    """One row per group: means of the metrics, latency percentiles."""
    by_group: dict[str, list[dict]] = defaultdict(list)
    for q, m in per_q:
        for g in groups_of(q):
            by_group[g].append(m)
    rows = []
    for g, ms in by_group.items():
        row = {"config": config, "group": g, "n": len(ms)}
        for key in [f"recall@{k}" for k in KS] + ["mrr@10", "ndcg@10"]:
            row[key] = mean_of(ms, key)
        lat = [m["ms"] for m in ms]
        row["p50_ms"], row["p95_ms"] = round(percentile(lat, 50), 3), round(percentile(lat, 95), 3)
        rows.append(row)
    order = {"all": 0, "verb": 1}
    return sorted(rows, key=lambda r: (order.get(r["group"], 2), r["group"]))


def lexical_gaps(questions: list[dict], chunks: list[Chunk]) -> set[str]:
    """Ids of the questions that share no rare word with any of their gold sections.

    A rare word is one (BM25's tokenizer) in fewer than RARE_SHARE of the KB's sections. Such
    a question and its gold section have only common words in common ("the", "past", "which"),
    so a ranker that matches words has nothing to single the section out by: this is the
    vocabulary mismatch that dense encoders are meant to bridge (theory/04).
    Example: sections {"a": "the w1", ..., "k": "the w11"}; "the w3" with gold "c" is no gap,
    "the thing" is one, and so is "w5 stuff" (w5 is rare, but not in section "c").
    """
    words: dict[tuple[str, str], set[str]] = defaultdict(set)  # section -> its words
    for c in chunks:
        words[(c.doc_id, c.metadata["section"])].update(tokenize(c.text))
    df = Counter(w for ws in words.values() for w in ws)  # sections per word
    rare = {w for w, n in df.items() if n < RARE_SHARE * len(words)}
    gold_words = lambda q: set().union(  # noqa: E731
        *(words.get((g["doc_id"], g["section"]), set()) for g in q["gold"]))
    return {q["id"] for q in questions if not set(tokenize(q["question"])) & rare & gold_words(q)}


def evaluate_retrieval(questions: list[dict], configs: dict, gaps: frozenset[str] = frozenset()
                       ) -> tuple[list[dict], dict]:
    """All rows, and the questions each configuration missed at k = 5, each marked with
    `lexical_gap` (its id is in `gaps`, see `lexical_gaps`)."""
    rows, misses = [], {}
    for name, (retriever, mode) in configs.items():
        retriever.retrieve_scored(questions[0]["question"], 1, mode)  # warm-up: caches, BLAS
        per_q = [(q, score_question(retriever, mode, q)) for q in questions]
        rows += aggregate(name, per_q)
        misses[name] = [{"id": q["id"], "question": q["question"], "type": q["type"],
                         "gold": q["gold"], "top": m["top"], "lexical_gap": q["id"] in gaps}
                        for q, m in per_q if m["hit@5"] == 0.0]
    return rows, misses


def sweep_chunking(questions: list[dict], kb: Path = DEFAULT_KB) -> list[dict]:
    """Hybrid (hashing + BM25) quality and index size for each (chunk size, overlap)."""
    rows = []
    for target, overlap in SWEEP:
        index: Index = build_index(kb, IndexConfig("hashing", target, overlap))
        r = Retriever(index.store, index.bm25)
        per_q = [score_question(r, "hybrid", q) for q in questions]
        rows.append({"target_tokens": target, "overlap": overlap, "chunks": len(index.chunks),
                     "mean_tokens": round(float(np.mean(
                         [c.metadata["n_tokens"] for c in index.chunks])), 1),
                     **{key: mean_of(per_q, key) for key in ("recall@1", "recall@5", "mrr@10")}})
    return rows


def reader_rows(configs: dict, questions: list[dict], eval_path: Path) -> list[dict]:
    """The reader's rows (eval/reading.py) if a trained reader is shipped, else []: the
    retrieved rows once per plain hybrid configuration, the pipeline's first (with its table
    rows, `+rows`); of the re-ranked ones only the pipeline encoder's (so that re-ranking and
    row lookup can each be compared with the plain hybrid).
    With the shipped LoRA adapter, its rows too (`reader` "+choice adapter", routed: the
    pipeline's reader; "shipped" is the base alone), on the pipeline's retriever only: what it
    gains and what it costs."""
    from minirag.pipeline import DEFAULT_EMBEDDER, DEFAULT_RERANK, DEFAULT_ROWS, DEFAULT_THESAURUS
    from minirag.reader import ADAPTER_PATH, READER_PATH, Reader
    if not READER_PATH.is_file():
        return []
    from minirag.eval.reading import evaluate_reader
    plain = f"hybrid({DEFAULT_EMBEDDER}+bm25)"
    pipe = f"hybrid({DEFAULT_EMBEDDER}+bm25+rows)"
    pipe = pipe if DEFAULT_ROWS and pipe in configs else plain
    expanded = pipe.removesuffix(")") + "+thesaurus)"
    pipe = expanded if DEFAULT_THESAURUS and expanded in configs else pipe
    first = pipe + "+rerank" if DEFAULT_RERANK and pipe + "+rerank" in configs else pipe
    names = [first] + [n for n in configs if n.startswith("hybrid") and n != first
                       and not n.endswith(("+rows)", "+thesaurus)"))
                       and (not n.endswith("+rerank") or n == plain + "+rerank")]
    retrievers = {n: configs[n][0] for n in names}
    unanswerable_path = Path(eval_path).with_name("unanswerable.jsonl")
    unanswerable = load_questions(unanswerable_path) if unanswerable_path.is_file() else []
    chunks = retrievers[first].store.chunks
    out = [{**r, "reader": "shipped"} for r in evaluate_reader(
        Reader.load(), retrievers, chunks, questions, unanswerable)]
    if ADAPTER_PATH.is_file():
        try:
            adapted = Reader.load(adapter=ADAPTER_PATH)
        except CheckpointError as e:  # made for a reader since rebuilt: say so, score the rest
            print(f"warning: adapter rows left out: {e} (rebuild it: minirag train adapter)",
                  file=sys.stderr)
            return out
        out += [{**r, "reader": "+choice adapter"} for r in evaluate_reader(
            adapted, {first: retrievers[first]}, chunks, questions, unanswerable)]
    return out


def environment(kb: Path, n_questions: int) -> dict:
    return {"python": platform.python_version(), "numpy": np.__version__,
            "machine": platform.machine(), "kb_sha256": kb_sha256(kb)[:16],
            "questions": n_questions}


def split_of(path: Path) -> str:
    """"test" for a set inside data/eval/test/, "dev" inside data/eval/dev/, else "custom"."""
    for split in ("test", "dev"):
        if (DEFAULT_EVAL / split).resolve() in Path(path).resolve().parents:
            return split
    return "custom"


def run(split: str = "test", kb: Path = DEFAULT_KB, sweep: bool = True,
        plots_dir: Path | None = None, questions_path: Path | None = None) -> dict:
    """Everything `minirag eval` reports, as one JSON-able dict (DESIGN §3 cli).

    `questions_path` (a set of one's own) overrides the split's retrieval.jsonl. A test-split
    report holds aggregate rows only: no misses, no question ids, no sweep."""
    eval_path = Path(questions_path) if questions_path else eval_set(split)
    split = split_of(eval_path)
    questions = [q for q in load_questions(eval_path) if q["gold"]]
    if not questions:
        raise ValueError(f"{eval_path}: no answerable questions to evaluate")
    configs = configurations(kb)
    gaps = frozenset(lexical_gaps(questions, next(iter(configs.values()))[0].store.chunks))
    rows, misses = evaluate_retrieval(questions, configs, gaps)
    report = {"split": split, "retrieval": rows,
              "reader": reader_rows(configs, questions, eval_path),
              "env": environment(kb, len(questions))}
    if split != "test":
        report.update(misses=misses, lexical_gaps=sorted(gaps),
                      sweep=sweep_chunking(questions, kb) if sweep else [],
                      fusion_sweep={name: sweep_fusion(r, questions, score_question)
                                    for name, (r, mode) in configs.items()
                                    if name.startswith("hybrid") and "+rerank" not in name}
                      if sweep else {})
    if plots_dir is not None:
        from minirag.eval.plots import plot_report
        report["plots"] = [str(p) for p in plot_report(report, Path(plots_dir))]
    return report
