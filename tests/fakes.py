"""Fakes shared by the isolation tests: one per concept (chunks, an embedder, a reader model)."""

from pathlib import Path

import numpy as np

from minirag.chunk import Chunk, chunk_id


def make_chunks(texts: list[str], doc: str = "doc.md", separate_docs: bool = False
                ) -> list[Chunk]:
    """One chunk per text, section "S": all in document `doc` at offsets 0, 1, 2, ... or, with
    `separate_docs`, each in a document of its own (d0.md, d1.md, ...) at offset 0."""
    if separate_docs:
        return [make_chunk(t, f"d{i}.md") for i, t in enumerate(texts)]
    return [Chunk(chunk_id(doc, i), t, doc, i, {"section": "S"}) for i, t in enumerate(texts)]


def make_chunk(text: str, doc: str = "d0.md", **metadata) -> Chunk:
    """One chunk at offset 0 of `doc`, section "S" unless `metadata` says otherwise."""
    return Chunk(chunk_id(doc, 0), text, doc, 0, {"section": "S", **metadata})


def write_kb(root: Path, files: dict[str, str]) -> Path:
    """A knowledge base of one's own: each {file name: markdown} written under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


class TableEmbedder:
    """A fake embedder: looks each text up in a table of vectors (not normalised on purpose)."""

    name = "table"

    def __init__(self, table: dict[str, list[float]], d: int):
        self.table, self.d = table, d
        self.config = {"entries": len(table)}

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.table[t] for t in texts], dtype=np.float32).reshape(-1, self.d)


class FakeTeacher:
    """A fake teacher with MiniLMEmbedder's surface (embed, config["fingerprint"], and a
    WordPiece vocabulary at .encoder.tokenizer.vocab): a text's vector is the unit sum of its
    words' vectors, each drawn from a generator seeded by a blake2b hash of the word, plus a
    large shared direction for the words of one `topics` group (so "kitten" is like "cat").
    `calls` counts the texts it has embedded (a cache test reads it)."""

    name = "fake-teacher"

    def __init__(self, topics: dict[str, int] | None = None, d: int = 16,
                 words: tuple[str, ...] = ()):
        from types import SimpleNamespace

        self.d, self.topics, self.calls = d, topics or {}, 0
        self.config = {"fingerprint": "fake-teacher"}
        vocab = {w: i for i, w in enumerate(("[PAD]", "##s", *words))}
        self.encoder = SimpleNamespace(tokenizer=SimpleNamespace(vocab=vocab))

    def word(self, w: str) -> np.ndarray:  # [d]
        import hashlib

        seed = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(self.d)
        if w in self.topics:
            v[self.topics[w] % self.d] += 20.0
        return v

    def embed(self, texts: list[str]) -> np.ndarray:  # [n, d] unit rows
        self.calls += len(texts)
        out = np.zeros((len(texts), self.d), dtype=np.float32)
        for i, t in enumerate(texts):
            v = sum((self.word(w) for w in t.lower().split()), np.zeros(self.d)) + 1e-3
            out[i] = v / np.linalg.norm(v)
        return out


def tiny_span_reader(vocab_size: int, seed: int = 0, noise: float = 0.0):
    """An untrained one-block SpanReader (d_model 16) whose weights are shaken by N(0, noise):
    "any weights", for invariants that must hold whatever a reader learned."""
    from minimodel.mini_gpt import MiniGPTConfig  # here, so chunk-level tests import no model
    from minimodel.span_reader import SpanReader

    model = SpanReader(MiniGPTConfig(vocab_size=vocab_size, d_model=16, n_head=2, n_layer=1),
                       seed=seed)
    rng = np.random.default_rng(seed)
    for p in model.params.values():
        p += rng.normal(0, noise, p.shape).astype(p.dtype)
    return model


def tiny_reader(tokenizer, seed: int = 0, null_margin: float = 0.0):
    """A Reader over `tiny_span_reader`'s untrained weights: with null_margin 1e9 it always
    abstains, with -1e9 it always answers, so a test sees what the rules do whatever the model."""
    from minirag.reader import Reader  # here, as in tiny_span_reader

    return Reader(tiny_span_reader(len(tokenizer), seed), tokenizer, null_margin=null_margin)


def abstaining_read(tokenizer, seed: int, question: str, text: str):
    """The Reading of `question` over one chunk of `text` by a `tiny_reader` whose model always
    abstains: what the reading rules answer from the window, whatever the weights."""
    from minirag.prompt import build_prompt  # here, as in tiny_reader

    prompt = build_prompt(question, [make_chunk(text, "r.md")], tokenizer=tokenizer)
    return tiny_reader(tokenizer, seed, null_margin=1e9).read(prompt)
