"""Byte-level BPE tokenizer, written from scratch (see theory/06-bpe-tokenizer.md)."""
