"""The knowledge base on disk: markdown documents, their `## ` sections, and the eval sets.

What it is: reading `data/rag-kb/*.md` into `Document`s whose sections tile the text exactly,
and reading the eval sets, `data/eval/{dev,test}/*.jsonl`, into question dicts. What it
leaves out: any markdown beyond `# Title` and `## Section` headings (`###` and tables stay
inside their section).
Follows DESIGN §4 (data).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]  # src/minirag/files/kb.py -> repo
DEFAULT_KB = REPO_ROOT / "data" / "rag-kb"
DEFAULT_EVAL = REPO_ROOT / "data" / "eval"
SPLITS = ("dev", "test")  # dev: read, tuned on, quoted; test: blind, aggregate figures only
KB_SUFFIXES = (".md", ".txt")

_HEADING = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)  # a level-2 heading line
_TITLE = re.compile(r"^# +(.+?)\s*$", re.MULTILINE)  # the level-1 title line


class KBError(ValueError):
    """A knowledge-base or eval file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Section:
    """A `## ` section: `text[char_start:char_end]` of its document, heading line included."""

    heading: str  # the heading text without "## ", or "" for the preamble before the first one
    char_start: int
    char_end: int


@dataclass(frozen=True)
class Document:
    doc_id: str  # path relative to the KB root, POSIX separators
    title: str  # the `# ` title, or the file stem when there is none
    text: str
    sections: tuple[Section, ...]  # tile text exactly: [0, s1), [s1, s2), ..., [sn, len(text))

    def section(self, heading: str) -> Section | None:
        return next((s for s in self.sections if s.heading == heading), None)

    def section_text(self, heading: str) -> str:
        s = self.section(heading)
        if s is None:
            raise KeyError(f"{self.doc_id} has no section {heading!r}")
        return self.text[s.char_start:s.char_end]


def split_sections(text: str) -> tuple[Section, ...]:
    """Cut `text` at every `## ` heading line; the pieces re-assemble `text` exactly.

    Example: split_sections("# T\\nhi\\n## A\\nx\\n") ->
        (Section("", 0, 7), Section("A", 7, 14))
    """
    starts = [m.start() for m in _HEADING.finditer(text)]
    headings = [m.group(1) for m in _HEADING.finditer(text)]
    bounds = [0, *starts, len(text)]
    names = ["", *headings]
    if starts and starts[0] == 0:  # no preamble: the text opens with a section
        bounds, names = bounds[1:], names[1:]
    return tuple(Section(n, a, b) for n, a, b in zip(names, bounds, bounds[1:]) if b > a or n)


def doc_id_for(path: Path, root: Path) -> str:
    """The id of a KB file: its path relative to the KB root, with POSIX separators."""
    return path.resolve().relative_to(root.resolve()).as_posix()


def parse_document(text: str, doc_id: str) -> Document:
    m = _TITLE.search(text)
    title = m.group(1) if m else Path(doc_id).stem
    return Document(doc_id=doc_id, title=title, text=text, sections=split_sections(text))


def read_document(path: Path, root: Path | None = None) -> Document:
    """Read one UTF-8 file; undecodable bytes raise KBError naming the file and the offset."""
    path = Path(path)
    root = Path(root) if root is not None else path.parent
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise KBError(f"{path}: not valid UTF-8 (bad byte at offset {e.start})") from None
    except OSError as e:
        raise KBError(f"{path}: cannot read ({e.strerror})") from None
    return parse_document(text, doc_id_for(path, root))


def kb_files(root: Path) -> list[Path]:
    """Every *.md / *.txt below `root`, sorted by doc id; a missing folder, or one with no
    such file (a KB that could only ever answer "I don't know"), raises KBError."""
    root = Path(root)
    if not root.is_dir():
        raise KBError(f"{root}: knowledge-base folder not found")
    files = sorted(p for p in root.rglob("*") if p.suffix in KB_SUFFIXES and p.is_file())
    if not files:
        raise KBError(f"{root}: no {' or '.join(sorted(KB_SUFFIXES))} file in this folder or "
                      f"below it: nothing to index")
    return files


def read_kb(root: Path = DEFAULT_KB) -> list[Document]:
    return [read_document(p, root) for p in kb_files(root)]


def load_questions(path: Path) -> list[dict]:
    """One JSON object per line (DESIGN §4); a malformed line raises KBError with its number."""
    path = Path(path)
    if not path.is_file():
        raise KBError(f"{path}: eval set not found")
    questions = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            raise KBError(f"{path}:{n}: not JSON ({e.msg})") from None
        missing = {"id", "question", "type", "topic", "gold", "answer"} - q.keys()
        if missing:
            raise KBError(f"{path}:{n}: missing keys {sorted(missing)}")
        questions.append(q)
    return questions


def eval_set(split: str, name: str = "retrieval", root: Path = DEFAULT_EVAL) -> Path:
    """The path of one eval set: `name` ("retrieval" or "unanswerable") of `split`."""
    if split not in SPLITS:
        raise KBError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    return Path(root) / split / f"{name}.jsonl"


def all_eval_questions(root: Path = DEFAULT_EVAL) -> list[dict]:
    """Every question of every split (dev and test, answerable and not), in file order."""
    return [q for split in SPLITS for path in sorted((Path(root) / split).glob("*.jsonl"))
            for q in load_questions(path)]
