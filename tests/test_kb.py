"""The knowledge base: structure, size, the facts a grammar audit corrected, and every irregular
verb form checked against lemminflect (an independent inflection library). The eval sets that
point into it are tests/test_eval_sets.py."""

import re
from collections import Counter

import pytest

from minirag.files.kb import DEFAULT_KB, kb_files, read_kb

DOCS = read_kb(DEFAULT_KB)
BY_ID = {d.doc_id: d for d in DOCS}

# The irregular-verb tables: `| Base form | Past simple | Past participle |`, alternatives
# separated by " / " ("learnt / learned").
VERB_HEADER = re.compile(r"^\|\s*Base form\s*\|\s*Past simple\s*\|\s*Past participle\s*\|",
                         re.IGNORECASE | re.MULTILINE)

# Forms the KB lists that lemminflect does not: standard variants it simply lacks.
ACCEPTED_VARIANTS = {
    # British past participles in -t, identical to the past simple lemminflect accepts
    ("learn", "VBN"): {"learnt"}, ("dream", "VBN"): {"dreamt"}, ("burn", "VBN"): {"burnt"},
    ("spell", "VBN"): {"spelt"}, ("spill", "VBN"): {"spilt"}, ("spoil", "VBN"): {"spoilt"},
    ("smell", "VBN"): {"smelt"}, ("lean", "VBN"): {"leant"}, ("leap", "VBN"): {"leapt"},
    ("kneel", "VBN"): {"knelt"},
    # British past participle of get (American: gotten)
    ("get", "VBN"): {"got"},
}


def normalise(s: str) -> str:
    return re.sub(r"\s+", " ", s.lower()).strip()


def verb_rows():
    """(doc_id, base, past forms, participle forms) for every row of every verb table."""
    rows = []
    for doc in DOCS:
        for m in VERB_HEADER.finditer(doc.text):
            table = doc.text[m.start():].split("\n\n", 1)[0].splitlines()[2:]  # skip header, rule
            for line in table:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) < 3:
                    continue
                forms = [[f.strip().lower() for f in c.split("/") if f.strip()] for c in cells[:3]]
                rows.append((doc.doc_id, forms[0][0], forms[1], forms[2]))
    return rows


def test_kb_has_45_to_60_files():
    assert 45 <= len(DOCS) <= 60, len(DOCS)


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.doc_id)
def test_every_file_has_a_title_sections_and_150_to_900_words(doc):
    assert doc.text.startswith("# "), f"{doc.doc_id}: must open with '# Title'"
    headings = [s.heading for s in doc.sections if s.heading]
    assert headings, f"{doc.doc_id}: no '## ' section"
    assert len(headings) == len(set(headings)), f"{doc.doc_id}: duplicate section headings"
    words = len(doc.text.split())
    assert 150 <= words <= 900, f"{doc.doc_id}: {words} words"


def test_every_file_is_valid_utf8():
    for path in kb_files(DEFAULT_KB):
        path.read_bytes().decode("utf-8")  # raises on a bad byte


def test_at_least_150_irregular_verbs_each_listed_once():
    bases = Counter(base for _, base, _, _ in verb_rows())
    assert len(bases) >= 150, len(bases)
    assert [b for b, n in bases.items() if n > 1] == []


def test_every_irregular_verb_form_is_accepted_by_lemminflect():
    lemminflect = pytest.importorskip("lemminflect")
    wrong = []
    for doc_id, base, pasts, participles in verb_rows():
        known = lemminflect.getAllInflections(base, upos="VERB")
        for tag, forms in (("VBD", pasts), ("VBN", participles)):
            ok = set(known.get(tag, ())) | ACCEPTED_VARIANTS.get((base, tag), set())
            wrong += [f"{doc_id}: {base} {tag} {f!r} (lemminflect: {sorted(ok)})"
                      for f in forms if f not in ok]
    assert wrong == []
