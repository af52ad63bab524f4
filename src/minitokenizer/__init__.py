"""Byte-level BPE tokenizer, written from scratch (see theory/06-bpe-tokenizer.md)."""

from minitokenizer.bpe import (
    SPLIT_PATTERN,
    TIKTOKEN_PATTERN,
    BPETokenizer,
    TokenizerFileError,
)

__all__ = ["BPETokenizer", "SPLIT_PATTERN", "TIKTOKEN_PATTERN", "TokenizerFileError"]
