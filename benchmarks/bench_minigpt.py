"""MiniGPT speed: training tokens/s, and per-token generation latency with and without the KV
cache at several sequence lengths, for the default config (context 64, d_model 64, 4 heads,
2 layers, float32) with the shipped tokenizer's vocabulary of 2,048 tokens.

Training: one step = loss_and_grads + clip + AdamW on a [16, 64] batch; median over steps
after warm-up, with BLAS on its default threads and on one (on 2 small cores one is often
faster: these matmuls are too small to split). Generation: greedy decoding of a whole sequence
of n tokens from a 4-token prompt, time per new token, median over repeats. Without the cache
each new token re-runs the model over the whole prefix (cost grows with n); with it, each new
token is one position attending to the cached keys and values, so the ratio must grow with n.

Run: python benchmarks/bench_minigpt.py [--quick]   (full: ~1 min)
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from common import environment, median_ms, table
from threadpoolctl import threadpool_limits

from minimodel.mini_gpt import MiniGPT, MiniGPTConfig
from minimodel.optim import AdamW, clip_grad_norm

SEED, B, PROMPT, VOCAB = 0, 16, 4, 2048  # VOCAB: len(data/models/tokenizer.json)


def trainer(cfg: MiniGPTConfig, threads: int | None):
    """One training step (loss_and_grads + clip + AdamW) of a fresh model, BLAS on `threads`."""
    model = MiniGPT(cfg, seed=SEED)
    opt = AdamW(model.params, lr=1e-4, no_decay=model.no_decay())

    def step(ids):  # ids [B, T + 1]
        with threadpool_limits(limits=threads):
            _, grads = model.loss_and_grads(ids[:, :-1], ids[:, 1:])
            clip_grad_norm(grads, 1.0)
            opt.step(grads)

    return step


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (~15 s)")
    args = ap.parse_args(argv)
    steps, repeats = (30, 20) if args.quick else (120, 100)
    environment()
    cfg = MiniGPTConfig(vocab_size=VOCAB)
    model, rng = MiniGPT(cfg, seed=SEED), np.random.default_rng(SEED)
    print(f"config: {cfg}\nparameters: {model.n_params:,}\n")

    # training: the two thread settings take turns on the same batches (common.median_ms)
    batches = [rng.integers(0, cfg.vocab_size, (B, cfg.block_size + 1)) for _ in range(steps)]
    ms = median_ms({"default": trainer(cfg, None), "1": trainer(cfg, 1)}, batches, warmup=5)
    tps = {k: B * cfg.block_size / (v / 1e3) for k, v in ms.items()}  # tokens per second
    print(table(["training step", "ms", "tokens/s"],
                [[f"B={B} T={cfg.block_size}, BLAS threads={k}", ms[k], f"{v:,.0f}"]
                 for k, v in tps.items()]))
    print(f"ratio one thread / default threads: {tps['1'] / tps['default']:.2f}x\n")

    # generation: per new token, with and without the KV cache, taking turns per prompt
    prompts = [[int(t) for t in rng.integers(0, cfg.vocab_size, PROMPT)] for _ in range(repeats)]
    rows = []
    with threadpool_limits(limits=1):  # one token at a time: a single thread is the best case
        for n in (8, 16, 32, 64):
            ms = median_ms({c: (lambda p, c=c, n=n: model.generate(p, n - PROMPT, use_cache=c))
                            for c in (True, False)}, prompts, warmup=3)
            cached, full = ms[True] / (n - PROMPT), ms[False] / (n - PROMPT)
            rows.append([n, cached, full, f"{full / cached:.2f}x"])
    print(table(["sequence length n", "ms/token cache", "ms/token no cache", "speed-up"], rows))
    print(f"(greedy from a {PROMPT}-token prompt to n tokens, median over {repeats} "
          "generations; one BLAS thread)")
    return {"train_tokens_per_s": tps, "generation_ms_per_token": rows}


if __name__ == "__main__":
    main(sys.argv[1:])
