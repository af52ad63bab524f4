"""The re-ranker: a cross-encoder that reads a chunk and the query together and scores them.

What it is: `CrossEncoder.score(query, chunks)`, a higher number for a more relevant chunk,
from minimodel.RelevanceModel reading one token sequence per pair:

    [chunk's search text, cut or padded to P tokens] <|q|> [query tokens]
     positions 0 .. P-1                               P ..

The chunk's half depends on the chunk only (attention is causal), so its keys and values are
computed the first time the chunk is a candidate and kept; a query then costs one pass over
its own ~15 tokens per candidate, not over P + 15. Each query token also carries a segment id
that says whether its word occurs in this chunk (1: no, 2: yes; the chunk's own tokens are
0): DrQA's exact-match flag, on the query's side so that the chunk's half stays cached; a small
model trained on a few thousand questions gets word overlap for free and learns which overlaps
matter (a fill-in's cue more than "the"). `sequences` builds the same layout for training
(training/rerank_train.py), so what is trained is what is scored. What it leaves out: the
first stage (retrieve.Retriever hands over its top N), and training.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from minimodel.relevance import RelevanceModel
from minirag.chunk import Chunk, search_text
from minirag.files.artifacts import MODELS_DIR, ArtifactError, load_tokenizer
from minirag.files.special_tokens import PAD, Q

RERANKER_PATH = MODELS_DIR / "reranker.npz"
PASSAGE_TOKENS = 192  # P: a chunk's search text is this long or shorter (99% of the KB's)
QUERY_TOKENS = 32  # <|q|> and a question's first 31 tokens; the model has P + 32 positions
SEGMENTS = 3  # 0: a chunk token, 1: a query token whose word the chunk lacks, 2: one it has


def word_ids(tokenizer) -> np.ndarray:
    """[V] an id per token for the text it spells, lowercased and without its leading space
    (" went" and "Went" share one; a word cut into pieces matches piece by piece), -1 for a
    special token or one with no letter or digit."""
    special = set(tokenizer.special_ids.values())
    ids: dict[str, int] = {}
    out = np.full(len(tokenizer), -1, dtype=np.int64)
    for t in range(len(tokenizer)):
        text = tokenizer.vocab[t].decode("utf-8", errors="replace").strip().lower()
        if t not in special and any(ch.isalnum() for ch in text):
            out[t] = ids.setdefault(text, len(ids))
    return out


def found_flags(query_words: np.ndarray, passage_words: np.ndarray) -> np.ndarray:
    """Segment ids [Tq] of a query's word ids: 2 where the word is among the passage's, else 1
    (a token of no word, id -1, is never found). Example: found_flags([3, -1, 5], [5, -1]) ->
    [1, 1, 2]"""
    return np.where((query_words >= 0) & np.isin(query_words, passage_words), 2, 1)


class CrossEncoder:
    """Example: CrossEncoder.load().score("past of go", [chunk_a, chunk_b]) -> array([2.1, -0.4])
    """

    def __init__(self, model: RelevanceModel, tokenizer, passage_tokens: int = PASSAGE_TOKENS):
        if not 0 < passage_tokens < model.config.block_size - 1:
            raise ValueError(f"passage_tokens ({passage_tokens}) must leave room for a query in "
                             f"the model's {model.config.block_size} positions")
        if model.config.n_segments != SEGMENTS:
            raise ValueError(f"the model has {model.config.n_segments} segment ids, not "
                             f"{SEGMENTS} (chunk, query word absent, query word present)")
        self.model, self.tokenizer, self.P = model, tokenizer, passage_tokens
        self.pad, self.q = tokenizer.encode_special(PAD)[0], tokenizer.encode_special(Q)[0]
        self.word = word_ids(tokenizer)  # [V] a token's word id, -1 for no word
        self._states: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}  # chunk id -> (k, v)s
        self._words: dict[str, np.ndarray] = {}  # chunk id -> the word ids of its passage

    @property
    def max_query_tokens(self) -> int:
        return self.model.config.block_size - self.P - 1  # after <|q|>

    def passage_ids(self, chunk: Chunk) -> list[int]:
        """The chunk's search text (title, section, table header, text) in exactly P tokens:
        its first P, or all of them and padding."""
        ids = self.tokenizer.encode(search_text(chunk))[: self.P]
        return ids + [self.pad] * (self.P - len(ids))

    def query_ids(self, query: str) -> list[int]:
        """<|q|> and the query's first tokens, as many as the model's positions leave room for."""
        return [self.q, *self.tokenizer.encode(query)[: self.max_query_tokens]]

    def flags(self, query: list[int], passage) -> np.ndarray:
        """The segment id of each query token [Tq] against one passage's ids: 2 where the
        token's text (word_ids) occurs in the passage, else 1."""
        return found_flags(self.word[np.asarray(query)], self.word[np.asarray(passage)])

    def sequences(self, passages: np.ndarray, queries: list[list[int]]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Training layout of row i: passages[i] [P] then queries[i], padded to one length.
        Returns ids [B, P + longest query], the position of each row's last query token [B],
        and the segment ids [B, P + longest query] (0 on the passage and the padding)."""
        n = max(map(len, queries))
        ids = np.full((len(queries), self.P + n), self.pad, dtype=np.int64)  # [B, T]
        segments = np.zeros_like(ids)  # [B, T]
        ids[:, : self.P] = passages
        for i, q in enumerate(queries):
            ids[i, self.P: self.P + len(q)] = q
            segments[i, self.P: self.P + len(q)] = self.flags(q, passages[i])
        return ids, np.array([self.P + len(q) - 1 for q in queries]), segments

    def score(self, query: str, chunks: list[Chunk]) -> np.ndarray:
        """Relevance scores [len(chunks)] of each chunk for the query, higher = more relevant.
        The states of chunks seen for the first time are computed now (one batch) and kept."""
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        new = list({c.id: c for c in chunks if c.id not in self._states}.values())
        if new:
            passages = np.array([self.passage_ids(c) for c in new])  # [n, P]
            states = self.model.passage_states(passages)
            for i, c in enumerate(new):
                self._states[c.id] = [(k[i], v[i]) for k, v in states]
                self._words[c.id] = np.unique(self.word[passages[i]])
        per_layer = zip(*(self._states[c.id] for c in chunks))  # layer -> U (k, v) pairs
        gathered = [(np.stack([k for k, _ in kv]), np.stack([v for _, v in kv]))
                    for kv in per_layer]  # per layer: k, v [U, H, P, D]
        q = self.query_ids(query)
        w = self.word[np.asarray(q)]  # [Tq]
        segments = np.array([found_flags(w, self._words[c.id]) for c in chunks])  # [U, Tq]
        return self.model.scores_after(gathered, q, segments)

    def save(self, path: Path = RERANKER_PATH) -> None:
        self.model.save(path)

    @classmethod
    def load(cls, path: Path = RERANKER_PATH, tokenizer=None) -> CrossEncoder:
        """The shipped re-ranker; a missing file is an ArtifactError that says how to build it."""
        if not Path(path).is_file():
            raise ArtifactError(f"{path}: re-ranker not found; run `make models` to build it")
        tokenizer = tokenizer or load_tokenizer()
        model = RelevanceModel.load(path, tokenizer.fingerprint)
        return cls(model, tokenizer, model.config.block_size - QUERY_TOKENS)
