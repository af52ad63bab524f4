"""chunk.py in isolation (a tiny BPE trained here, no shipped artifact): exact slices that
re-assemble the document, every chunk within budget, sections never crossed, preferred cut
points, overlap, stable ids across processes, and the documented bad inputs."""

import re
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.chunk import Chunk, chunk_document, chunk_id, chunk_text, load_kb
from minirag.files.kb import KBError
from minitokenizer import BPETokenizer

CORPUS = textwrap.dedent("""\
    # Past simple
    We use the past simple for finished actions. I went home. She wrote a letter.
    ## Form
    Regular verbs add -ed: walked, played, stopped. Irregular verbs change: go, went, gone.
    ## Uses
    Finished actions at a stated time in the past: yesterday, last week, in 2010, ago.
    """) * 20


@pytest.fixture(scope="module")
def tok():
    return BPETokenizer.train(CORPUS, 300, [])


def reassemble(text: str, chunks: list[Chunk]) -> str:
    """Undo the overlap: each chunk contributes up to where the next one starts."""
    out = []
    for c, nxt in zip(chunks, [*chunks[1:], None]):
        end = nxt.metadata["char_start"] if nxt else c.metadata["char_end"]
        out.append(text[c.metadata["char_start"]:end])
    return "".join(out)


def doc(paragraphs_per_section: int, words: int) -> str:
    para = " ".join(f"word{i % 17} is here." for i in range(words))
    body = "\n\n".join([para] * paragraphs_per_section)
    return f"# Title\nIntro line.\n## First\n{body}\n## Second\n{body}\n"


# markdown-like text: headings, sentences, blank lines, tables, odd unicode and long runs
pieces = st.one_of(
    st.sampled_from(["## Heading\n", "## Other\n", "\n\n", "\n", ". ", "| a | b |\n", " "]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30),
    st.text(alphabet="ab ", min_size=50, max_size=400),
)


