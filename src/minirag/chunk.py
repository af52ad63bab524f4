"""Token-bounded, markdown-aware chunking with stable ids.

What it is: split a document into chunks of at most ~`target_tokens` BPE tokens that never
cross a `## ` section, prefer to cut at a blank line, then at a sentence end, and overlap by
`overlap` tokens. What it leaves out: semantic chunking, nested headings (### stays inside its
section). Follows DESIGN §3 `minirag.chunk`; the trade-offs are in theory/02.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from minirag.files.kb import DEFAULT_KB, Section, kb_files, parse_document, read_document
from minirag.files.persist import StoreError


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


def search_text(chunk: Chunk) -> str:
    """What the indexes see of a chunk: "title | section", its table's header, then its text.

    The second chunk of a section does not repeat the section's heading, so without this
    header a query like "third conditional form" cannot reach it by its words (a "contextual
    chunk header"). The chunk's own `text` stays the exact slice the reader is shown.

    Example: a chunk of past-simple.md under "## Form" -> "Past simple | Form\nRegular verbs..."
    """
    m = chunk.metadata
    header = f"{m.get('title', '')} | {m.get('section', '')}\n{m.get('table_header', '')}"
    return f"{header.rstrip()}\n{chunk.text}"


def table_header(text: str, pos: int) -> str:
    """The header row of the markdown table that `pos` falls inside, below its first rows.

    A chunk that starts in the middle of a table is a list of rows whose columns mean nothing
    without the header ("| drink | drank | drunk |" -> which is the participle?).
    Example: table_header("| a | b |\n|---|---|\n| 1 | 2 |\n", 20) -> "| a | b |"
    """
    line_start = text.rfind("\n", 0, pos) + 1
    if not text.startswith("|", line_start) or line_start == 0:
        return ""
    first = line_start
    while first > 0:  # walk up while the previous line is a table row too
        prev = text.rfind("\n", 0, first - 1) + 1
        if not text.startswith("|", prev):
            break
        first = prev
    if first == line_start:
        return ""  # the chunk starts at the header itself
    return text[first:text.find("\n", first)].strip()


def _unit_starts(text: str, start: int, end: int) -> list[int]:
    """Where a chunk may start inside text[start:end]: the start, and every word start.

    A "unit" runs from one word start to the next, so it is a word plus its trailing
    whitespace; cutting between units never splits a word.
    """
    starts = [start]
    for p in range(start + 1, end):
        if text[p - 1].isspace() and not text[p].isspace():
            starts.append(p)
    return starts


def _cut_kind(text: str, p: int, section_end: int) -> int:
    """How good a cut at char p is: 2 = paragraph break, 1 = sentence or line end, 0 = word."""
    if p >= section_end:
        return 2
    gap_start = p
    while gap_start > 0 and text[gap_start - 1].isspace():
        gap_start -= 1
    gap = text[gap_start:p]  # the whitespace just before the cut
    if gap.count("\n") >= 2:
        return 2
    if "\n" in gap or (gap_start > 0 and text[gap_start - 1] in ".!?"):
        return 1
    return 0


def _split_long(text: str, start: int, end: int, limit: int, count) -> list[int]:
    """Char positions that cut one over-long word text[start:end] into <= limit-token pieces."""
    cuts, s = [], start
    while count(text[s:end]) > limit:
        lo, hi = s + 1, end  # the longest prefix text[s:e] with <= limit tokens, by bisection
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if count(text[s:mid]) <= limit else (lo, mid - 1)
        cuts.append(lo)
        s = lo
    return cuts


def _tokens_before(text: str, start: int, end: int, bounds: list[int], tokenizer) -> list[int]:
    """Approximate token counts of text[start:p] for every p in `bounds` (sorted), in one pass.

    The section is pre-split with the tokenizer's own regex and each piece is encoded once,
    so counts are exact at piece boundaries; a bound inside a piece (" word" starts with its
    space) counts only the pieces that end before it, off by at most one piece.
    """
    count, cum, total, b = tokenizer.token_count, [], 0, 0
    for m in re.finditer(tokenizer.pattern, text[start:end]):
        while b < len(bounds) and bounds[b] < start + m.end():
            cum.append(total)
            b += 1
        total += count(m.group())
    return cum + [total] * (len(bounds) - b)


def _section_cuts(text: str, start: int, end: int, target: int, overlap: int,
                  tokenizer) -> list[tuple[int, int]]:
    """(char_start, char_end) of the chunks of one section, in order, overlapping by ~overlap.

    Greedy: from the current start, find every cut point whose chunk stays within
    target * 1.1 tokens; among those within +-10% of the target prefer a paragraph break, then a
    sentence end (closest to the target); otherwise take the longest window that fits.
    """
    limit, count = int(target * 1.1), tokenizer.token_count
    points = _unit_starts(text, start, end)
    # subtle: a single word longer than the limit (a URL, "aaaa...") is cut inside the word
    points = sorted(set(points) | {c for a, b in zip(points, [*points[1:], end])
                                   for c in _split_long(text, a, b, limit, count)})
    bounds = [*points, end]  # cut candidates; index i <-> char position bounds[i]
    cum = _tokens_before(text, start, end, bounds, tokenizer)  # cum[i] ~ tokens before bounds[i]
    spans, i = [], 0
    while True:
        if cum[-1] - cum[i] <= limit and count(text[bounds[i]:end]) <= limit:
            spans.append((bounds[i], end))  # the rest of the section fits: done
            return spans
        fits = [j for j in range(i + 1, len(bounds)) if cum[j] - cum[i] <= limit]
        near = [j for j in fits if cum[j] - cum[i] >= 0.9 * target]
        best = max((_cut_kind(text, bounds[j], end), -abs(cum[j] - cum[i] - target), j)
                   for j in near) if near else None
        j = best[2] if best and best[0] > 0 else (fits[-1] if fits else i + 1)
        while j > i + 1 and count(text[bounds[i]:bounds[j]]) > limit:
            j -= 1  # the unit counts were approximate: shrink until the real count fits
        spans.append((bounds[i], bounds[j]))
        if bounds[j] == end:
            return spans
        # the next chunk starts `overlap` tokens before this one ends, but always moves forward
        k = j
        while k - 1 > i and cum[j] - cum[k - 1] <= overlap:
            k -= 1
        i = k


def chunk_text(text: str, doc_id: str, target_tokens: int = 150, overlap: int = 20,
               tokenizer=None) -> list[Chunk]:
    """Chunk one document's text; every chunk is an exact slice of `text`.

    Empty or whitespace-only text gives []. Otherwise the chunks, de-overlapped by their
    char offsets, re-assemble `text` exactly, and each has at most target_tokens * 1.1 tokens.

    Example: chunk_text("# T\\n## A\\nOne. Two.\\n", "t.md", target_tokens=50)
        -> [Chunk(text="# T\\n", ...section=""), Chunk(text="## A\\nOne. Two.\\n", ...section="A")]
    """
    if target_tokens < 1:
        raise ValueError(f"target_tokens ({target_tokens}) must be >= 1")
    if not 0 <= overlap < target_tokens:
        raise ValueError(f"overlap ({overlap}) must be >= 0 and < target_tokens ({target_tokens})")
    if not text.strip():
        return []
    if tokenizer is None:
        from minirag.files.artifacts import load_tokenizer
        tokenizer = load_tokenizer()
    count = tokenizer.token_count
    doc = parse_document(text, doc_id)
    sections = list(doc.sections)
    if len(sections) > 1 and not text[:sections[0].char_end].strip():
        # subtle: whitespace before the first heading joins that section's first chunk
        first = sections[1]
        sections[:2] = [Section(first.heading, 0, first.char_end)]
    chunks = []
    for sec in sections:
        for a, b in _section_cuts(text, sec.char_start, sec.char_end, target_tokens, overlap,
                                  tokenizer):
            offset = count(text[:a])  # tokens before the chunk: its token offset
            chunks.append(Chunk(
                id=chunk_id(doc_id, offset), text=text[a:b], doc_id=doc_id, offset=offset,
                metadata={"section": sec.heading, "title": doc.title, "char_start": a,
                          "char_end": b, "n_tokens": count(text[a:b]),
                          "table_header": table_header(text, a)},
            ))
    return chunks


def chunk_document(doc_path: Path, target_tokens: int = 150, overlap: int = 20,
                   tokenizer=None, root: Path | None = None) -> list[Chunk]:
    """Chunk one file; its doc id is its path relative to `root` (default: its folder).

    Undecodable bytes raise KBError naming the file; an empty file gives [].
    """
    doc = read_document(Path(doc_path), root)
    return chunk_text(doc.text, doc.doc_id, target_tokens, overlap, tokenizer)


def load_kb(root: Path = DEFAULT_KB, target_tokens: int = 150, overlap: int = 20,
            tokenizer=None) -> list[Chunk]:
    """Every chunk of every *.md / *.txt file below `root`, in doc-id order."""
    if tokenizer is None:
        from minirag.files.artifacts import load_tokenizer
        tokenizer = load_tokenizer()
    return [c for p in kb_files(root)
            for c in chunk_document(p, target_tokens, overlap, tokenizer, root)]


def write_chunks(path: Path, chunks: list[Chunk]) -> None:
    """Chunks as JSON lines, one object per chunk (a saved index's chunks.jsonl)."""
    Path(path).write_text("".join(json.dumps(asdict(c), ensure_ascii=False) + "\n"
                                  for c in chunks), encoding="utf-8")


def read_chunks(path: Path, count: int) -> list[Chunk]:
    """Read `count` chunks written by `write_chunks`; a bad line is a StoreError naming it."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if len(lines) != count:
        raise StoreError(f"{path}: {len(lines)} lines, manifest says {count}")
    chunks = []
    for i, line in enumerate(lines, 1):
        try:
            chunks.append(Chunk(**json.loads(line)))
        except (ValueError, TypeError) as e:
            raise StoreError(f"{path}:{i}: not a chunk record ({e})") from None
    return chunks
