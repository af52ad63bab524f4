"""Thesaurus: what the teacher knows about the words the KB never uses, left behind as a table.

What it is: for each whole word of the teacher's vocabulary that the KB lacks ("tale",
"acquire", "nile"), the KB words the teacher (all-MiniLM-L6-v2, encoders/minilm.py) puts
nearest: cosine >= TAU, at most M of them, none that starts with the word's own first STEM
letters (an inflection of the word itself is no news). `build_thesaurus` makes it from two word
lists and the teacher's embed function, once, in `make models`; at query time it is a plain
dict, no teacher and no vectors: a query with "tale" in it gains "stories narrative story",
one with "liquid" gains "water". `Retriever(..., thesaurus=...)` hands the expanded text to
the dense and the BM25 list (theory/03 §9).
What it leaves out: the words the KB has (what they mean is the encoder's and BM25's
business), phrases, and a word's several senses (one vector per word).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from minirag.files.artifacts import MODELS_DIR, ArtifactError
from minitokenizer.atomic import atomic_write

THESAURUS_PATH = MODELS_DIR / "thesaurus.json"
FORMAT = "minirag-thesaurus/1"
TAU, M, STEM = 0.5, 3, 4  # chosen on dev with two fresh scratch sets beside it (EXPERIMENTS.md)
BLOCK = 2048  # rows of similarities computed at once: [BLOCK, n_kb] float32


class Thesaurus:
    """word -> the KB words that stand in for it. Example:
    Thesaurus({"tale": ["story"]}).expand(["a", "tale", "of", "old"]) -> ["story"]
    """

    def __init__(self, neighbours: dict[str, list[str]]):
        self.neighbours = neighbours

    def expand(self, words: list[str]) -> list[str]:
        """The neighbours of `words` (a query's tokens, retrieve.Retriever.expanded), in order."""
        return [n for w in words for n in self.neighbours.get(w, ())]

    def save(self, path: Path = THESAURUS_PATH, **meta) -> None:
        """Versioned JSON (keys sorted), written atomically; `meta` is recorded beside it."""
        text = json.dumps({"format": FORMAT, **meta, "neighbours": self.neighbours},
                          sort_keys=True, ensure_ascii=False) + "\n"
        atomic_write(Path(path), lambda f: f.write(text.encode()))

    @classmethod
    def load(cls, path: Path = THESAURUS_PATH) -> Thesaurus:
        path = Path(path)
        if not path.is_file():
            raise ArtifactError(f"{path}: no thesaurus; `make models` builds it (with the "
                                f"teacher installed: `make teacher`)")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ArtifactError(f"{path}: not valid JSON ({e}); run `make models`") from None
        table = data.get("neighbours") if isinstance(data, dict) else None
        if not isinstance(table, dict) or data.get("format") != FORMAT or not all(
                isinstance(k, str) and isinstance(v, list) and all(isinstance(n, str) for n in v)
                for k, v in table.items()):
            raise ArtifactError(f"{path}: not a {FORMAT} file; run `make models`")
        return cls(table)


def build_thesaurus(kb_words: list[str], other_words: list[str], embed, tau: float = TAU,
                    m: int = M, stem: int = STEM) -> Thesaurus:
    """The thesaurus of `other_words` over `kb_words`; `embed(words)` -> [n, d] unit rows.

    sim = G @ K.T   [n_other, n_kb]; a pair whose first `stem` letters agree is left out, then
    each word keeps its m best KB words at sim >= tau (ties: the earlier KB word).
    Example: with vectors whose cosine is 0.9 for ("tale", "story"), 0.2 for ("tale", "verb"):
        build_thesaurus(["story", "verb"], ["tale"], embed).neighbours -> {"tale": ["story"]}
    """
    if not kb_words or not other_words:
        raise ValueError("a thesaurus needs KB words and other words")
    K, G = embed(kb_words), embed(other_words)  # [n_kb, d], [n_other, d]
    k_stem = np.array([w[:stem] for w in kb_words])  # [n_kb] strings
    o_stem = np.array([w[:stem] for w in other_words])  # [n_other] strings
    out: dict[str, list[str]] = {}
    take = min(m, len(kb_words))
    for lo in range(0, len(other_words), BLOCK):
        sim = G[lo:lo + BLOCK] @ K.T  # [b, n_kb]
        sim[o_stem[lo:lo + BLOCK, None] == k_stem[None, :]] = -np.inf
        top = np.argsort(-sim, axis=1, kind="stable")[:, :take]  # [b, take]
        best = np.take_along_axis(sim, top, axis=1) >= tau  # [b, take]
        for i in np.flatnonzero(best.any(axis=1)):
            out[other_words[lo + i]] = [kb_words[j] for j in top[i][best[i]]]
    return Thesaurus(out)
