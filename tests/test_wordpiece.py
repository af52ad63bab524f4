"""wordpiece.py: BERT's basic tokenizer and WordPiece, first on cases checked by hand with a tiny
vocabulary (accents, punctuation, CJK, "##" pieces, longest match first, [UNK], truncation),
then the oracle: the ids of HF `tokenizers` (the teacher's own tokenizer.json) on every line
and every whole file of the KB, and on random text (hypothesis)."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitokenizer.wordpiece import (
    MAX_WORD_CHARS,
    WordPiece,
    WordPieceError,
    normalize,
    pre_tokenize,
)

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PIECES = ["cafe", "un", "##want", "##ed", "want", "!", "?", ",", "'", "t", "don", "stop",
          "a", "ab", "##a", "##c", "##bc", "日", "本"]
VOCAB = {p: i for i, p in enumerate(SPECIAL + PIECES)}  # [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3


@pytest.fixture
def wp():
    return WordPiece(VOCAB)


def test_normalize_cleans_strips_accents_and_lowercases():
    assert normalize("Café") == "cafe"
    assert normalize("Ça\u00a0va?\x07") == "ca va?"  # no-break space -> " ", BEL dropped
    assert normalize("naïve\tÅngström\r\n") == "naive angstrom  "
    assert normalize("日本") == " 日  本 "  # each CJK ideograph becomes a word of its own
    assert normalize("ΣΟΦΟΣ") == "σοφοσ"  # capital sigma is "σ" even at a word's end
    assert normalize("a\u200bb\x00c\ufffd") == "abc"  # format char, NUL and U+FFFD dropped
    assert normalize("Café", lowercase=False) == "Café"  # cased models keep both


def test_pre_tokenize_splits_on_space_and_punctuation():
    assert pre_tokenize("don't stop!") == ["don", "'", "t", "stop", "!"]
    assert pre_tokenize("$5+3=8^2") == ["$", "5", "+", "3", "=", "8", "^", "2"]  # ASCII symbols
    assert pre_tokenize("«hi»—ok…") == ["«", "hi", "»", "—", "ok", "…"]  # Unicode P*
    assert pre_tokenize("  a  b ") == ["a", "b"]
    assert pre_tokenize("x°y") == ["x°y"]  # "°" is a symbol (So), not punctuation


def test_word_pieces_longest_match_first(wp):
    assert wp.word_pieces("unwanted") == ["un", "##want", "##ed"]
    assert wp.word_pieces("want") == ["want"]  # the word itself is a piece
    # "abc": longest first takes "ab" then "##c", never "a" + "##bc"
    assert wp.word_pieces("abc") == ["ab", "##c"]
    assert wp.word_pieces("aaa") == ["a", "##a", "##a"]


def test_a_word_with_no_split_is_one_unk(wp):
    assert wp.word_pieces("unwantedz") == ["[UNK]"]  # not ["un", "##want", "##ed", "[UNK]"]
    assert wp.word_pieces("zebra") == ["[UNK]"]
    assert wp.word_pieces("a" * MAX_WORD_CHARS) == ["a"] + ["##a"] * (MAX_WORD_CHARS - 1)
    assert wp.word_pieces("a" * (MAX_WORD_CHARS + 1)) == ["[UNK]"]  # too long to try


def test_tokenize_and_encode(wp):
    assert wp.tokenize("Café, unwanted!") == ["cafe", ",", "un", "##want", "##ed", "!"]
    assert wp.tokenize("Don't STOP?") == ["don", "'", "t", "stop", "?"]
    assert wp.tokenize("a[SEP]ab") == ["a", "[SEP]", "ab"]  # a special in the text stays whole
    ids = wp.encode("Café unwanted!")
    assert ids == [VOCAB[p] for p in ["[CLS]", "cafe", "un", "##want", "##ed", "!", "[SEP]"]]
    assert wp.encode("") == [VOCAB["[CLS]"], VOCAB["[SEP]"]]


def test_truncation_keeps_cls_and_sep(wp):
    ids = wp.encode("cafe " * 50, max_len=5)
    assert ids == [VOCAB["[CLS]"]] + [VOCAB["cafe"]] * 3 + [VOCAB["[SEP]"]]
    assert len(wp.encode("cafe " * 50, max_len=256)) == 52
    with pytest.raises(ValueError, match="max_len"):
        wp.encode("cafe", max_len=1)


def test_vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(SPECIAL + PIECES) + "\n", encoding="utf-8")
    wp = WordPiece.from_vocab_file(path)
    assert wp.vocab == VOCAB and len(wp) == len(VOCAB)
    assert (wp.unk, wp.cls, wp.sep, wp.pad) == (1, 2, 3, 0)
    path.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(WordPieceError, match=r"vocab\.txt.*\[UNK\]"):
        WordPiece.from_vocab_file(path)


# ----------------------------------------------------- the oracle: HF tokenizers, the real vocab


@pytest.fixture(scope="module")
def pair():
    """(ours, the reference) on the teacher's vocabulary; skipped without the teacher."""
    from minimodel.teacher import TeacherMissing, teacher_dir
    try:
        folder = teacher_dir()
    except TeacherMissing as e:
        pytest.skip(str(e))
    tokenizers = pytest.importorskip("tokenizers", reason="the dev extra's oracle")
    ref = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    ref.no_padding()
    ref.no_truncation()
    return WordPiece.from_vocab_file(folder / "vocab.txt"), ref


