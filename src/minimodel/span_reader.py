"""A span head on the MiniGPT trunk: the reader points at its answer inside the prompt.

What it is: the trunk's final hidden states h [B, T, C] go through one linear map to two
scores per position, start and end. The answer is the span (s, e) with the best
start[s] + end[e] inside the allowed positions; pointing both ends at a chosen "null"
position (the reader puts its answer token <|a|> there) means "no answer here".
Why a pointer and not free generation: a tiny generator memorises the facts it was trained
on and uses the context as a switch; a pointer can only copy from the context, so what it
says is what the context says (theory/07, "read, not remember"). Same idea as the span head
of extractive QA models (Devlin et al. 2019; SQuAD 2.0's null answer).
What it leaves out: anything about prompts or RAG (minirag builds the inputs).
"""

from __future__ import annotations

import numpy as np

from . import layers as L
from .heads import TrunkWithHead
from .mini_gpt import MiniGPTConfig

NEG = -1e9  # the score of a position the span may not use


def masked_log_softmax(z, allowed):
    """log softmax of z [B, T] over the positions where allowed [B, T] is True."""
    z = np.where(allowed, z, NEG)  # [B, T]
    z = z - z.max(axis=1, keepdims=True)  # [B, T] stable
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))  # [B, T]


def span_targets(spans, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end target distributions [B, T] from gold positions spans [B, 2] (one-hot)
    or from distributions spans [B, 2, T] (returned as they are)."""
    spans = np.asarray(spans)
    if spans.ndim == 3:
        return spans[:, 0], spans[:, 1]
    rows = np.arange(len(spans))
    p_start, p_end = np.zeros((len(spans), T)), np.zeros((len(spans), T))  # [B, T]
    p_start[rows, spans[:, 0]] = 1.0
    p_end[rows, spans[:, 1]] = 1.0
    return p_start, p_end


class SpanReader(TrunkWithHead):
    """Example: SpanReader(MiniGPTConfig(vocab_size=10)).scores([[1, 2, 3]])[0].shape -> (1, 3)"""

    KIND = "span_reader"

    @staticmethod
    def head_shapes(config: MiniGPTConfig) -> dict[str, tuple[int, ...]]:
        return {"span.w": (config.d_model, 2), "span.b": (2,)}  # [C, 2]: start, end

    def scores(self, ids, segments=None):
        """start [B, T], end [B, T] scores, and the cache for the backward pass.
        `segments` [B, T]: the trunk's segment ids (MiniGPT.hidden_forward), if it has any."""
        h, cache = self.gpt.hidden_forward(ids, segments=segments)  # [B, T, C]
        se, c_head = L.linear_forward(h, self.params["span.w"], self.params["span.b"])  # [B,T,2]
        return se[..., 0], se[..., 1], (cache, c_head)

    def loss_and_grads(self, ids, spans, allowed, segments=None, logit_bias=None, rng=None):
        """Mean over the batch of the cross-entropy of start and end, each a softmax over the
        allowed positions [B, T]. `spans` [B, 2]: the gold (start, end) positions (the null
        position twice when the prompt holds no answer); or [B, 2, T]: target distributions
        over the positions (soft targets, e.g. another reader's `span_probs`, for
        distillation; a one-hot row is the same as its gold position). segments [B, T] as in
        `scores`. `logit_bias` [B, T], if given, is added to the start and the end scores
        before both softmaxes: m / 2 on the null position of a row asks the gold span to beat
        the null by m, not merely to win (a margin loss). A batch is (ids, spans, allowed[,
        segments[, logit_bias]]), so minimodel.train.train runs this model as it runs
        MiniGPT. `rng` turns dropout on. Returns (loss, grads), fresh arrays every call."""
        h, cache = self.gpt.hidden_forward(ids, rng=rng, segments=segments)  # [B, T, C]
        se, c_head = L.linear_forward(h, self.params["span.w"], self.params["span.b"])  # [B,T,2]
        s, e = se[..., 0], se[..., 1]  # [B, T], [B, T]
        if logit_bias is not None:  # a constant shift: d(s + bias)/ds = 1, the backward as is
            s, e = s + logit_bias, e + logit_bias
        B, T = s.shape
        p_start, p_end = span_targets(spans, T)  # [B, T], [B, T]
        ls, le = masked_log_softmax(s, allowed), masked_log_softmax(e, allowed)  # [B, T]
        loss = -(p_start * np.where(allowed, ls, 0.0) + p_end * np.where(allowed, le, 0.0)
                 ).sum() / B
        # d(-sum p log softmax)/dz = softmax - p (p sums to 1), zero where not allowed; / B
        ds = (np.exp(ls) - p_start) * allowed  # [B, T]
        de = (np.exp(le) - p_end) * allowed  # [B, T]
        dse = np.stack([ds, de], axis=-1).astype(s.dtype) / B  # [B, T, 2]
        dh, g_w, g_b = L.linear_backward(dse, c_head)  # [B, T, C], [C, 2], [2]
        grads = self.gpt.hidden_backward(dh, cache)
        grads["span.w"], grads["span.b"] = g_w, g_b
        return float(loss), grads

    def span_probs(self, ids, allowed, segments=None) -> np.ndarray:
        """[B, 2, T]: the model's own start and end distributions over the allowed positions,
        the soft targets `loss_and_grads` takes (a frozen copy's, to keep a model near it)."""
        s, e, _ = self.scores(ids, segments)
        return np.stack([np.exp(masked_log_softmax(s, allowed)),
                         np.exp(masked_log_softmax(e, allowed))], axis=1) * allowed[:, None]

    def best_span(self, start, end, segments, null: int, max_len: int = 8):
        """The best (s, e) of one prompt's scores start, end [T] with s <= e < s + max_len,
        both inside one segment (lo, hi) of `segments`; and the null score start + end at
        `null`. Returns (s, e, span_score, null_score); s = e = -1 when no segment exists."""
        best = (-1, -1, -np.inf)
        for lo, hi in segments:
            S = start[lo:hi, None] + end[None, lo:hi]  # [n, n]: S[i, j] = start + end
            i, j = np.indices(S.shape)
            S = np.where((j >= i) & (j < i + max_len), S, -np.inf)  # [n, n] valid spans only
            k = int(np.argmax(S))
            if S.flat[k] > best[2]:
                best = (lo + k // S.shape[1], lo + k % S.shape[1], float(S.flat[k]))
        return best[0], best[1], best[2], float(start[null] + end[null])
