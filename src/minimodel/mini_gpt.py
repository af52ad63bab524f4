"""MiniGPT: a decoder-only transformer in NumPy, with hand-written backward and a KV cache.

What it is: token + position embeddings, pre-LayerNorm blocks (causal multi-head attention,
GELU MLP), a final LayerNorm and an output head tied to the token embeddings. `forward` gives
logits, `loss_and_grads` the mean cross-entropy (optionally masked) and the gradient of every
parameter, `generate` decodes greedily or by sampling with a KV cache (the loop: generate.py).
What it leaves out: attention dropout, batched generation, mixed precision. Follows GPT-2 /
nanoGPT; the layers live in layers.py, the math in theory/07-minigpt-reader.md.

Shape letters as in layers.py: B batch, T positions, C d_model, V vocab.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import layers as L
from .checkpoint import load_model, save_params
from .generate import generate


@dataclass(frozen=True)
class MiniGPTConfig:
    vocab_size: int = 1024  # tokens the tokenizer can produce (bytes + merges + specials)
    block_size: int = 64  # context length in tokens; a longer input is an error, never cropped
    d_model: int = 64  # width C of every residual-stream vector
    n_head: int = 4  # attention heads per layer; head size D = d_model / n_head
    n_layer: int = 2  # transformer blocks (2-4 for this course)
    dropout: float = 0.0  # residual / embedding dropout while training (0 = off)
    dtype: str = "float32"  # parameter and activation dtype; "float64" for gradient checks
    n_segments: int = 0  # ids of an extra input embedding (BERT's token types); 0 = none
    tokenizer_sha256: str = ""  # BPETokenizer.fingerprint of the vocab's tokenizer ("" = unset)

    def __post_init__(self):
        if self.d_model % self.n_head:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by n_head ({self.n_head})")
        if min(self.vocab_size, self.block_size, self.n_head, self.n_layer) < 1:
            raise ValueError("vocab_size, block_size, n_head and n_layer must all be >= 1")
        if self.n_segments < 0:
            raise ValueError(f"n_segments ({self.n_segments}) must be >= 0")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64', not {self.dtype!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout ({self.dropout}) must be in [0, 1)")


class MiniGPT:
    """Example: MiniGPT(MiniGPTConfig(vocab_size=10)).forward([[1, 2, 3]]).shape -> (1, 3, 10)"""

    def __init__(self, config: MiniGPTConfig, seed: int = 0, params: dict | None = None):
        self.config = config
        self.params = params if params is not None else self._init_params(seed)

    def _init_params(self, seed):
        """GPT-2 init: N(0, 0.02) weights, zero biases, unit LayerNorm gains; the projections
        that write into the residual stream are scaled down by 1 / sqrt(2 * n_layer).
        One change: token embeddings N(0, 0.1). The head is tied, so a logit is h . wte[v]
        with h of unit variance per dimension: its spread is std * sqrt(C), 0.16 at C = 64
        with GPT-2's 0.02 (made for C = 768), 0.8 with 0.1 (see theory/07 for the measurement)."""
        cfg, rng = self.config, np.random.default_rng(seed)
        C, std = cfg.d_model, 0.02

        def normal(*shape, s=std):
            return rng.normal(0.0, s, size=shape)

        p = {"wte": normal(cfg.vocab_size, C, s=0.1), "wpe": normal(cfg.block_size, C)}  # [V,C]
        if cfg.n_segments:
            p["wse"] = normal(cfg.n_segments, C)  # [S, C] segment embeddings
        for i in range(cfg.n_layer):
            p.update(block_params(f"h{i}.", C, cfg.n_layer, rng, std))
        p["lnf.g"], p["lnf.b"] = np.ones(C), np.zeros(C)  # [C], [C]
        return {k: v.astype(cfg.dtype) for k, v in p.items()}

    # ------------------------------------------------------------------------------ helpers

    @property
    def n_params(self) -> int:
        return sum(v.size for v in self.params.values())  # wte counted once: the head is tied

    def no_decay(self) -> set[str]:
        """Parameters AdamW should not shrink: LayerNorm gains, biases and the embeddings."""
        return {k for k, v in self.params.items() if v.ndim < 2 or k in ("wte", "wpe", "wse")}

    def astype(self, dtype: str) -> MiniGPT:
        """A copy of the model with every parameter (and so every activation) in `dtype`."""
        return MiniGPT(replace(self.config, dtype=dtype),
                       params={k: v.astype(dtype) for k, v in self.params.items()})

    def _check_ids(self, ids, offset=0):
        ids = np.asarray(ids)  # [B, T]
        if ids.ndim != 2 or ids.shape[1] == 0 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"ids must be a non-empty [B, T] integer array, got {ids.shape}")
        if offset + ids.shape[1] > self.config.block_size:
            raise ValueError(f"{offset + ids.shape[1]} tokens exceed the context of "
                             f"{self.config.block_size}; crop the input yourself")
        if ids.min() < 0 or ids.max() >= self.config.vocab_size:
            raise ValueError(f"token ids must be in [0, {self.config.vocab_size})")
        return ids

    # ------------------------------------------------------------------------------ forward

    def hidden_forward(self, ids, kv=None, rng=None, segments=None):
        """Final hidden states h [B, T, C] (after the last LayerNorm) and the cache for
        `hidden_backward`. A new head (a copy/pointer head, say) can sit on top of h.
        `kv`: one layers.KVCache per block (generation). `rng`: enables dropout (training).
        `segments` [B, T]: ids in [0, n_segments) whose embeddings join the input (all 0 when
        None); the span reader marks the table column a token sits in."""
        p, cfg = self.params, self.config
        offset = kv[0].n if kv else 0
        ids = self._check_ids(ids, offset)  # [B, T]
        T = ids.shape[1]
        tok, c_tok = L.embedding_forward(ids, p["wte"])  # [B, T, C]
        x = tok + p["wpe"][offset : offset + T]  # [B, T, C] + [T, C] -> [B, T, C]
        c_seg = None
        if cfg.n_segments:
            seg = np.zeros_like(ids) if segments is None else np.asarray(segments)  # [B, T]
            if seg.shape != ids.shape or seg.min() < 0 or seg.max() >= cfg.n_segments:
                raise ValueError(f"segments must be a {ids.shape} array of ids in "
                                 f"[0, {cfg.n_segments})")
            s_emb, c_seg = L.embedding_forward(seg, p["wse"])  # [B, T, C]
            x = x + s_emb
        elif segments is not None:
            raise ValueError("this model has no segment embeddings (n_segments = 0)")
        x, c_drop = L.dropout_forward(x, cfg.dropout, rng)  # [B, T, C]
        blocks = []
        for i in range(cfg.n_layer):
            x, c = block_forward(x, p, f"h{i}.", cfg.n_head, cfg.dropout,  # [B, T, C]
                                 kv[i] if kv else None, rng)
            blocks.append(c)
        h, c_lnf = L.layernorm_forward(x, p["lnf.g"], p["lnf.b"])  # [B, T, C]
        return h, {"tok": c_tok, "seg": c_seg, "drop": c_drop, "blocks": blocks, "lnf": c_lnf,
                   "T": T}

    def head(self, h):
        """The tied output head: logits = h wte^T, so a token's input and output vectors agree."""
        return L.linear_forward(h, self.params["wte"].T)  # [B, T, C] @ [C, V] -> [B, T, V]

    def forward(self, ids, return_state: bool = False):
        """Logits [B, T, V]. With return_state, also {"hidden": h [B, T, C], "attention":
        [B, H, T, T] per layer} for inspection (heatmaps) and for heads built on top."""
        h, cache = self.hidden_forward(ids)  # [B, T, C]
        logits, _ = self.head(h)  # [B, T, V]
        if not return_state:
            return logits
        return logits, {"hidden": h, "attention": [c[1][-1] for c in cache["blocks"]]}

    # ----------------------------------------------------------------------------- backward

    def hidden_backward(self, dh, cache):
        """Gradients of every parameter given dL/dh [B, T, C]. Fresh arrays every call:
        nothing accumulates between calls. wte gets only its embedding-side gradient here."""
        p, g = self.params, {}
        dx, g["lnf.g"], g["lnf.b"] = L.layernorm_backward(dh, cache["lnf"])  # [B, T, C]
        for i in reversed(range(self.config.n_layer)):
            dx = block_backward(dx, cache["blocks"][i], f"h{i}.", g)  # [B, T, C]
        dx = L.dropout_backward(dx, cache["drop"])  # [B, T, C]
        g["wpe"] = np.zeros_like(p["wpe"])  # [Tmax, C]
        g["wpe"][: cache["T"]] = dx.sum(axis=0)  # x = tok + wpe[:T], broadcast over B
        g["wte"] = L.embedding_backward(dx, cache["tok"])  # [V, C]
        if cache["seg"] is not None:
            g["wse"] = L.embedding_backward(dx, cache["seg"])  # [S, C]
        return g

    def loss_and_grads(self, ids, targets, mask=None, rng=None):
        """Mean cross-entropy of next-token `targets` [B, T] where `mask` [B, T] is 1 (all
        positions when None: masking lets a reader be scored on its answer tokens only), and
        the gradient of every parameter. `rng` turns dropout on."""
        h, cache = self.hidden_forward(ids, rng=rng)  # [B, T, C]
        logits, c_head = self.head(h)  # [B, T, V]
        loss, c_ce = L.cross_entropy_forward(logits, targets, mask)
        dh, dwte_t, _ = L.linear_backward(L.cross_entropy_backward(c_ce), c_head)  # [B, T, C]
        grads = self.hidden_backward(dh, cache)
        grads["wte"] += dwte_t.T  # [V, C]: the tied head's share of the gradient
        return loss, grads

    # ----------------------------------------------------------------------------- generate

    def generate(self, prompt_ids, max_new_tokens, temperature=0.0, top_k=None, stop_id=None,
                 rng=None, use_cache=True, return_logits=False):
        """Greedy or sampled decoding with the KV cache (generate.py has the loop).
        Example: model.generate([1, 2], 3) -> [7, 7, 4]"""
        return generate(self, prompt_ids, max_new_tokens, temperature, top_k, stop_id, rng,
                        use_cache, return_logits)

    # --------------------------------------------------------------------------- save, load

    def save(self, path) -> None:
        """Write an .npz (no pickle) with the config, format version and a checksum; atomic."""
        save_params(path, self.params, vars(self.config))

    @classmethod
    def load(cls, path, tokenizer_sha256: str | None = None) -> MiniGPT:
        """Read a checkpoint written by `save`. A tampered or truncated file, or a tokenizer
        fingerprint other than the expected one, is a CheckpointError naming the file."""
        return load_model(cls, MiniGPTConfig, path, tokenizer_sha256)