def test_every_kb_line_and_file_tokenizes_as_the_reference(pair, repo):
    ours, ref = pair
    files = sorted((repo / "data" / "rag-kb").glob("*.md"))
    assert len(files) > 40
    texts = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        texts += [text] + [line for line in text.split("\n") if line.strip()]
    mismatches = [t for t in texts if ours.encode(t, max_len=10**9) != ref.encode(t).ids]
    assert mismatches == []
    assert len(texts) > 2000


def test_truncation_matches_the_reference(pair, repo):
    ours, ref = pair
    ref.enable_truncation(256)
    try:
        for f in sorted((repo / "data" / "rag-kb").glob("*.md"))[:10]:
            text = f.read_text(encoding="utf-8")
            assert ours.encode(text, max_len=256) == ref.encode(text).ids
            assert len(ref.encode(text).ids) == 256
    finally:
        ref.no_truncation()


def old_unicode(ch: str) -> bool:
    """A character of Unicode 3.2 whose category has not changed since. The reference's Rust
    category tables are older than Python's, so a newer character may be punctuation or a
    mark to one and not to the other; on all 232,504 of these the two agree."""
    old = unicodedata.ucd_3_2_0.category(ch)
    return old not in ("Cn", "Cs") and old == unicodedata.category(ch)


TEXT = st.lists(st.one_of(
    st.characters(max_codepoint=0x2FFFF).filter(old_unicode),
    st.sampled_from(["[SEP]", "[CLS]", "[MASK]", " ", "\n", "Σ", "İ", "the", "Café", "##",
                     "unaffable", "a" * 101]),
), max_size=40).map("".join)


@given(TEXT)
def test_random_text_tokenizes_as_the_reference(pair, text):
    ours, ref = pair
    assert ours.encode(text, max_len=10**9) == ref.encode(text).ids


def test_docstring_examples_run():
    assert normalize("Ça\u00a0va?\x07") == "ca va?"
    assert pre_tokenize("don't stop!") == ["don", "'", "t", "stop", "!"]
    wp = WordPiece(VOCAB)
    assert wp.tokenize("Café unwanted!") == ["cafe", "un", "##want", "##ed", "!"]
    assert wp.word_pieces("unwanted") == ["un", "##want", "##ed"]
    assert wp.encode("", 8) == [wp.cls, wp.sep] and len(wp.encode("cafe " * 1000, 8)) == 8
