"""MiniBiEncoder: a learned text embedder, one tower shared by queries and chunks, in NumPy.

What it is: BPE token vectors (plus one hashed vector per multi-token word) -> IDF-weighted
masked mean pooling -> two-layer GELU MLP -> L2 norm, so cosine similarity is a dot product
(the bi-encoder of Karpukhin et al., "Dense Passage Retrieval", 2020, with one shared tower).
Each layer is a `forward -> (out, cache)` / `backward(dout, cache)` pair; embedding, linear
and GELU are minimodel's, the new ones (weighted pooling, L2 norm, InfoNCE) layers.py's.
How text becomes ids: words.py. Training: training/encoder_train.py. The math: theory/01.
With `n_layer` > 0 the token vectors first go through that many bidirectional attention blocks
(layers.context_forward: word order and neighbours count); at 0, the default, the tower is a bag
of tokens (which one wins: theory/01 §11). What it leaves out: two towers, a learned
temperature. Truncation: a text is read up to its first `max_tokens` ids and the rest is
ignored, explicitly (a 1 MB query costs as much as a long chunk).

Shape letters: B texts, T ids per text (padded), V BPE vocabulary, K word buckets, C token
vector width, H MLP width, D output width, P candidate passages in a contrastive batch.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from minimodel.layers import (
    embedding_backward,
    embedding_forward,
    gelu_backward,
    gelu_forward,
    linear_backward,
    linear_forward,
)
from minirag.encoders.biencoder_files import (
    BiEncoderError,
    check_arrays,
    read_arrays,
    save_arrays,
)
from minirag.encoders.layers import (
    context_backward,
    context_forward,
    context_params,
    l2norm_backward,
    l2norm_forward,
    pool_backward,
    pool_forward,
)
from minirag.encoders.words import normalise, with_word_ids
from minirag.files.artifacts import MODELS_DIR, load_tokenizer, warn_if_kb_changed

BIENCODER_PATH = MODELS_DIR / "biencoder.npz"


@dataclass(frozen=True)
class BiEncoderConfig:
    vocab_size: int = 2048  # V: number of BPE ids (the tokenizer's len)
    word_buckets: int = 4096  # K: hashed ids for words of 2+ BPE tokens (0: BPE ids only)
    d_embed: int = 128  # C: width of a token vector
    d_hidden: int = 256  # H: width of the MLP's hidden layer (>= 2C for the LSA start)
    d: int = 128  # D: output dimension, what the vector store holds (why not 64: CLAUDE.md)
    max_tokens: int = 256  # a text is truncated to its first max_tokens ids (chunks: <= 230)
    sublinear_tf: bool = True  # a token repeated tf times weighs log(1 + tf), not tf
    n_layer: int = 0  # attention blocks before the pooling (0: a bag of tokens)
    n_head: int = 4  # heads per block (d_embed must divide by it)


class MiniBiEncoder:
    """Text -> unit vector of size config.d. Example:
        model = MiniBiEncoder(BiEncoderConfig(vocab_size=len(tok)), tok, np.random.default_rng(0))
        model.embed(["past of go", "go went gone"]).shape == (2, 128)
    """

    name = "biencoder"

    def __init__(self, config: BiEncoderConfig, tokenizer, rng: np.random.Generator,
                 dtype=np.float32):
        if len(tokenizer) != config.vocab_size:
            raise ValueError(f"tokenizer has {len(tokenizer)} ids, config.vocab_size is "
                             f"{config.vocab_size}")
        c = config
        self.cfg, self.tokenizer, self.d = c, tokenizer, c.d
        n = c.vocab_size + c.word_buckets  # every id the model has a vector for
        # a token that starts with a space starts a word (normalise() puts one before each)
        self._starts_word = [b[:1] == b" " for b in tokenizer.vocab]  # [V]

        def normal(*shape):  # N(0, 1 / fan_in): unit-scale activations through the MLP
            return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(dtype)

        self.params = {  # name -> array; AdamW updates them in place
            "tok_emb": (rng.standard_normal((n, c.d_embed)) * 0.1).astype(dtype),  # [V + K, C]
            "tok_logw": np.zeros((n, 1), dtype),  # [V + K, 1] learned log-weight
            "w1": normal(c.d_embed, c.d_hidden), "b1": np.zeros(c.d_hidden, dtype),  # [C, H]
            "w2": normal(c.d_hidden, c.d), "b2": np.zeros(c.d, dtype),  # [H, D]
        }
        if c.n_layer:  # "wpe" [max_tokens, C] and blocks "h{i}.*", each the identity at first
            self.params.update(context_params(c.n_layer, c.d_embed, c.max_tokens, rng, dtype))
        # fixed pooling weight of each token id: 0 for ids that hold no letter or digit (spaces,
        # punctuation, specials), else 1 until set_idf() gives it its inverse document frequency
        self.idf = np.array([float(bool(re.search(rb"[A-Za-z0-9]", b)))
                             for b in tokenizer.vocab] + [1.0] * c.word_buckets,
                            dtype=dtype)  # [V + K]
        self.idf[[*tokenizer.special_ids.values()]] = 0.0

    # ---------------------------------------------------------------- text -> ids
    def token_ids(self, text: str) -> list[int]:
        """The ids the model reads: normalised text -> BPE ids, each word of 2+ tokens followed
        by its word id (words.with_word_ids), truncated to the first max_tokens ids.
        Example (word_buckets K): " go went" -> [id(" go"), id(" went")]; a 3-piece word
        -> [a, b, c, V + hash((a, b, c)) % K].
        """
        if not isinstance(text, str):
            raise TypeError(f"expected a str, got {type(text).__name__}")
        cut = text[: self.cfg.max_tokens * 32]  # subtle: a BPE token is never > 32 chars here
        ids = self.tokenizer.encode(normalise(cut))
        if self.cfg.word_buckets:
            ids = with_word_ids(ids, self._starts_word, self.cfg.vocab_size,
                                self.cfg.word_buckets)
        return ids[: self.cfg.max_tokens]

    def batch(self, id_lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Pad to the longest: ids [B, T] (0 at padding) and mask [B, T] (0 at padding).

        With sublinear_tf, a token that occurs tf times in a text has mask log(1 + tf) / tf at
        each occurrence, so together they weigh log(1 + tf), not tf: the tenth "the" of a chunk
        adds little (theory/01, sublinear term frequency).
        """
        T = max(1, max(map(len, id_lists), default=1))
        ids = np.zeros((len(id_lists), T), dtype=np.int64)  # [B, T]
        mask = np.zeros((len(id_lists), T), dtype=self.idf.dtype)  # [B, T]
        for i, row in enumerate(id_lists):
            ids[i, : len(row)] = row
            if self.cfg.sublinear_tf and row:
                _, inverse, tf = np.unique(row, return_inverse=True, return_counts=True)
                mask[i, : len(row)] = (np.log1p(tf) / tf)[inverse]  # [len(row)]
            else:
                mask[i, : len(row)] = 1.0
        return ids, mask  # [B, T], [B, T]

    def set_idf(self, id_lists: list[list[int]], known: np.ndarray | None = None) -> None:
        """Pooling weight of token t = ln((1 + N) / (1 + df(t))) + 1 over N texts (smooth IDF),
        so "the" counts less than "went". Ids with no letter or digit stay at 0, and so do ids
        the texts never use: their vectors never learn anything, and averaging them in would
        only shrink a query's mean toward 0. Unless `known` [V + K] bool marks them: ids whose
        vectors mean something without the texts (a distilled start, training/distill.py)
        keep the weight of df = 0, the rarest word's."""
        df = np.zeros(len(self.idf))  # [V + K] texts holding each id
        for ids in id_lists:
            df[np.unique(np.asarray(ids, dtype=np.int64))] += 1
        idf = np.log((1 + len(id_lists)) / (1 + df)) + 1  # [V + K]
        used = df > 0 if known is None else (df > 0) | known  # [V + K]
        self.idf = np.where((self.idf > 0) & used, idf, 0.0).astype(self.idf.dtype)

    # ---------------------------------------------------------------- forward / backward
    def forward(self, ids, mask):
        """ids [B, T], mask [B, T] (0 hides a position) -> unit vectors [B, D], cache."""
        p = self.params
        x, c_emb = embedding_forward(ids, p["tok_emb"])  # [B, T] -> [B, T, C]
        c_ctx = None
        if self.cfg.n_layer:  # neighbours count: [B, T, C] -> [B, T, C]
            x, c_ctx = context_forward(x, p, mask > 0, self.cfg.n_layer, self.cfg.n_head)
        # token weight = idf(t) * exp(logw(t)): IDF to start with, then what training learns
        logw, c_logw = embedding_forward(ids, p["tok_logw"])  # [B, T] -> [B, T, 1]
        weight = mask * self.idf[ids] * np.exp(logw[:, :, 0])  # [B, T]
        pooled, c_pool = pool_forward(x, weight)  # [B, C]
        h, c_1 = linear_forward(pooled, p["w1"], p["b1"])  # [B, C] -> [B, H]
        a, c_g = gelu_forward(h)  # [B, H]
        y, c_2 = linear_forward(a, p["w2"], p["b2"])  # [B, H] -> [B, D]
        out, c_n = l2norm_forward(y)  # [B, D] unit rows
        return out, (c_emb, c_ctx, c_logw, weight, c_pool, c_1, c_g, c_2, c_n)

    def backward(self, dout, cache) -> dict[str, np.ndarray]:
        """Gradients of every parameter given dloss/dout [B, D]; a fresh dict on every call."""
        c_emb, c_ctx, c_logw, weight, c_pool, c_1, c_g, c_2, c_n = cache
        dy = l2norm_backward(dout, c_n)  # [B, D]
        da, dw2, db2 = linear_backward(dy, c_2)  # [B, H]
        dh = gelu_backward(da, c_g)  # [B, H]
        dpooled, dw1, db1 = linear_backward(dh, c_1)  # [B, C]
        dx, dweight = pool_backward(dpooled, c_pool)  # [B, T, C], [B, T]
        dlogw = (dweight * weight)[:, :, None]  # [B, T, 1] since d exp(u) / du = exp(u)
        g = {"tok_logw": embedding_backward(dlogw, c_logw),
             "w1": dw1, "b1": db1, "w2": dw2, "b2": db2}
        if c_ctx is not None:
            dx, g_ctx = context_backward(dx, c_ctx, self.params)  # [B, T, C]
            g.update(g_ctx)
        g["tok_emb"] = embedding_backward(dx, c_emb)
        return g

    def no_decay(self) -> set[str]:
        """Parameters AdamW should not shrink: the token table and weights, position vectors,
        biases and LayerNorm gains; the matrices of the MLP and of the blocks decay."""
        return {k for k, v in self.params.items() if v.ndim < 2 or k in ("tok_emb", "tok_logw",
                                                                          "wpe")}

    # ---------------------------------------------------------------- the Embedder protocol
    def embed(self, texts: list[str]) -> np.ndarray:  # [n] -> [n, D] float32
        """Unit rows; a text with no word (empty, spaces, punctuation) gives a zero row.

        subtle: each text goes through the network alone, so its vector never depends on
        the rest of the batch (padding and BLAS blocking would otherwise move the last bits).
        """
        if isinstance(texts, str):
            raise TypeError("embed takes a list of texts, not one str")
        X = np.zeros((len(texts), self.d), dtype=np.float32)  # [n, D]
        for i, text in enumerate(texts):
            ids, mask = self.batch([self.token_ids(text)])  # [1, T], [1, T]
            if (self.idf[ids] * mask).sum() > 0:
                X[i] = self.forward(ids, mask)[0][0]
        return X

    # ---------------------------------------------------------------- files
    @property
    def config(self) -> dict:
        """The architecture as a JSON-able dict (what a saved vector store records)."""
        return asdict(self.cfg)

    def arrays(self) -> dict[str, np.ndarray]:
        return {**self.params, "idf": self.idf}

    def save(self, path) -> None:
        """Write .npz atomically (biencoder_files.save_arrays): the arrays, a JSON header with
        the config and the tokenizer fingerprint, sha256. No pickle."""
        save_arrays(path, self.arrays(), {**self.config,
                                          "tokenizer_sha256": self.tokenizer.fingerprint})

    @classmethod
    def load(cls, path, tokenizer) -> MiniBiEncoder:
        """Read a saved model; missing, truncated, tampered, another format, another tokenizer
        or arrays that do not fit the config -> BiEncoderError naming the file."""
        arrays, config = read_arrays(path, tokenizer)
        try:
            model = cls(BiEncoderConfig(**config), tokenizer, np.random.default_rng(0))
        except (TypeError, ValueError) as e:
            raise BiEncoderError(f"{path}: bad config in header ({e})") from None
        check_arrays(path, arrays, {**model.params, "idf": model.idf})
        model.params = {k: arrays[k] for k in model.params}
        model.idf = arrays["idf"]
        return model


def load_biencoder(path: Path = BIENCODER_PATH) -> MiniBiEncoder:
    """The shipped bi-encoder on the project tokenizer; warns if the KB changed since."""
    model = MiniBiEncoder.load(path, load_tokenizer())
    if Path(path) == BIENCODER_PATH:
        warn_if_kb_changed("biencoder")
    return model

