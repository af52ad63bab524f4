"""A training loop for MiniGPT, and `python -m minimodel.train`: a small LM on the KB text.

What it is: seeded batches (an np.random.Generator passed in), AdamW with a cosine schedule
and gradient clipping, a held-out loss every `eval_interval` steps, a progress line (step,
loss, lr, tokens/s), a checkpoint at each evaluation and a loss-curve PNG. The loop knows
nothing of where batches come from: `lm_batch` cuts language-model windows from a token
stream; a reader's (prompt, answer, mask) batches plug in the same way.
What it leaves out: resuming (the optimizer state is not saved), gradient accumulation.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .mini_gpt import MiniGPT, MiniGPTConfig
from .optim import AdamW, clip_grad_norm, cosine_lr

REPO = Path(__file__).resolve().parents[2]  # src/minimodel/train.py -> the repo
# the shipped tokenizer's special tokens (data/models/MANIFEST.json), for the fallback one
SPECIAL_TOKENS = ["<|pad|>", "<|eos|>", "<|ctx|>", "<|q|>", "<|a|>", "<|idk|>",
                  "<|#1|>", "<|#2|>", "<|#3|>", "<|#4|>"]
Batch = tuple  # (ids [B, T] int, targets [B, T] int, mask [B, T] or None), or a model's own
# inputs with ids first (the span reader's: ids, spans, allowed, segments)


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 300  # optimizer steps
    lr: float = 5e-3  # peak learning rate, reached at the end of the warm-up
    min_lr: float = 5e-4  # learning rate at the end of the cosine
    warmup: int = 20  # steps of linear warm-up
    weight_decay: float = 0.1  # AdamW decoupled decay (matrices only, see optim.py)
    grad_clip: float = 1.0  # max global gradient norm
    eval_interval: int = 50  # steps between held-out evaluations (and checkpoints)
    log_interval: int = 25  # steps between progress lines


def lm_batch(tokens: np.ndarray, batch_size: int, block_size: int,
             rng: np.random.Generator) -> Batch:
    """`batch_size` random windows of a token stream; each target is the next token.
    Example: tokens 0..9, block 3, start 4 -> ids [4, 5, 6], targets [5, 6, 7]."""
    if len(tokens) <= block_size:
        raise ValueError(f"{len(tokens)} tokens: need more than block_size ({block_size})")
    starts = rng.integers(0, len(tokens) - block_size, size=batch_size)  # [B]
    idx = starts[:, None] + np.arange(block_size)  # [B, T]
    return tokens[idx], tokens[idx + 1], None  # [B, T], [B, T]


def evaluate(model: MiniGPT, batches: list[Batch]) -> float:
    """Mean loss over fixed batches (no dropout, no update). Any model with
    `loss_and_grads(*batch)` works; its gradients are computed and dropped (simple, at the
    price of a backward pass per batch)."""
    return float(np.mean([model.loss_and_grads(*b)[0] for b in batches]))


def train(model: MiniGPT, next_batch: Callable[[np.random.Generator], Batch],
          eval_batches: list[Batch], cfg: TrainConfig, rng: np.random.Generator,
          out_dir: Path | None = None, log=print) -> dict:
    """Train `model` in place and return the history {"step", "loss", "eval_step",
    "eval_loss", "tokens_per_s"}. With `out_dir`, writes model.npz at every evaluation, and
    history.json and loss.png at the end."""
    opt = AdamW(model.params, lr=cfg.lr, weight_decay=cfg.weight_decay,
                no_decay=model.no_decay())
    hist = {"step": [], "loss": [], "eval_step": [], "eval_loss": [], "tokens_per_s": 0.0}
    n_tokens, busy = 0, 0.0  # tokens trained on, seconds spent in training steps
    for step in range(cfg.steps):
        t0 = time.perf_counter()
        batch = next_batch(rng)  # (ids, targets, mask) or a model's own inputs, ids first
        ids = batch[0]
        lr = cosine_lr(step, cfg.lr, cfg.warmup, cfg.steps, cfg.min_lr)
        loss, grads = model.loss_and_grads(*batch, rng=rng)
        clip_grad_norm(grads, cfg.grad_clip)
        opt.step(grads, lr)
        busy += time.perf_counter() - t0
        n_tokens += np.size(ids)
        hist["step"].append(step)
        hist["loss"].append(loss)
        last = step == cfg.steps - 1
        if step % cfg.log_interval == 0 or last:
            log(f"step {step:5d}/{cfg.steps} | loss {loss:.4f} | lr {lr:.2e} | "
                f"{n_tokens / busy:,.0f} tok/s")
        if eval_batches and (step % cfg.eval_interval == 0 or last):
            hist["eval_step"].append(step)
            hist["eval_loss"].append(evaluate(model, eval_batches))
            log(f"step {step:5d}/{cfg.steps} | eval loss {hist['eval_loss'][-1]:.4f}")
            if out_dir is not None:
                model.save(Path(out_dir) / "model.npz")
    hist["tokens_per_s"] = n_tokens / busy if busy else 0.0
    if out_dir is not None:
        out_dir = Path(out_dir)
        model.save(out_dir / "model.npz")
        (out_dir / "history.json").write_text(json.dumps(hist) + "\n", encoding="utf-8")
        plot_loss(hist, out_dir / "loss.png")
    return hist


def plot_loss(hist: dict, path: Path) -> None:
    """Training and held-out loss against step, as a PNG. A bare Figure renders with Agg and
    needs no display; unlike matplotlib.use("Agg") it leaves a notebook's inline plots alone."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.5))
    ax = fig.subplots()
    ax.plot(hist["step"], hist["loss"], lw=1, alpha=0.7, label="train (one batch)")
    if hist["eval_step"]:
        ax.plot(hist["eval_step"], hist["eval_loss"], "o-", label="held-out")
    ax.set(xlabel="step", ylabel="cross-entropy (nats / token)", title="MiniGPT loss")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