def block_params(pre: str, C: int, n_layer: int, rng: np.random.Generator, std: float = 0.02
                 ) -> dict[str, np.ndarray]:
    """One pre-LN block's parameters, named `pre` + "ln1.g" ...; GPT-2's init (MiniGPT's
    _init_params): the two projections into the residual stream scaled by 1/sqrt(2 n_layer)."""
    normal = lambda *shape, s=std: rng.normal(0.0, s, size=shape)  # noqa: E731
    s_res = std / np.sqrt(2 * n_layer)
    return {pre + "ln1.g": np.ones(C), pre + "ln1.b": np.zeros(C),  # [C], [C]
            pre + "attn.w_qkv": normal(C, 3 * C), pre + "attn.b_qkv": np.zeros(3 * C),  # [C, 3C]
            pre + "attn.w_o": normal(C, C, s=s_res), pre + "attn.b_o": np.zeros(C),  # [C, C]
            pre + "ln2.g": np.ones(C), pre + "ln2.b": np.zeros(C),  # [C], [C]
            pre + "mlp.w_fc": normal(C, 4 * C), pre + "mlp.b_fc": np.zeros(4 * C),  # [C, F]
            pre + "mlp.w_proj": normal(4 * C, C, s=s_res), pre + "mlp.b_proj": np.zeros(C)}


