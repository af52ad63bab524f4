"""The whole loop in four lines: retrieve, build the prompt, read, answer with citations.

What it is: `rag_answer(query, store, reader)` and `RAGPipeline.from_defaults()`, which
loads the shipped tokenizer, re-ranker, reader and LoRA adapter and the cached index of the KB.
Every intermediate value is kept on the Answer so a learner can print it. Follows DESIGN §2 and
§3 (pipeline).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from minimodel.checkpoint import CheckpointError
from minirag.chunk import Chunk
from minirag.encoders.thesaurus import Thesaurus
from minirag.files.kb import DEFAULT_KB
from minirag.index.cache import IndexConfig, load_or_build_index
from minirag.prompt import Prompt, build_prompt
from minirag.reader import ADAPTER_PATH, Reader, Reading
from minirag.rerank.cross_encoder import CrossEncoder
from minirag.retrieve import Retriever, check_query
from minirag.topk import check_k

# The dense half of the pipeline's hybrid retriever: the trained encoder. It finds a verb's
# row where the hashing hybrid does not, and the reader still abstains on the unanswerable
# questions (theory/05 §4 has both rows, as `make eval` prints them).
DEFAULT_EMBEDDER = "biencoder"
# Whether the hybrid fuses a third list, the table rows a question looks up (tables.RowIndex):
# chosen on dev, where recall does not move and the verbs' rows reach the prompt (EXPERIMENTS.md)
DEFAULT_ROWS = True
# Whether the hybrid's dense and BM25 lists read the query expanded by the thesaurus the teacher
# left behind (encoders/thesaurus.py): chosen on dev (EXPERIMENTS.md)
DEFAULT_THESAURUS = True
# Whether the pipeline re-ranks its first stage's top 20 with the shipped cross-encoder:
# chosen on dev by `minirag eval --split dev` (EXPERIMENTS.md has the rows)
DEFAULT_RERANK = False
# The LoRA adapter the reader reads its task's questions with ("A or B?": reader.ROUTES), the
# base reader reading the rest: chosen on dev, where those questions gain and no other row moves
# (EXPERIMENTS.md). None reads every question with the base.
DEFAULT_ADAPTER: Path | None = ADAPTER_PATH


@dataclass
class Answer:
    text: str  # "went [#1]" or "I don't know — not in the rules I have."
    abstained: bool
    citations: dict[str, Chunk]  # "[#1]" -> the chunk the answer came from (empty if none)
    chunks: list[Chunk]  # what retrieval returned, best first
    prompt: Prompt  # what the reader saw
    reading: Reading  # the reader's span and scores
    timings: dict[str, float] = field(default_factory=dict)  # ms: retrieve, prompt, generate


def rag_answer(query: str, retriever: Retriever, reader: Reader, k: int = 3,
               mode: str = "hybrid") -> Answer:
    """Example: rag_answer("what's the past participle of sing?", retriever, reader).text
    -> "sung [#2]" (the shipped artifacts)."""
    check_query(query)
    t0 = time.perf_counter()
    chunks = [c for c, _ in retriever.retrieve_scored(query, k, mode)]
    t1 = time.perf_counter()
    idf = retriever.bm25.idf_of if retriever.bm25 is not None else None
    prompt = build_prompt(query, chunks, tokenizer=reader.tokenizer, idf=idf)
    t2 = time.perf_counter()
    reading = reader.read(prompt)
    t3 = time.perf_counter()
    by_id = {c.id: c for c in chunks}
    cited = {reading.marker: by_id[prompt.citations[reading.marker]]} if reading.marker else {}
    ms = lambda a, b: round((b - a) * 1000, 3)  # noqa: E731
    return Answer(reading.text, reading.abstained, cited, chunks, prompt, reading,
                  {"retrieve": ms(t0, t1), "prompt": ms(t1, t2), "generate": ms(t2, t3),
                   "total": ms(t0, t3)})


def load_reader(adapter: Path | None = DEFAULT_ADAPTER) -> Reader:
    """The shipped reader with a LoRA `adapter` file routed to its task's questions (None: the
    base alone). The default adapter, when it is missing or was made for another reader (one
    rebuilt since), is left out with a warning that says how to rebuild it; any other adapter
    that does not load is an error."""
    if adapter is None:
        return Reader.load()
    try:
        return Reader.load(adapter=adapter)
    except CheckpointError as e:
        if Path(adapter) != DEFAULT_ADAPTER:
            raise
        warnings.warn(f"reading without the adapter: {e} (rebuild it: minirag train adapter)",
                      stacklevel=2)
        return Reader.load()


class RAGPipeline:
    """The shipped artifacts wired together: `RAGPipeline.from_defaults().ask("past of go")`."""

    def __init__(self, retriever: Retriever, reader: Reader, k: int = 3):
        self.retriever, self.reader, self.k = retriever, reader, check_k(k)

    @classmethod
    def from_defaults(cls, kb: Path = DEFAULT_KB, embedder: str = DEFAULT_EMBEDDER, k: int = 3,
                      rerank: bool = DEFAULT_RERANK, adapter: Path | None = DEFAULT_ADAPTER,
                      rows: bool = DEFAULT_ROWS,
                      thesaurus: bool = DEFAULT_THESAURUS) -> RAGPipeline:
        """The shipped reader (with `adapter`, `load_reader`) on the cached index of `kb`, its
        hybrid fusing the looked-up table rows when `rows`, reading the query expanded by the
        shipped thesaurus when `thesaurus`, re-ranked by the shipped cross-encoder when `rerank`
        (a missing artifact is an error that says how to build it)."""
        index = load_or_build_index(kb, IndexConfig(embedder=embedder))
        reranker = CrossEncoder.load() if rerank else None
        return cls(Retriever(index.store, index.bm25, reranker=reranker, rows=rows,
                             thesaurus=Thesaurus.load() if thesaurus else None),
                   load_reader(adapter), k)

    def ask(self, query: str, k: int | None = None) -> Answer:
        return rag_answer(query, self.retriever, self.reader, self.k if k is None else k)