# ------------------------------------------------------------------- the KB language model


def load_or_train_tokenizer(path: Path, text: str, out_dir: Path, log=print):
    """The tokenizer at `path`; if there is none, train one on `text` (vocab 1024), say so,
    and save it to out_dir/tokenizer.json so the checkpoint's fingerprint can be traced."""
    from minitokenizer import BPETokenizer

    if path.is_file():
        return BPETokenizer.load(path)
    log(f"no tokenizer at {path}: training one on the KB text (vocab 1024)")
    tok = BPETokenizer.train(text, 1024, SPECIAL_TOKENS)
    out_dir.mkdir(parents=True, exist_ok=True)
    tok.save(out_dir / "tokenizer.json")
    return tok


def read_kb(kb: Path) -> str:
    files = sorted(kb.glob("*.md"))
    if not files:
        raise FileNotFoundError(f"{kb}: no *.md files")
    return "\n\n".join(f.read_text(encoding="utf-8") for f in files)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m minimodel.train",
        description="Train a small MiniGPT language model on the KB text (demo and smoke test).")
    ap.add_argument("--kb", type=Path, default=REPO / "data" / "rag-kb",
                    help="folder of *.md files (default: the repo's data/rag-kb)")
    ap.add_argument("--tokenizer", type=Path, default=REPO / "data" / "models" / "tokenizer.json",
                    help="tokenizer JSON; if missing, one is trained on the KB (vocab 1024)")
    ap.add_argument("--steps", type=int, default=300, help="optimizer steps (default 300)")
    ap.add_argument("--seed", type=int, default=0, help="seeds the init, batches and samples")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "minigpt-lm",
                    help="where model.npz, loss.png, history.json go (default results/minigpt-lm)")
    ap.add_argument("--batch-size", type=int, default=16, help="sequences per step (default 16)")
    ap.add_argument("--n-layer", type=int, default=2, help="transformer blocks (default 2)")
    args = ap.parse_args(argv)
    try:
        text = read_kb(args.kb)
        tok = load_or_train_tokenizer(args.tokenizer, text, args.out)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    tokens = np.array(tok.encode(text), dtype=np.int64)  # [n]
    split = int(0.9 * len(tokens))  # the last 10% of the KB stream is held out
    train_tok, val_tok = tokens[:split], tokens[split:]
    mcfg = MiniGPTConfig(vocab_size=len(tok), n_layer=args.n_layer,
                         tokenizer_sha256=tok.fingerprint)
    model, rng = MiniGPT(mcfg, seed=args.seed), np.random.default_rng(args.seed)
    B, T = args.batch_size, mcfg.block_size
    print(f"KB: {len(text):,} chars -> {len(tokens):,} tokens ({len(train_tok):,} train, "
          f"{len(val_tok):,} held out); model: {model.n_params:,} parameters")
    eval_batches = [lm_batch(val_tok, B, T, rng) for _ in range(4)]
    prompt = tok.encode("The past simple of ")

    def sample(tag):
        out = model.generate(prompt, 40, temperature=0.8, top_k=40,
                             rng=np.random.default_rng(args.seed))
        print(f"sample {tag}: {tok.decode(prompt + out)!r}")

    sample("before")
    cfg = TrainConfig(steps=args.steps)
    hist = train(model, lambda r: lm_batch(train_tok, B, T, r), eval_batches, cfg, rng,
                 out_dir=args.out)
    sample("after")
    print(f"held-out loss {hist['eval_loss'][0]:.3f} -> {hist['eval_loss'][-1]:.3f} "
          f"(uniform: ln {len(tok)} = {np.log(len(tok)):.3f}); "
          f"{hist['tokens_per_s']:,.0f} training tokens/s")
    print(f"wrote {args.out / 'model.npz'}, {args.out / 'loss.png'}")
    (args.out / "config.json").write_text(json.dumps(
        {"model": asdict(mcfg), "train": asdict(cfg), "seed": args.seed}, indent=1) + "\n",
        encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
