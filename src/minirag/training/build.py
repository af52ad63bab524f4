"""`make models`: rebuild every shipped artifact in data/models/ and its MANIFEST entry.

Deterministic: the same KB and code give the same bytes (DESIGN §5). The vocabulary size
was chosen by measurement (lab 05, theory/06): see VOCAB_SIZE.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from minirag.bm25 import tokenize
from minirag.chunk import load_kb
from minirag.encoders.biencoder import BIENCODER_PATH, BiEncoderConfig, MiniBiEncoder
from minirag.encoders.minilm import MiniLMEmbedder, teacher_fingerprint, teacher_installed
from minirag.encoders.thesaurus import STEM, TAU, THESAURUS_PATH, M, build_thesaurus
from minirag.files.artifacts import (
    MANIFEST_PATH,
    TOKENIZER_PATH,
    kb_sha256,
    load_tokenizer,
    read_manifest,
    write_manifest,
)
from minirag.files.kb import DEFAULT_KB, REPO_ROOT, read_kb
from minirag.files.special_tokens import SPECIAL_TOKENS
from minirag.prompt import STOPWORDS
from minirag.training.adapter_train import build_adapter
from minirag.training.encoder_train import TrainConfig, train
from minirag.training.reader_train import build_reader
from minirag.training.rerank_train import build_reranker
from minitokenizer import BPETokenizer

VOCAB_SIZE = 2048  # merges + 256 bytes + specials; the measurement is in theory/06


def kb_text(kb: Path = DEFAULT_KB) -> str:
    """The training text of the tokenizer: every KB document, in doc-id order."""
    return "\n\n".join(d.text for d in read_kb(kb))


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.split()) >= 3]


def build_tokenizer(kb: Path = DEFAULT_KB, vocab_size: int = VOCAB_SIZE,
                    out: Path = TOKENIZER_PATH) -> dict:
    """Train the project tokenizer on the KB, save it, and return its MANIFEST entry."""
    text = kb_text(kb)
    t0 = time.perf_counter()
    tok = BPETokenizer.train(text, vocab_size, SPECIAL_TOKENS)
    seconds = time.perf_counter() - t0
    tok.save(out)
    load_tokenizer.cache_clear()
    sents = sentences(text)
    return {"file": Path(out).name, "sha256": hashlib.sha256(Path(out).read_bytes()).hexdigest(),
            "kb_sha256": kb_sha256(kb), "vocab_size": vocab_size,
            "special_tokens": SPECIAL_TOKENS, "train_seconds": round(seconds, 2),
            "tokens_per_kb_sentence": round(
                sum(tok.token_count(s) for s in sents) / len(sents), 2)}


def plot_loss(hist: dict, path: Path) -> Path:
    """The training loss and the held-out scores against step, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    ax.plot(hist["step"], hist["loss"], lw=0.8, alpha=0.8, label="InfoNCE loss (one batch)")
    ax.set(xlabel="step", ylabel="loss", title="MiniBiEncoder training")
    ax2 = ax.twinx()
    for i, (key, label) in enumerate((("cut_mrr@10", "held-out MRR@10, cut"),
                                      ("kw_mrr@10", "... keywords"), ("fact_mrr@10", "... facts"))):
        ax2.plot(hist["eval_step"], [h.get(key, 0) for h in hist["held_out"]], "o-", ms=3,
                 label=label, color=f"C{i + 1}")
    ax2.set(ylabel="held-out MRR@10", ylim=(0, 1))
    fig.legend(loc="upper center", fontsize=8, ncol=3)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def build_biencoder(kb: Path = DEFAULT_KB, out: Path = BIENCODER_PATH,
                    arch: BiEncoderConfig | None = None, cfg: TrainConfig | None = None,
                    log=lambda s: print(s, file=sys.stderr, flush=True)) -> dict:
    """Train the bi-encoder on the KB, save it, plot its loss, and return its MANIFEST entry.
    Progress lines (loss, pairs/s, held-out scores) go to `log`: stderr by default."""
    arch, cfg, tok = arch or BiEncoderConfig(), cfg or TrainConfig(), load_tokenizer()
    if cfg.init == "teacher" and not teacher_installed():
        log(f"the teacher (all-MiniLM-L6-v2) is not installed (`make teacher`): the distilled "
            f"bi-encoder cannot be rebuilt; keeping {out} as shipped")
        return read_manifest(MANIFEST_PATH).get("biencoder", {})
    model = MiniBiEncoder(replace(arch, vocab_size=len(tok)), tok,
                          np.random.default_rng(cfg.seed))
    hist = train(model, load_kb(kb, tokenizer=tok), cfg, log)
    model.save(out)
    png = plot_loss(hist, REPO_ROOT / "results" / "biencoder_loss.png")
    log(f"saved {out} (loss curve: {png})")
    return {"file": Path(out).name, "sha256": hashlib.sha256(Path(out).read_bytes()).hexdigest(),
            "kb_sha256": kb_sha256(kb), "config": model.config, "train": asdict(cfg),
            "train_seconds": hist["seconds"], "pairs": hist["pairs"],
            "pairs_per_s": hist["pairs_per_s"], "best_step": hist["best_step"],
            "final_loss": round(float(np.mean(hist["loss"][-25:])), 4),
            "held_out": hist["held_out"][hist["eval_step"].index(hist["best_step"])]}


