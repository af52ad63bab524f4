"""Decoding: a MiniGPT continues a prompt, greedily or by sampling, with or without its KV cache.

What it is: `generate`, the loop behind `MiniGPT.generate`: each step runs the model on the ids
it has not seen yet (with the cache: only the newest one; without: the whole sequence, the slow
reference the cache is tested against), reads the last position's logits through the tied head
and picks the next id (`pick`: argmax at temperature 0, else a sample from the top-k softmax).
What it leaves out: beam search, batched decoding, repetition penalties.
"""

from __future__ import annotations

import numpy as np

from . import layers as L


def generate(model, prompt_ids, max_new_tokens, temperature=0.0, top_k=None, stop_id=None,
             rng=None, use_cache=True, return_logits=False):
    """Append up to `max_new_tokens` ids to `prompt_ids` and return the new ids (the stop
    token, when hit, is the last one). temperature 0 = greedy; otherwise sample from
    softmax(logits / temperature) restricted to the `top_k` best, with `rng`.
    use_cache=False recomputes the whole sequence each step (the slow reference).
    Example: model.generate([1, 2], 3) -> [7, 7, 4]"""
    cfg, ids = model.config, [int(t) for t in prompt_ids]
    if len(ids) + max_new_tokens > cfg.block_size:
        raise ValueError(f"prompt ({len(ids)}) + max_new_tokens ({max_new_tokens}) exceed "
                         f"the context of {cfg.block_size} tokens")
    if temperature > 0 and rng is None:
        raise ValueError("sampling (temperature > 0) needs rng=np.random.default_rng(seed)")
    kv = None
    if use_cache:
        D = cfg.d_model // cfg.n_head
        kv = [L.KVCache(1, cfg.n_head, cfg.block_size, D, cfg.dtype)
              for _ in range(cfg.n_layer)]
    new, all_logits, feed = [], [], ids  # feed: the ids the model has not seen yet
    for _ in range(max_new_tokens):
        if use_cache:
            h, _ = model.hidden_forward(np.array([feed]), kv=kv)  # [1, len(feed), C]
        else:
            h, _ = model.hidden_forward(np.array([ids]))  # [1, len(ids), C]
        logits = h[0, -1] @ model.params["wte"].T  # [C] @ [C, V] -> [V]
        all_logits.append(logits)
        nxt = pick(logits, temperature, top_k, rng)
        ids, new, feed = ids + [nxt], new + [nxt], [nxt]
        if nxt == stop_id:
            break
    return (new, np.array(all_logits)) if return_logits else new  # ids, [n_new, V]


def pick(logits, temperature, top_k, rng) -> int:
    """Greedy when temperature == 0, else sample from the top-k softmax at that temperature."""
    if temperature == 0:
        return int(np.argmax(logits))
    z = logits.astype(np.float64) / temperature  # [V]
    if top_k is not None and top_k < z.size:
        kth = np.partition(z, -top_k)[-top_k]  # the k-th largest logit
        z = np.where(z < kth, -np.inf, z)  # [V] everything below it is impossible
    prob = np.exp(z - z.max())  # [V]
    return int(rng.choice(z.size, p=prob / prob.sum()))
