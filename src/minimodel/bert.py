"""BERT's encoder, forward only, in NumPy float32: pretrained weights in, token vectors out,
and the sentence vector sentence-transformers makes of them (mean pool, L2 norm).

What it is: token + position + token-type embeddings and a LayerNorm, then L post-LN blocks,
each  x = LN(x + Attn(x));  x = LN(x + W2 gelu(W1 x))  with bidirectional multi-head
self-attention that never looks at padding. The weights are read by their names in the
checkpoint ("encoder.layer.0.attention.self.query.weight", ...) from any dict of arrays, e.g.
minimodel.safetensors.load_safetensors; teacher.py puts the packaged model together.
What it leaves out: training (no backward: the teacher is only read), the pooler and the
masked-LM head (sentence-transformers uses neither), relative positions, dropout, pairs of
segments (every token type is 0, as for a single sentence).
Follows Devlin et al., "BERT" (2018) and HF transformers' BertModel: erf GELU (not GPT-2's
tanh), LayerNorm eps from the config, PyTorch's [out, in] weight layout (so x @ W.T).

Shape letters: B texts in a batch, T positions (padded), C hidden width, H heads, D = C / H
head size, F intermediate (MLP) width, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from minimodel.layers import layernorm_forward, linear_forward

# erf(x) ~= 1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) exp(-x^2),  t = 1 / (1 + p x),
# for x >= 0 (erf is odd); |error| <= 1.5e-7  -- Abramowitz & Stegun 7.1.26
_P = np.float32(0.3275911)
_A = [np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027,
                              1.061405429)]


class BertWeightsError(ValueError):
    """Weights that do not fit the config: a missing name, or a shape that disagrees."""


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522  # V: rows of the word-embedding table
    hidden_size: int = 384  # C: width of every token vector
    num_hidden_layers: int = 6  # L: encoder blocks
    num_attention_heads: int = 12  # H: heads per block; head size D = C / H
    intermediate_size: int = 1536  # F: width of the MLP inside a block
    max_position_embeddings: int = 512  # the longest input, in tokens
    type_vocab_size: int = 2  # token types (segments A and B)
    layer_norm_eps: float = 1e-12  # the epsilon inside every LayerNorm's square root

    def __post_init__(self):
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be divisible by "
                             f"num_attention_heads ({self.num_attention_heads})")

    @classmethod
    def from_dict(cls, d: dict) -> BertConfig:
        """From a HF config.json; refuses what this forward pass does not implement."""
        if d.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"hidden_act {d['hidden_act']!r}: only 'gelu' (erf) is implemented")
        if d.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"position_embedding_type {d['position_embedding_type']!r}: only "
                             "'absolute' is implemented")
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})


def erf(x: np.ndarray) -> np.ndarray:  # [...] float32 -> [...] float32, a new array
    """The error function, vectorised, to 1.5e-7 (A&S 7.1.26). math.erf is exact but one
    Python call per number: far too slow for the ~10^7 activations of one batch.
    subtle: every step writes into the array of the step before (out=, +=): a batch's MLP
    activations are ~50 MB, and a fresh 50 MB temporary per step made GELU 8x slower."""
    a = np.abs(x)  # [...] the formula holds for x >= 0
    t = _P * a  # [...]
    t += 1.0
    np.reciprocal(t, out=t)  # [...] t = 1 / (1 + p a)
    poly = _A[4] * t  # [...] Horner: ((((a5 t + a4) t + a3) t + a2) t + a1) t
    for coef in (_A[3], _A[2], _A[1], _A[0]):
        poly += coef
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)  # [...] exp(-x^2)
    poly *= a
    np.subtract(1.0, poly, out=poly)  # [...] erf(|x|)
    return np.copysign(poly, x, out=poly)  # [...] erf(-x) = -erf(x)


def gelu(x: np.ndarray) -> np.ndarray:  # [...] -> [...]
    # gelu(x) = x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))): the Gaussian CDF, exactly as BERT
    y = erf(x * np.float32(1.0 / np.sqrt(2.0)))  # [...]
    y += 1.0
    y *= x
    y *= 0.5
    return y  # [...]


def softmax_(x: np.ndarray) -> np.ndarray:  # [..., S] -> [..., S] in place, rows sum to 1
    x -= x.max(axis=-1, keepdims=True)  # shift each row: exp() cannot overflow
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def mean_pool(h: np.ndarray, mask: np.ndarray) -> np.ndarray:  # [B, T, C], [B, T] -> [B, C]
    """The average of a text's token vectors, padding left out (sentence-transformers'
    Pooling with pooling_mode_mean_tokens)."""
    m = mask[:, :, None].astype(h.dtype)  # [B, T, 1] 1 for a real token, 0 for padding
    return (h * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)  # [B, C] / [B, 1]


def l2_normalize(x: np.ndarray) -> np.ndarray:  # [B, C] -> [B, C] unit rows
    # x / max(|x|, eps), as torch.nn.functional.normalize does
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)  # [B, C]


def weight_shapes(c: BertConfig) -> dict[str, tuple[int, ...]]:
    """Every weight the forward pass reads, by its checkpoint name, with its shape."""
    C, F = c.hidden_size, c.intermediate_size
    shapes = {"embeddings.word_embeddings.weight": (c.vocab_size, C),
              "embeddings.position_embeddings.weight": (c.max_position_embeddings, C),
              "embeddings.token_type_embeddings.weight": (c.type_vocab_size, C),
              "embeddings.LayerNorm.weight": (C,), "embeddings.LayerNorm.bias": (C,)}
    for i in range(c.num_hidden_layers):
        p = f"encoder.layer.{i}."
        for name, (rows, cols) in [("attention.self.query", (C, C)),
                                   ("attention.self.key", (C, C)),
                                   ("attention.self.value", (C, C)),
                                   ("attention.output.dense", (C, C)),
                                   ("intermediate.dense", (F, C)),  # [out, in], PyTorch's way
                                   ("output.dense", (C, F))]:
            shapes.update({f"{p}{name}.weight": (rows, cols), f"{p}{name}.bias": (rows,)})
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes.update({f"{p}{name}.weight": (C,), f"{p}{name}.bias": (C,)})
    return shapes


class Bert:
    """The encoder. `forward(ids, mask)` -> token vectors; `embed_ids(batch)` -> unit sentence
    vectors. Example: Bert(cfg, load_safetensors(p)).embed_ids([[101, 7592, 102]]).shape
    -> (1, 384)"""

    def __init__(self, config: BertConfig, weights: dict[str, np.ndarray]):
        self.config = config
        # some checkpoints (BertForMaskedLM and friends) prefix every name with "bert."
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        shapes = weight_shapes(config)
        missing = [n for n in shapes if n not in self.w]
        if missing:
            raise BertWeightsError(f"{len(missing)} weights missing, e.g. {missing[:3]}")
        for name, shape in shapes.items():
            if tuple(self.w[name].shape) != shape:
                raise BertWeightsError(f"{name} has shape {tuple(self.w[name].shape)}, the "
                                       f"config says {shape}")

    def _dense(self, x, name):  # [..., In] -> [..., Out]
        # PyTorch stores a Linear's weight as [Out, In]: y = x W^T + b
        return linear_forward(x, self.w[name + ".weight"].T, self.w[name + ".bias"])[0]

    def _norm(self, x, name):  # [..., C] -> [..., C]
        w, b = self.w[name + ".weight"], self.w[name + ".bias"]
        return layernorm_forward(x, w, b, self.config.layer_norm_eps)[0]

    def attention(self, x, keep, p):  # [B, T, C], [B, T] bool -> [B, T, C]
        """Multi-head self-attention in both directions; a padding key gets weight 0."""
        B, T, C = x.shape
        H = self.config.num_attention_heads
        D = C // H

        def heads(name):  # [B, T, C] -> [B, H, T, D]: each head reads its own D columns
            return self._dense(x, p + name).reshape(B, T, H, D).transpose(0, 2, 1, 3)

        q, k, v = heads("attention.self.query"), heads("attention.self.key"), \
            heads("attention.self.value")  # [B, H, T, D] each
        scores = q @ k.transpose(0, 1, 3, 2)  # [B, H, T, D] @ [B, H, D, T] -> [B, H, T, T]
        scores *= np.float32(1.0 / np.sqrt(D))  # score = q.k / sqrt(D)
        # padding: add the most negative float32 to every score of a padding key (HF's
        # extended attention mask), so exp() gives it exactly 0 after the softmax
        scores += np.where(keep, 0.0, np.finfo(np.float32).min).astype(
            np.float32)[:, None, None, :]  # [B, H, T, T] += [B, 1, 1, T]
        out = softmax_(scores) @ v  # [B, H, T, T] @ [B, H, T, D] -> [B, H, T, D]
        out = out.transpose(0, 2, 1, 3).reshape(B, T, C)  # [B, T, C] heads side by side
        return self._dense(out, p + "attention.output.dense")  # [B, T, C]

    def block(self, x, keep, i):  # [B, T, C] -> [B, T, C]
        p = f"encoder.layer.{i}."
        # post-LN (BERT, not GPT-2's pre-LN): the LayerNorm comes after each residual sum
        a = self.attention(x, keep, p)  # [B, T, C] what each token gathers from the others
        x = self._norm(x + a, p + "attention.output.LayerNorm")  # [B, T, C]
        h = gelu(self._dense(x, p + "intermediate.dense"))  # [B, T, F] widen 4x, GELU
        m = self._dense(h, p + "output.dense")  # [B, T, C] and back
        return self._norm(x + m, p + "output.LayerNorm")  # [B, T, C]

    def forward(self, ids, mask) -> np.ndarray:  # [B, T] int, [B, T] 0/1 -> [B, T, C]
        ids, keep = np.asarray(ids), np.asarray(mask).astype(bool)  # [B, T], [B, T]
        T = ids.shape[1]
        if T > self.config.max_position_embeddings:
            raise ValueError(f"{T} tokens: this model reads at most "
                             f"{self.config.max_position_embeddings}")
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids]  # [B, T, C] what each token is
             + w["embeddings.position_embeddings.weight"][:T]  # [T, C] where it is
             + w["embeddings.token_type_embeddings.weight"][0])  # [C] segment A, everywhere
        x = self._norm(x, "embeddings.LayerNorm")  # [B, T, C]
        for i in range(self.config.num_hidden_layers):
            x = self.block(x, keep, i)  # [B, T, C]
        return x

    def embed_ids(self, batch: list[list[int]], pad_id: int = 0) -> np.ndarray:
        """Sentence vectors of a batch of id lists: pad to the longest, run the encoder, mean
        over each text's own tokens, L2-normalise. -> [B, C] float32 unit rows."""
        T = max(len(ids) for ids in batch)
        ids = np.full((len(batch), T), pad_id, dtype=np.int64)  # [B, T]
        mask = np.zeros((len(batch), T), dtype=bool)  # [B, T] True on a real token
        for b, row in enumerate(batch):
            ids[b, :len(row)], mask[b, :len(row)] = row, True
        return l2_normalize(mean_pool(self.forward(ids, mask), mask))  # [B, C]