def build_thesaurus_file(kb: Path = DEFAULT_KB, out: Path = THESAURUS_PATH,
                         log=lambda s: print(s, file=sys.stderr, flush=True)) -> dict:
    """The teacher's thesaurus of the words the KB lacks (encoders/thesaurus.py), saved, and its
    MANIFEST entry. KB words: BM25's tokens of the KB, alphabetic, 3+ letters, no stopwords;
    other words: the teacher's whole-word vocabulary the same way, minus the KB's. Without the
    teacher installed it says so and keeps the shipped file."""
    if not teacher_installed():
        log(f"the teacher (all-MiniLM-L6-v2) is not installed (`make teacher`): the thesaurus "
            f"cannot be rebuilt; keeping {out} as shipped")
        return read_manifest(MANIFEST_PATH).get("thesaurus", {})
    t0 = time.perf_counter()
    embedder = MiniLMEmbedder()
    words = lambda ws: {w for w in ws if w.isalpha() and w.islower() and len(w) >= 3}  # noqa: E731
    kb_words = sorted(words(w for d in read_kb(kb) for w in tokenize(d.text)) - STOPWORDS)
    other = sorted(words(embedder.encoder.tokenizer.vocab) - STOPWORDS - set(kb_words))
    thesaurus = build_thesaurus(kb_words, other, embedder.embed)
    meta = {"tau": TAU, "m": M, "stem": STEM, "teacher": teacher_fingerprint()[:16]}
    thesaurus.save(out, **meta)
    seconds = round(time.perf_counter() - t0, 2)
    log(f"saved {out}: {len(thesaurus.neighbours):,} of {len(other):,} words have neighbours "
        f"among {len(kb_words):,} KB words ({seconds} s)")
    return {"file": Path(out).name, "sha256": hashlib.sha256(Path(out).read_bytes()).hexdigest(),
            "kb_sha256": kb_sha256(kb), **meta, "kb_words": len(kb_words),
            "other_words": len(other), "words_with_neighbours": len(thesaurus.neighbours),
            "seconds": seconds}


# in dependency order: every model uses the tokenizer; the re-ranker's negatives come from
# the bi-encoder's hybrid retriever; the adapter is made for the reader (its sha256)
BUILDERS = {"tokenizer": build_tokenizer, "biencoder": build_biencoder,
            "thesaurus": build_thesaurus_file, "reader": build_reader,
            "reranker": build_reranker, "adapter": build_adapter}


def build(names: list[str], log=print) -> dict:
    """Build the named artifacts in order ("all" = every one), updating MANIFEST.json."""
    for name in (list(BUILDERS) if "all" in names else names):
        log(f"building {name} ...")
        entry = BUILDERS[name]()
        manifest = read_manifest(MANIFEST_PATH)  # read now: a build can take many minutes
        manifest[name] = entry
        write_manifest(manifest, MANIFEST_PATH)
        log(f"  {name}: {entry}")
    return read_manifest(MANIFEST_PATH)
