"""Token-bounded, markdown-aware chunking with stable ids.

What it is: split a document into chunks of at most ~`target_tokens` BPE tokens that never
cross a `## ` section, prefer to cut at a blank line, then at a sentence end, and overlap by
`overlap` tokens. What it leaves out: semantic chunking, nested headings (### stays inside its
section). Follows DESIGN §3 `minirag.chunk`; the trade-offs are in theory/02.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


def chunk_id(doc_id: str, offset: int) -> str:
    """Stable id of the chunk of `doc_id` that starts at token `offset`.

    Example: chunk_id("articles.md", 0) == hashlib.sha256(b"articles.md:0").hexdigest()[:12]
    """
    return hashlib.sha256(f"{doc_id}:{offset}".encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a document: an exact slice of its text."""

    id: str  # chunk_id(doc_id, offset): sha256 of "doc_id:offset", first 12 hex digits
    text: str  # doc_text[char_start:char_end], byte for byte
    doc_id: str  # path relative to the KB root, POSIX separators ("past-simple.md")
    offset: int  # token offset of the chunk's first token within the document
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # metadata keys: section (heading text), title (the # title), char_start, char_end, n_tokens