@given(st.lists(pieces, min_size=1, max_size=25), st.integers(4, 60), st.data())
def test_chunks_reassemble_the_exact_text_and_stay_within_budget(tok, parts, target, data):
    text = "".join(parts)
    overlap = data.draw(st.integers(0, target - 1))
    chunks = chunk_text(text, "doc.md", target, overlap, tok)
    if not text.strip():
        assert chunks == []
        return
    assert reassemble(text, chunks) == text
    starts = [c.metadata["char_start"] for c in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    for c in chunks:
        assert c.text == text[c.metadata["char_start"]:c.metadata["char_end"]]
        assert c.metadata["n_tokens"] == tok.token_count(c.text) <= int(target * 1.1)
        # a heading may open a chunk, never sit after its first non-blank character
        assert re.search(r"\S.*?\n## ", c.text, re.DOTALL) is None, "crossed a section"


def test_sections_are_respected_and_named(tok):
    chunks = chunk_text(doc(2, 30), "d.md", 40, 5, tok)
    assert {c.metadata["section"] for c in chunks} == {"", "First", "Second"}
    for c in chunks:
        if c.metadata["section"]:
            body = doc(2, 30).split(f"## {c.metadata['section']}\n")[1].split("## ")[0]
            assert c.text.strip() in f"## {c.metadata['section']}\n{body}"
        assert c.metadata["title"] == "Title"


def test_a_cut_checked_by_hand():
    """A byte-level tokenizer with no merges counts one token per byte, so every offset below
    can be read off the text: paragraphs at bytes [0, 14), [16, 30), [32, 44), blank lines
    between. With a 16-token budget (limit 17) the blank lines sit exactly on the target, so
    each chunk is one paragraph and its blank line; with 32, two paragraphs fit in one."""
    bytes_only = BPETokenizer.train("x", 256, [])
    text = "One two three.\n\nFour five six.\n\nSeven eight."

    def cuts(target):
        return [(c.metadata["char_start"], c.metadata["char_end"], c.offset,
                 c.metadata["n_tokens"]) for c in chunk_text(text, "p.md", target, 0, bytes_only)]

    assert cuts(16) == [(0, 16, 0, 16), (16, 32, 16, 16), (32, 44, 32, 12)]
    assert cuts(32) == [(0, 32, 0, 32), (32, 44, 32, 12)]
    assert cuts(44) == [(0, 44, 0, 44)]  # all of it fits


def test_prefers_a_paragraph_break_near_the_target(tok):
    # two 40-token paragraphs: with a 45-token target the cut lands on the blank line
    para = "Alpha beta gamma. " * 10
    n = tok.token_count(para.strip())
    text = f"{para.strip()}\n\n{para.strip()}\n\n{para.strip()}"
    chunks = chunk_text(text, "p.md", target_tokens=n + 3, overlap=0, tokenizer=tok)
    assert [c.text.strip() for c in chunks] == [para.strip()] * 3


def test_overlap_repeats_the_end_of_the_previous_chunk(tok):
    chunks = chunk_text(doc(1, 80), "d.md", 30, 10, tok)
    same_section = [(a, b) for a, b in zip(chunks, chunks[1:])
                    if a.metadata["section"] == b.metadata["section"]]
    assert same_section
    for a, b in same_section:
        assert b.metadata["char_start"] < a.metadata["char_end"]  # they share text
        shared = a.metadata["char_end"] - b.metadata["char_start"]
        assert 0 < tok.token_count(a.text[-shared:]) <= 12


def test_ids_are_sha256_of_doc_and_token_offset(tok):
    chunks = chunk_text(doc(1, 40), "d.md", 30, 5, tok)
    for c in chunks:
        assert c.id == chunk_id("d.md", c.offset)
        assert c.offset == tok.token_count(doc(1, 40)[:c.metadata["char_start"]])
    assert len({c.id for c in chunks}) == len(chunks)


def test_ids_are_identical_in_a_fresh_process(tok, tmp_path):
    tok.save(tmp_path / "tok.json")
    (tmp_path / "d.md").write_text(doc(1, 60), encoding="utf-8")
    code = ("import sys; from pathlib import Path; from minitokenizer import BPETokenizer;"
            "from minirag.chunk import chunk_document;"
            "t = BPETokenizer.load(Path(sys.argv[1]) / 'tok.json');"
            "print(' '.join(c.id for c in chunk_document(Path(sys.argv[1]) / 'd.md', 30, 5, t)))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, check=True).stdout.split()
    here = [c.id for c in chunk_document(tmp_path / "d.md", 30, 5, tok)]
    assert out == here and len(here) > 2


@pytest.mark.parametrize("target, overlap", [(10, 10), (10, 25), (0, 0), (-3, 0), (10, -1)])
def test_bad_sizes_raise(tok, target, overlap):
    with pytest.raises(ValueError, match="target_tokens|overlap"):
        chunk_text("some text", "d.md", target, overlap, tok)


def test_empty_whitespace_and_undecodable_files(tok, tmp_path):
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "blank.md").write_text(" \n\n\t\n", encoding="utf-8")
    assert chunk_document(tmp_path / "empty.md", tokenizer=tok) == []
    assert chunk_document(tmp_path / "blank.md", tokenizer=tok) == []
    (tmp_path / "bad.md").write_bytes(b"# Title\n## A\ncaf\xe9 latin-1\n")
    with pytest.raises(KBError, match=r"bad\.md.*UTF-8"):
        chunk_document(tmp_path / "bad.md", tokenizer=tok)


def test_load_kb_walks_the_tree_with_posix_doc_ids(tok, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# A\n## S\nOne two three.\n", encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("# B\n## T\nFour five.\n", encoding="utf-8")
    (tmp_path / "ignored.py").write_text("x = 1\n", encoding="utf-8")
    chunks = load_kb(tmp_path, 50, 5, tok)
    assert sorted({c.doc_id for c in chunks}) == ["a.md", "sub/b.txt"]
    with pytest.raises(KBError, match="not found"):
        load_kb(tmp_path / "missing", 50, 5, tok)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(KBError, match=r"notes: no \.md or \.txt file"):  # not a silent empty KB
        load_kb(tmp_path / "notes", 50, 5, tok)
