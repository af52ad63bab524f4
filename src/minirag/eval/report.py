"""Plain-text tables of an evaluation report, as `minirag eval` prints them."""

from __future__ import annotations

READER_COLUMNS = ("answer_in_prompt", "exact_match", "reading_accuracy", "citation_accuracy",
                  "abstention_rate", "false_abstention_rate", "false_abstention_in_prompt")
COLUMNS = ("n", "recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10",
           "p50_ms", "p95_ms")


def table(rows: list[dict], keys: list[str], headers: list[str] | None = None) -> str:
    """A fixed-width table; floats print with 3 decimals."""
    headers = headers or keys
    cells = [[f"{r[k]:.3f}" if isinstance(r[k], float) else str(r[k]) for k in keys]
             for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    line = lambda vals: "  ".join(v.ljust(w) if i == 0 else v.rjust(w)  # noqa: E731
                                  for i, (v, w) in enumerate(zip(vals, widths)))
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(c) for c in cells])


def format_eval(report: dict) -> str:
    rows = report["retrieval"]
    out = [f"Split: {report.get('split', 'custom')}" + (
        " (blind: aggregate figures only; read failures on --split dev)"
        if report.get("split") == "test" else ""), ""]
    for group, title in (("all", "All questions"), ("verb", "Verb-conjugation questions")):
        sel = [r for r in rows if r["group"] == group]
        if sel:
            out.append(f"{title} (n={sel[0]['n']})")
            out.append(table(sel, ["config", *COLUMNS]))
            out.append("")
    configs = list(dict.fromkeys(r["config"] for r in rows))
    for prefix, title in (("type:", "Recall@5 by question type"),
                          ("topic:", "Recall@5 by topic")):
        groups = sorted({r["group"] for r in rows if r["group"].startswith(prefix)})
        if not groups:
            continue
        cell = {(r["config"], r["group"]): r for r in rows}
        grid = [{"group": g[len(prefix):], "n": cell[(configs[0], g)]["n"],
                 **{c: cell[(c, g)]["recall@5"] for c in configs}} for g in groups]
        out.append(title)
        out.append(table(grid, ["group", "n", *configs]))
        out.append("")
    if report.get("reader"):
        out.append("Reader (MiniGPT span reader, k = 3 retrieved chunks; answer_in_prompt: the "
                   "gold answer is in one window of the prompt, the most exact_match can be; "
                   "reading_accuracy and false_abstention_in_prompt: among those questions)")
        out.append(table([{**r, "retriever": r.get("retriever") or "-",
                           "reader": r.get("reader", "shipped"),
                           **{k: "-" if r[k] is None else r[k] for k in READER_COLUMNS}}
                          for r in report["reader"]],
                         ["reader", "context", "retriever", "group", "n", *READER_COLUMNS]))
        out.append("")
    if report.get("sweep"):
        out.append("Chunk size and overlap sweep, hybrid(hashing+bm25)")
        out.append(table(report["sweep"], ["target_tokens", "overlap", "chunks", "mean_tokens",
                                           "recall@1", "recall@5", "mrr@10"]))
        out.append("")
    for name, rows in report.get("fusion_sweep", {}).items():
        out.append(f"Weighted RRF on this split, {name}: the dense list's weight (BM25's is 1)")
        out.append(table(rows, ["dense_weight", "recall@5", "mrr@10"]))
        out.append("")
    n_gaps = len(report.get("lexical_gaps", []))
    for name, missed in report.get("misses", {}).items():
        if name.startswith("hybrid") and missed:
            gap = sum(m["lexical_gap"] for m in missed)
            out.append(f"{name} misses at k=5 ({len(missed)}; * = no rare word in common with "
                       f"the gold section: {gap} of the {n_gaps} such questions missed):")
            out += [f"  {'*' if m['lexical_gap'] else ' '} {m['id']} [{m['type']}] "
                    f"{m['question']!r} -> gold {m['gold'][0]['doc_id']} § "
                    f"{m['gold'][0]['section']}" for m in missed]
            out.append("")
    if report.get("plots"):
        out.append("plots: " + ", ".join(report["plots"]))
    return "\n".join(out)
