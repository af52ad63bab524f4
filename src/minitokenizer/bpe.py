"""Byte-level BPE tokenizer: bytes in, merges learned from pair counts, ids out.

What it is: GPT-style byte-pair encoding. Text is cut into pre-tokens by a regex, each
pre-token is turned into UTF-8 bytes (ids 0..255), and learned merges fuse adjacent ids into
new ones (256, 257, ...) in the order they were learned. Special tokens get the ids after the
merges and only `encode_special` produces them. What it leaves out: normalisation (NFC...),
byte fallback tables, parallel encoding. Follows GPT-2/GPT-4 (regex split + byte BPE); the
oracle is tiktoken built from the same ranks (tests/test_bpe.py); see theory/06-bpe-tokenizer.md.

Vocab size: `vocab_size` counts EVERYTHING: 256 bytes + merges + special tokens, so
`len(tok) == vocab_size` is the size of a model's embedding table (fewer merges only if the
training text runs out of pairs).
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import re
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

from minitokenizer.atomic import atomic_write
from minitokenizer.train import Pair, merge, train_incremental, train_naive

# The pre-split, written for Python's `re` (no \p{..}, no possessive quantifiers in 3.10).
# It mirrors GPT-4's cl100k pattern piece by piece:
#   '(?i:[sdmt]|ll|ve|re)    English contractions: 's 't 'd 'm 'll 've 're (any case)
#   (?:_|[^\r\n\w])?[^\W\d_]+  a word: letters, after at most one character that is not a
#                            letter, digit or newline (" the", "(go", "_var")
#   \d{1,3}                  numbers, at most three digits per piece
#    ?(?:_|[^\s\w])+[\r\n]*  punctuation, with an optional leading space
#   \s+\Z | \s*[\r\n] | \s+(?!\S) | \s   whitespace: trailing, up to a newline, all but the last
# How it differs from GPT-4's: `re` has no \p{L}/\p{N}, so "letter" is [^\W\d_] (Python's
# isalnum() minus decimal digits) = \p{L} + \p{Nl} + \p{No}: '²', '½', 'Ⅻ' join words here,
# while GPT-4 splits them as numbers; and Python's \s also matches \x1c-\x1f. Possessive
# quantifiers (?+ ++) are dropped: in this pattern they never change a match.
SPLIT_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|(?:_|[^\r\n\w])?[^\W\d_]+|\d{1,3}| ?(?:_|[^\s\w])+[\r\n]*"""
    r"""|\s+\Z|\s*[\r\n]|\s+(?!\S)|\s"""
)
# The same pattern in fancy-regex syntax, for tiktoken (the oracle). Its classes equal the ones
# above on every character assigned in Python's Unicode database (tests/test_bpe.py checks all
# 1.1M code points); they can differ only on characters that database does not know yet.
TIKTOKEN_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?[\p{L}\p{Nl}\p{No}]+|\p{Nd}{1,3}"""
    r"""| ?[^\s\x1c-\x1f\p{L}\p{N}]+[\r\n]*|[\s\x1c-\x1f]+$|[\s\x1c-\x1f]*[\r\n]"""
    r"""|[\s\x1c-\x1f]+(?![^\s\x1c-\x1f])|[\s\x1c-\x1f]"""
)
FORMAT_VERSION = 1
CACHE_SIZE = 1 << 16  # pre-tokens remembered by encode before the cache starts over


class TokenizerFileError(ValueError):
    """A tokenizer file that cannot be used (truncated, tampered, wrong version); names the file."""


def _check_specials(special_tokens: Sequence[str]) -> None:
    if isinstance(special_tokens, str):
        raise TypeError(f"special_tokens must be a list of str, got the str {special_tokens!r}")
    if len(set(special_tokens)) != len(special_tokens) or not all(
            isinstance(s, str) and s for s in special_tokens):
        raise ValueError(f"special tokens must be distinct non-empty strings, got "
                         f"{list(special_tokens)!r}")


class _Cache(dict):
    """pre-token -> its token ids; a miss runs BPE on the pre-token (dict hits stay in C)."""

    def __init__(self, bpe):
        super().__init__()
        self.bpe = bpe

    def __missing__(self, piece: str) -> list[int]:
        if len(self) >= CACHE_SIZE:
            self.clear()  # bounded memory: an adversarial text cannot grow it without limit
        ids = self[piece] = self.bpe(piece)
        return ids


class BPETokenizer:
    """A trained byte-level BPE: `merges[k]` is the pair that token 256 + k stands for.

    Example:
        >>> tok = BPETokenizer.train("aaabdaaabac", vocab_size=260, special_tokens=["<|eos|>"])
        >>> tok.merges   # aa, then ab (ties break by lowest ids), then aa+ab
        [(97, 97), (97, 98), (256, 257)]
        >>> tok.encode("aaabdaaabac")
        [258, 100, 258, 97, 99]
        >>> tok.encode_special("<|eos|>"), tok.decode([258, 259])
        ([259], 'aaab<|eos|>')
    """

    def __init__(self, merges: list[Pair], special_tokens: Sequence[str] = (),
                 pattern: str = SPLIT_PATTERN):
        self.merges = [(int(a), int(b)) for a, b in merges]
        self.special_tokens = list(special_tokens)
        self.pattern = pattern
        # vocab: id -> bytes. The 256 single bytes, then each merge's two halves glued together.
        self.vocab = [bytes([i]) for i in range(256)]
        for k, (a, b) in enumerate(self.merges):
            if not (0 <= a < 256 + k and 0 <= b < 256 + k):
                raise ValueError(f"merge {k} {(a, b)} uses an id that does not exist yet")
            self.vocab.append(self.vocab[a] + self.vocab[b])
        self.ranks = {pair: 256 + k for k, pair in enumerate(self.merges)}  # pair -> its new id
        _check_specials(self.special_tokens)
        n = len(self.vocab)
        self.special_ids = {s: n + j for j, s in enumerate(self.special_tokens)}  # str -> id
        self.vocab += [s.encode("utf-8") for s in self.special_tokens]  # decode renders them
        self._split = re.compile(pattern).findall
        self._cache = _Cache(self._bpe)

    # --- training -----------------------------------------------------------------------------
    @classmethod
    def train(cls, text: str, vocab_size: int, special_tokens: Sequence[str] = (),
              pattern: str = SPLIT_PATTERN, method: str = "incremental") -> BPETokenizer:
        """Learn `vocab_size - 256 - len(special_tokens)` merges from `text`.

        `method` is "incremental" (fast) or "naive" (recount everything every merge); both
        give the same merges. See minitokenizer/train.py.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        _check_specials(special_tokens)
        trainers = {"incremental": train_incremental, "naive": train_naive}
        if method not in trainers:
            raise ValueError(f"method must be one of {sorted(trainers)}, got {method!r}")
        n_merges = operator.index(vocab_size) - 256 - len(special_tokens)
        if n_merges < 0:
            raise ValueError(f"vocab_size ({vocab_size}) must be >= 256 bytes + "
                             f"{len(special_tokens)} special tokens")
        merges = trainers[method](re.findall(pattern, text), n_merges)
        return cls(merges, special_tokens, pattern)

    # --- encoding -----------------------------------------------------------------------------
    def _bpe(self, piece: str) -> list[int]:
        """Merge the bytes of one pre-token, always fusing the pair that was learned first.

        Replaying the merges in training order gives the same result; this loop only visits
        the merges that apply. Cost: O(len x merges applied), so a 100 KB run of letters with
        no space takes seconds; cap the input upstream if it can be adversarial.
        """
        ids = list(piece.encode("utf-8"))  # start from the raw bytes
        get = self.ranks.get
        while len(ids) >= 2:
            # find the adjacent pair learned earliest (lowest new id); unknown pairs don't count
            best, best_id = None, None
            for pair in zip(ids, ids[1:]):
                new_id = get(pair)
                if new_id is not None and (best_id is None or new_id < best_id):
                    best, best_id = pair, new_id
            if best is None:
                break  # no adjacent pair was ever merged: done
            ids = merge(ids, best, best_id)  # fuse it everywhere in this pre-token
        return ids

    def _pieces(self, text: str) -> list[list[int]]:
        """Split `text` into pre-tokens and look each one up in the cache (a miss runs _bpe)."""
        if not isinstance(text, str):
            raise TypeError(f"encode takes a str, got {type(text).__name__}")
        try:
            return list(map(self._cache.__getitem__, self._split(text)))
        except UnicodeEncodeError as e:
            bad = e.object[e.start]
            raise ValueError(f"text holds a lone surrogate {bad!r} at index {text.index(bad)}; "
                             "only valid Unicode can be encoded") from None

    def encode(self, text: str) -> list[int]:
        """Ordinary text -> ids. Never emits a special id, even for text that spells one."""
        return list(chain.from_iterable(self._pieces(text)))

    def token_count(self, text: str) -> int:
        """len(encode(text)), without concatenating the ids."""
        return sum(map(len, self._pieces(text)))

    def encode_special(self, token: str) -> list[int]:
        """The one way in for a special token: encode_special("<|eos|>") -> [its id]."""
        if token not in self.special_ids:
            raise ValueError(f"unknown special token {token!r}; known: {self.special_tokens}")
        return [self.special_ids[token]]

    # --- decoding -----------------------------------------------------------------------------
    def decode_bytes(self, ids: list[int]) -> bytes:
        """Ids -> the raw bytes they stand for (special ids render as their strings)."""
        n = len(self.vocab)
        out = []
        for i in ids:
            i = operator.index(i)  # ints and NumPy integers; a float or str is a TypeError
            if not 0 <= i < n:
                raise ValueError(f"unknown token id {i}: this tokenizer has ids 0..{n - 1}")
            out.append(self.vocab[i])
        return b"".join(out)

    def decode(self, ids: list[int]) -> str:
        """Ids -> text. Ids that cut a character in half (never those of `encode`) give U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # --- identity and files -------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return (f"BPETokenizer(vocab={len(self)}, merges={len(self.merges)}, "
                f"special={len(self.special_tokens)}, fingerprint={self.fingerprint[:12]})")

    def mergeable_ranks(self) -> dict[bytes, int]:
        """bytes -> id for the byte and merge tokens: what `tiktoken.Encoding` takes as ranks."""
        return {b: i for i, b in enumerate(self.vocab[:256 + len(self.merges)])}

    def _contents(self) -> dict:
        return {"pattern": self.pattern, "merges": [list(p) for p in self.merges],
                "special_tokens": self.special_tokens}

    @property
    def fingerprint(self) -> str:
        """sha256 of pattern + merges + special tokens: equal fingerprints, equal tokenizers."""
        blob = json.dumps(self._contents(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def save(self, path: str | os.PathLike) -> None:
        """Write versioned JSON atomically: a temp file in the same folder, then os.replace."""
        path = Path(path)
        doc = {"format": "minitokenizer.bpe", "version": FORMAT_VERSION, **self._contents(),
               "sha256": self.fingerprint}
        atomic_write(path, lambda f: json.dump(doc, f, ensure_ascii=False), mode="w")

    @classmethod
    def load(cls, path: str | os.PathLike) -> BPETokenizer:
        """Read a `save`d file; any damage raises one TokenizerFileError naming the file."""
        path = Path(path)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("format") != "minitokenizer.bpe" or doc.get("version") != FORMAT_VERSION:
                raise ValueError(f"format {doc.get('format')!r} version {doc.get('version')!r}, "
                                 f"expected 'minitokenizer.bpe' version {FORMAT_VERSION}")
            tok = cls(doc["merges"], doc["special_tokens"], doc["pattern"])
            if tok.fingerprint != doc["sha256"]:
                raise ValueError("checksum mismatch: the contents were edited or damaged")
        except (OSError, ValueError, KeyError, TypeError, AttributeError, re.error) as e:
            raise TokenizerFileError(f"{path}: not a usable tokenizer file ({e})") from None
        return tok