def block_forward(x, p, pre, n_head, dropout=0.0, kv=None, rng=None, causal=True,
                  key_mask=None):
    """One pre-LN block on x [B, T, C]: x + attn(ln1(x)), then x + mlp(ln2(x)); the residual
    stream is never normed. `causal`, `key_mask`: as layers.attention_forward (an encoder
    passes causal=False and its padding mask). Returns (out [B, T, C], cache)."""
    a, c_ln1 = L.layernorm_forward(x, p[pre + "ln1.g"], p[pre + "ln1.b"])  # [B, T, C]
    a, c_att = L.attention_forward(a, p[pre + "attn.w_qkv"], p[pre + "attn.b_qkv"],
                                   p[pre + "attn.w_o"], p[pre + "attn.b_o"], n_head, kv,
                                   causal, key_mask)
    a, c_d1 = L.dropout_forward(a, dropout, rng)  # [B, T, C]
    x = x + a  # [B, T, C]
    m, c_ln2 = L.layernorm_forward(x, p[pre + "ln2.g"], p[pre + "ln2.b"])  # [B, T, C]
    m, c_mlp = L.mlp_forward(m, p[pre + "mlp.w_fc"], p[pre + "mlp.b_fc"],
                             p[pre + "mlp.w_proj"], p[pre + "mlp.b_proj"])  # [B, T, C]
    m, c_d2 = L.dropout_forward(m, dropout, rng)  # [B, T, C]
    return x + m, (c_ln1, c_att, c_d1, c_ln2, c_mlp, c_d2)  # [B, T, C]


def block_backward(dx, cache, pre, g):
    """dL/dx [B, T, C] of `block_forward`'s input; the block's gradients go into g by name.
    Walks the block backwards; each residual add copies the gradient to both branches."""
    c_ln1, c_att, c_d1, c_ln2, c_mlp, c_d2 = cache
    dm = L.dropout_backward(dx, c_d2)  # [B, T, C]
    m = pre + "mlp."
    dm, g[m + "w_fc"], g[m + "b_fc"], g[m + "w_proj"], g[m + "b_proj"] = L.mlp_backward(
        dm, c_mlp)  # [B, T, C]
    dm, g[pre + "ln2.g"], g[pre + "ln2.b"] = L.layernorm_backward(dm, c_ln2)  # [B, T, C]
    dx = dx + dm  # [B, T, C] residual: x + mlp(ln2(x))
    da = L.dropout_backward(dx, c_d1)  # [B, T, C]
    a = pre + "attn."
    da, g[a + "w_qkv"], g[a + "b_qkv"], g[a + "w_o"], g[a + "b_o"] = L.attention_backward(
        da, c_att)  # [B, T, C]
    da, g[pre + "ln1.g"], g[pre + "ln1.b"] = L.layernorm_backward(da, c_ln1)  # [B, T, C]
    return dx + da  # [B, T, C] residual: x + attn(ln1(x))
