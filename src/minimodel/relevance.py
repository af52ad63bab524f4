"""A relevance head on the MiniGPT trunk: one score for a (passage, query) pair read together.

What it is: a cross-encoder. The trunk reads one sequence, the passage then the query, and a
linear head turns the hidden state of the query's last token into a score s = h_last . w + b.
Every query token attends to every passage token in every layer, which is what makes it more
precise than a bi-encoder (two vectors that never see each other) and much slower: one
transformer pass per (query, passage) pair instead of one dot product.
Why the passage comes first: attention is causal, so the passage's keys and values do not
depend on the query. They are computed once per passage (`passage_states`) and reused for
every query that ranks it (`scores_after`, the KV cache MiniGPT uses to generate); per query
only its own few tokens run. The passage is padded to a fixed P tokens so that the query
always starts at position P. Training is listwise (`loss_and_grads`): rows come in lists of
`list_size`, the first of each list the relevant passage, and the loss is the cross-entropy
of a softmax over the list's scores (ListNet's top-one form; Cao et al., ICML 2007).
What it leaves out: anything about chunks, tokenizers or RAG (minirag.rerank builds inputs).
"""

from __future__ import annotations

import numpy as np

from . import layers as L
from .heads import TrunkWithHead
from .mini_gpt import MiniGPTConfig


def list_softmax_loss(s: np.ndarray, list_size: int) -> tuple[float, np.ndarray]:
    """Mean over lists of -log softmax(list)[0], and its gradient ds. s [B] holds B / list_size
    lists one after another, each with its relevant row first.
    Example: list_softmax_loss(np.zeros(4), 2) -> (log 2, [-0.25, 0.25, -0.25, 0.25])"""
    if list_size < 2 or len(s) % list_size:
        raise ValueError(f"{len(s)} scores do not make lists of {list_size} (>= 2)")
    z = s.reshape(-1, list_size).astype(np.float64)  # [lists, L]
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))  # [lists, L]
    # d(-log p_0)/dz = softmax - onehot(0); / lists for the mean
    dz = np.exp(logp)
    dz[:, 0] -= 1.0
    return float(-logp[:, 0].mean()), (dz / len(z)).reshape(-1).astype(s.dtype)  # [B]


class RelevanceModel(TrunkWithHead):
    """Example: RelevanceModel(MiniGPTConfig(vocab_size=10)).scores([[1, 2, 3]], [2]).shape
    -> (1,)"""

    KIND = "relevance"

    @staticmethod
    def head_shapes(config: MiniGPTConfig) -> dict[str, tuple[int, ...]]:
        return {"rel.w": (config.d_model,), "rel.b": (1,)}  # s = h_last . w + b

    def scores(self, ids, last, segments=None) -> np.ndarray:
        """Scores [B] of sequences ids [B, T] (passage, then query), each read at its position
        last [B] (the query's last token; the padding after it is never seen, attention being
        causal). `segments` [B, T]: the trunk's segment ids, if it has any (MiniGPT)."""
        h, _ = self.gpt.hidden_forward(ids, segments=segments)  # [B, T, C]
        return self._head(h, last)

    def _head(self, h, last):  # [B, T, C], [B] -> [B]
        rows = np.arange(len(h))
        return h[rows, np.asarray(last)] @ self.params["rel.w"] + self.params["rel.b"][0]

    def loss_and_grads(self, ids, last, list_size: int, segments=None, rng=None):
        """Listwise loss (list_softmax_loss) of the batch ids [B, T], last [B] (segments as in
        `scores`), and the gradient of every parameter. A batch is (ids, last, list_size[,
        segments]), so minimodel.train.train runs this model as it runs MiniGPT. `rng` turns
        dropout on."""
        h, cache = self.gpt.hidden_forward(ids, rng=rng, segments=segments)  # [B, T, C]
        last = np.asarray(last)
        rows = np.arange(len(h))
        h_last = h[rows, last]  # [B, C]
        s = h_last @ self.params["rel.w"] + self.params["rel.b"][0]  # [B]
        loss, ds = list_softmax_loss(s, list_size)  # ds [B]
        dh = np.zeros_like(h)  # [B, T, C]: only the read positions get a gradient
        dh[rows, last] = ds[:, None] * self.params["rel.w"]  # s = h_last . w + b
        grads = self.gpt.hidden_backward(dh, cache)
        grads["rel.w"] = ds @ h_last  # [C]
        grads["rel.b"] = np.array([ds.sum()], dtype=ds.dtype)  # [1]
        return loss, grads

    # ------------------------------------------------------------ passages cached, queries run

    def passage_states(self, passages) -> list[tuple[np.ndarray, np.ndarray]]:
        """Keys and values of passages [U, P] in every layer (segment 0, if the trunk has
        segments): one (k, v) pair per layer, each [U, H, P, D]. They depend on the passage
        only (causal attention), so they are kept."""
        cfg = self.config
        kv = [L.KVCache(len(passages), cfg.n_head, cfg.block_size, cfg.d_model // cfg.n_head,
                        cfg.dtype) for _ in range(cfg.n_layer)]
        self.gpt.hidden_forward(passages, kv=kv)
        P = np.shape(passages)[1]
        return [(c.k[:, :, :P].copy(), c.v[:, :, :P].copy()) for c in kv]

    def scores_after(self, states: list[tuple[np.ndarray, np.ndarray]], query, segments=None
                     ) -> np.ndarray:
        """Scores [U] of one query's ids [Tq] after U passages whose states are given
        (passage_states, rows gathered as needed), the query's tokens with segment ids
        segments [U, Tq] (one row per passage: a token's segment may depend on the passage):
        the same numbers as `scores` of the whole sequences, at the cost of the query's
        tokens only."""
        cfg = self.config
        U, P = states[0][0].shape[0], states[0][0].shape[2]
        kv = []
        for k, v in states:
            c = L.KVCache(U, cfg.n_head, cfg.block_size, cfg.d_model // cfg.n_head, cfg.dtype)
            c.k[:, :, :P], c.v[:, :, :P], c.n = k, v, P
            kv.append(c)
        ids = np.broadcast_to(np.asarray(query), (U, len(query)))  # [U, Tq]: one query, U rows
        h, _ = self.gpt.hidden_forward(ids, kv=kv, segments=segments)  # [U, Tq, C]
        return self._head(h, np.full(U, len(query) - 1))
