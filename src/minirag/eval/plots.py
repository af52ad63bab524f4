"""PNG plots of an evaluation report (matplotlib, headless): Recall@k, latency, chunk sweep."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed: files only
import matplotlib.pyplot as plt  # noqa: E402

KS = (1, 3, 5, 10)


def plot_report(report: dict, out_dir: Path) -> list[Path]:
    """Write recall_at_k.png, latency.png and (if swept) chunk_sweep.png; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    overall = [r for r in report["retrieval"] if r["group"] == "all"]
    paths = []

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in overall:
        ax.plot(KS, [r[f"recall@{k}"] for k in KS], marker="o", label=r["config"])
    ax.set(xlabel="k", ylabel="Recall@k", xticks=KS, ylim=(0, 1.02),
           title=f"Recall@k, {report.get('split', 'custom')} split")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    paths.append(_save(fig, out_dir / "recall_at_k.png"))

    fig, ax = plt.subplots(figsize=(6, 4))
    x = range(len(overall))
    ax.bar([i - 0.2 for i in x], [r["p50_ms"] for r in overall], width=0.4, label="p50")
    ax.bar([i + 0.2 for i in x], [r["p95_ms"] for r in overall], width=0.4, label="p95")
    ax.set_xticks(list(x), [r["config"] for r in overall], rotation=20, fontsize=8)
    ax.set(ylabel="ms per query", title="Query latency")
    ax.legend()
    paths.append(_save(fig, out_dir / "latency.png"))

    if report.get("sweep"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for overlap_zero in (True, False):
            rows = [r for r in report["sweep"] if (r["overlap"] == 0) == overlap_zero]
            ax.plot([r["target_tokens"] for r in rows], [r["recall@5"] for r in rows],
                    marker="o", label="no overlap" if overlap_zero else "with overlap")
        ax.set(xscale="log", xlabel="target chunk size (tokens)", ylabel="hybrid Recall@5",
               title="Chunk size vs retrieval quality", ylim=(0, 1.02))
        ax.grid(alpha=0.3)
        ax.legend()
        paths.append(_save(fig, out_dir / "chunk_sweep.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
