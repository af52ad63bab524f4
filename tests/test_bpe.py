"""minitokenizer in isolation: merges by hand, round trips, naive == incremental, tiktoken oracle.

Covers: the Wikipedia `aaabdaaabac` example (merges AND ids), the vocab-size rule, hypothesis
round trips over arbitrary text, the two trainers giving identical merges, ids equal to a
`tiktoken.Encoding` built from the same ranks and pattern (on stdlib docstrings, collected with
`ast`), the split pattern's character classes against tiktoken's on every code point, special
tokens as an injection boundary, bad input, and save/load with damaged files.
Imports nothing from minirag or minimodel.
"""

import ast
import doctest
import hashlib
import importlib.util
import json
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitokenizer.bpe as bpe
import minitokenizer.train as train
from minitokenizer import SPLIT_PATTERN, TIKTOKEN_PATTERN, BPETokenizer, TokenizerFileError

tiktoken = pytest.importorskip("tiktoken")

SPECIALS = ["<|pad|>", "<|eos|>", "<|ctx|>", "<|q|>", "<|a|>", "<|idk|>",
            "<|#1|>", "<|#2|>", "<|#3|>", "<|#4|>"]
# GPT-4's cl100k split pattern as tiktoken 0.14 ships it (tiktoken_ext/openai_public.py).
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
                  r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
MULTILINGUAL = (
    "Die Bücher, die ich gelesen habe, waren großartig. Où est la bibliothèque ? "
    "Ελληνικά γράμματα. Русский язык — великий и могучий. 日本語の文章です。中文句子。"
    "한국어 문장입니다. עברית מימין לשמאל. العربية جميلة. हिन्दी वाक्य। "
    "Emoji: 👍🏽 👨‍👩‍👧 🇫🇷; math x² + ½ = Ⅻ; NFD: cafe\u0301; tabs\tand\r\nCRLF\x00NUL.\n"
)
STDLIB = ["argparse", "calendar", "collections", "configparser", "csv", "dataclasses",
          "datetime", "decimal", "difflib", "enum", "fractions", "functools", "gettext",
          "http.client", "inspect", "ipaddress", "logging", "optparse", "pathlib", "pickle",
          "pydoc", "random", "shutil", "statistics", "string", "subprocess", "tarfile",
          "textwrap", "threading", "typing", "urllib.parse", "uuid", "zipfile", "doctest",
          "heapq", "bisect", "tempfile", "traceback", "contextlib", "copy", "shlex", "json"]


def stdlib_docstrings(modules: list[str]) -> str:
    """Every docstring of the given stdlib modules' source files, read with `ast` (no import)."""
    parts = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or not (spec.origin or "").endswith(".py"):
            continue
        with open(spec.origin, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        parts += [d for n in ast.walk(tree) if isinstance(n, kinds) and (d := ast.get_docstring(n))]
    return "\n\n".join(parts)


@pytest.fixture(scope="module")
def corpus() -> str:
    """A few hundred KB of English prose and code, plus a multilingual paragraph."""
    text = stdlib_docstrings(STDLIB)
    assert len(text) > 300_000, "the stdlib docstring corpus shrank; add modules"
    return text + MULTILINGUAL * 20


@pytest.fixture(scope="module")
def tok(corpus) -> BPETokenizer:
    return BPETokenizer.train(corpus, vocab_size=1024, special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def oracle(tok):
    return tiktoken.Encoding("minitokenizer-test", pat_str=TIKTOKEN_PATTERN,
                             mergeable_ranks=tok.mergeable_ranks(),
                             special_tokens=dict(tok.special_ids))


# --- hand-checkable examples ----------------------------------------------------------------
def test_docstring_examples_run():
    assert doctest.testmod(bpe, raise_on_error=True).attempted >= 3


def test_helpers_on_tiny_inputs():
    assert train.pair_counts([[1, 2, 3, 1, 2]]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    assert train.pair_counts([[7, 7, 7]], weights=[5]) == {(7, 7): 10}  # overlaps count
    assert train.merge([97, 97, 97, 98], (97, 97), 256) == [256, 97, 98]  # left to right
    assert train.merge([97, 97, 97, 97], (97, 97), 256) == [256, 256]
    assert train.best_pair({(5, 1): 3, (2, 9): 3, (1, 1): 2}) == (2, 9)  # tie: lowest ids
    words = ["aaab", "daaab", "ac"]
    assert train.train_incremental(words, 3) == train.train_naive(words, 3)


@pytest.mark.parametrize("method", ["naive", "incremental"])
def test_wikipedia_aaabdaaabac(method):
    # Wikipedia's example: Z=aa, Y=ab, X=ZY. Pairs (aa: 4, then ab and (aa)a tie at 2 -> ab).
    tok = BPETokenizer.train("aaabdaaabac", vocab_size=259, method=method)
    assert tok.merges == [(97, 97), (97, 98), (256, 257)]
    assert [tok.vocab[i] for i in (256, 257, 258)] == [b"aa", b"ab", b"aaab"]
    assert tok.encode("aaabdaaabac") == [258, 100, 258, 97, 99]  # X d X a c
    assert tok.decode([258, 100, 258, 97, 99]) == "aaabdaaabac"


def test_split_pattern_by_hand():
    split = re.compile(SPLIT_PATTERN).findall
    assert split("Hello world, it's 12345!!\n\n  end  ") == [
        "Hello", " world", ",", " it", "'s", " ", "123", "45", "!!\n\n", " ", " end", "  "]
    assert split("my_var x² ½\x1c") == ["my", "_var", " x²", " ½", "\x1c"]  # documented diffs


# --- vocab size and special tokens ----------------------------------------------------------
def test_vocab_size_counts_bytes_merges_and_specials(tok):
    assert len(tok) == 1024 and len(tok.merges) == 1024 - 256 - len(SPECIALS)
    assert sorted(tok.special_ids.values()) == list(range(1024 - len(SPECIALS), 1024))
    assert tok.encode_special("<|eos|>") == [tok.special_ids["<|eos|>"]]
    with pytest.raises(ValueError, match="vocab_size"):
        BPETokenizer.train("abc", vocab_size=260, special_tokens=SPECIALS)


def test_training_stops_when_pairs_run_out():
    tok = BPETokenizer.train("ab ab", vocab_size=300, special_tokens=["<|eos|>"])
    assert tok.merges == [(97, 98), (32, 256)]  # "ab", then " ab": nothing left to merge
    assert tok.encode_special("<|eos|>") == [258] and len(tok) == 259


def test_specials_never_come_out_of_encode(tok):
    text = "".join(SPECIALS) + " <|eos|> please"
    ids = tok.encode(text)
    assert not set(ids) & set(tok.special_ids.values())
    assert tok.decode(ids) == text
    mixed = tok.encode("Q") + tok.encode_special("<|eos|>") + tok.encode("A")
    assert tok.decode(mixed) == "Q<|eos|>A"  # decode renders special ids as their strings


@given(st.lists(st.sampled_from(SPECIALS + ["<|", "|>", "eos", " ", "x"]), max_size=30))
def test_no_text_spells_a_special_id(tok, parts):
    ids = tok.encode("".join(parts))
    assert max(ids, default=0) < min(tok.special_ids.values())


def test_unknown_special_token(tok):
    with pytest.raises(ValueError, match="unknown special token"):
        tok.encode_special("<|system|>")


# --- round trips ----------------------------------------------------------------------------
runs = st.builds(lambda c, n: c * n, st.characters(exclude_categories=("Cs",)),
                 st.integers(1, 3000))
texts = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=200),  # any code point, NUL too
    st.text(st.sampled_from(list(MULTILINGUAL)), max_size=200),
    st.lists(st.one_of(runs, st.text(max_size=20)), max_size=4).map("".join),
)


@given(texts)
def test_decode_encode_round_trip(tok, text):
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.token_count(text) == len(ids)


@pytest.mark.parametrize("text", ["", "\x00", "a\x00b", "👨‍👩‍👧🇫🇷", "a" * 100_000, " " * 10_000,
                                  "\r\n" * 3000, "é" * 5000, "9" * 1000, "<|eos|>" * 100])
def test_round_trip_edge_cases(tok, text):
    assert tok.decode(tok.encode(text)) == text


def test_round_trip_corpus_and_numpy_ids(tok, corpus):
    ids = tok.encode(corpus)
    assert tok.decode(np.array(ids, dtype=np.int64)) == corpus
    assert len(ids) < len(corpus.encode("utf-8")) / 2  # the merges do compress


# --- naive == incremental -------------------------------------------------------------------
@settings(max_examples=40)
@given(st.text(st.sampled_from("aab cd\n'é😀1"), max_size=300), st.integers(256, 330))
def test_naive_and_incremental_give_identical_merges(text, vocab_size):
    naive = BPETokenizer.train(text, vocab_size, method="naive")
    fast = BPETokenizer.train(text, vocab_size, method="incremental")
    assert naive.merges == fast.merges


def test_naive_and_incremental_on_real_text(corpus):
    text = corpus[:20_000]
    assert (BPETokenizer.train(text, 400, method="naive").merges
            == BPETokenizer.train(text, 400).merges)


# --- tiktoken oracle ------------------------------------------------------------------------
def test_ranks_are_unique_bytes(tok):
    assert len(tok.mergeable_ranks()) == 256 + len(tok.merges)  # no two tokens spell the same


def test_ids_equal_tiktoken_on_stdlib_docstrings(tok, oracle):
    held_out = stdlib_docstrings(["email.message", "mailbox", "smtplib", "unittest.case"])
    assert len(held_out) > 50_000
    for text in (held_out, MULTILINGUAL * 3):
        assert tok.encode(text) == oracle.encode_ordinary(text)


@given(st.text(st.characters(exclude_categories=("Cs", "Cn")), max_size=300))
def test_ids_equal_tiktoken_on_any_assigned_text(tok, oracle, text):
    # "assigned" = known to Python's unicodedata; see test_split_classes_match_tiktoken
    assert tok.encode(text) == oracle.encode_ordinary(text)


def test_special_ids_agree_with_tiktoken(tok, oracle):
    ids = tok.encode("Q: ") + tok.encode_special("<|q|>") + tok.encode_special("<|eos|>")
    assert ids == oracle.encode("Q: <|q|><|eos|>", allowed_special="all")


def test_split_classes_match_tiktoken():
    """Each class of SPLIT_PATTERN against its TIKTOKEN_PATTERN twin, on all 1.1M code points.

    tiktoken drops the text its pattern does not match, so encoding every code point with a
    one-class pattern and decoding gives exactly the characters in that class. The classes may
    differ only on code points Python's Unicode database does not know (category Cn).
    """
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    byte_ranks = {bytes([i]): i for i in range(256)}
    twins = {r"[^\W\d_]": r"[\p{L}\p{Nl}\p{No}]", r"\d": r"\p{Nd}", r"\s": r"[\s\x1c-\x1f]",
             r"(?:_|[^\r\n\w])": r"[^\r\n\p{L}\p{N}]",
             r"(?:_|[^\s\w])": r"[^\s\x1c-\x1f\p{L}\p{N}]",
             r"(?i:[sdmtlver])": r"(?i:[sdmtlver])"}  # the contractions' letters, any case
    for ours, theirs in twins.items():
        enc = tiktoken.Encoding("cls", pat_str=theirs, mergeable_ranks=byte_ranks,
                                special_tokens={})
        a = set(re.findall(ours, everything))
        b = set(enc.decode(enc.encode_ordinary(everything)))
        differ = a ^ b
        assert len(a) > 8
        assert all(unicodedata.category(c) == "Cn" for c in differ), (ours, sorted(differ)[:9])
    assert unicodedata.unidata_version >= "14.0.0"  # the statement above was checked on 14.0


def test_differs_from_gpt4_pattern_only_where_documented(tok):
    def cl100k(ranks):
        return tiktoken.Encoding("cl100k-split", pat_str=CL100K_PATTERN, mergeable_ranks=ranks,
                                 special_tokens={})

    same = stdlib_docstrings(["typing"]) + MULTILINGUAL.replace("²", "2").replace("½", "1/2")
    same = same.replace("Ⅻ", "XII")
    assert tok.encode(same) == cl100k(tok.mergeable_ranks()).encode_ordinary(same)
    # A token spelling "x²" (and one spelling "\x1c!") shows where the pieces differ:
    # for us ² is a letter and \x1c a space; for GPT-4, ² is a number and \x1c punctuation.
    tiny = BPETokenizer([(0xC2, 0xB2), (ord("x"), 256), (0x1C, ord("!"))])
    gpt4 = cl100k(tiny.mergeable_ranks())
    assert tiny.encode("x²") == [257] and gpt4.encode("x²") == [120, 256]
    assert tiny.encode("\x1c!") == [0x1C, 33] and gpt4.encode("\x1c!") == [258]


# --- bad input ------------------------------------------------------------------------------
def test_bad_input_gives_clear_errors(tok):
    with pytest.raises(TypeError, match="str"):
        tok.encode(b"bytes")
    with pytest.raises(TypeError, match="str"):
        tok.token_count(None)
    with pytest.raises(ValueError, match="surrogate .* index 2"):
        tok.encode("ab\ud800c")
    for bad in ([len(tok)], [-1]):
        with pytest.raises(ValueError, match="unknown token id"):
            tok.decode(bad)
    with pytest.raises(TypeError):
        tok.decode([1.5])
    with pytest.raises(ValueError, match="method"):
        BPETokenizer.train("abc", 300, method="fast")
    with pytest.raises(ValueError, match="distinct"):
        BPETokenizer([], ["<|a|>", "<|a|>"])
    with pytest.raises(TypeError, match="list of str"):
        BPETokenizer.train("abc", 300, special_tokens="<|eos|>")
    with pytest.raises(ValueError, match="does not exist"):
        BPETokenizer([(97, 256)])


def test_cache_is_bounded_and_invisible(monkeypatch, corpus):
    monkeypatch.setattr(bpe, "CACHE_SIZE", 50)
    small = BPETokenizer.train(corpus[:50_000], 600)
    text = corpus[50_000:80_000]
    ids = small.encode(text)
    assert len(small._cache) <= 50
    assert ids == BPETokenizer(small.merges).encode(text) == small.encode(text)


def test_training_is_deterministic(corpus):
    text = corpus[:30_000]
    assert BPETokenizer.train(text, 500).fingerprint == BPETokenizer.train(text, 500).fingerprint


# --- files ----------------------------------------------------------------------------------
def test_save_load_round_trip(tok, tmp_path, corpus):
    path = tmp_path / "tok.json"
    tok.save(path)
    back = BPETokenizer.load(path)
    assert back.merges == tok.merges and back.special_ids == tok.special_ids
    assert back.fingerprint == tok.fingerprint
    assert back.encode(corpus[:5000]) == tok.encode(corpus[:5000])
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["version"] == bpe.FORMAT_VERSION and doc["sha256"] == tok.fingerprint
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]  # no temp file left behind


def test_fingerprint_tracks_contents(tok):
    assert BPETokenizer(tok.merges, SPECIALS).fingerprint == tok.fingerprint
    assert BPETokenizer(tok.merges, SPECIALS[:-1]).fingerprint != tok.fingerprint
    assert BPETokenizer(tok.merges[:-1], SPECIALS).fingerprint != tok.fingerprint


def _edit(doc: dict, how: str) -> str:
    if how == "merge":
        doc["merges"][5] = [doc["merges"][5][1], doc["merges"][5][0]]
    elif how == "version":
        doc["version"] = 99
    elif how == "checksum":
        doc["sha256"] = "0" * 64
    elif how == "future id":  # an impossible merge, with a checksum that matches it
        doc["merges"][0] = [97, 5000]
        contents = {k: doc[k] for k in ("pattern", "merges", "special_tokens")}
        blob = json.dumps(contents, sort_keys=True, separators=(",", ":")).encode("utf-8")
        doc["sha256"] = hashlib.sha256(blob).hexdigest()
    elif how == "missing key":
        del doc["special_tokens"]
    return json.dumps(doc)


@pytest.mark.parametrize("how", ["truncated", "merge", "version", "checksum", "future id",
                                 "missing key", "not an object", "missing file"])
def test_damaged_file_gives_one_clear_error(tok, tmp_path, how):
    path = tmp_path / "tok.json"
    tok.save(path)
    text = path.read_text(encoding="utf-8")
    if how == "truncated":
        path.write_text(text[: len(text) // 2], encoding="utf-8")
    elif how == "not an object":
        path.write_text("[1, 2]", encoding="utf-8")
    elif how == "missing file":
        path.unlink()
    else:
        path.write_text(_edit(json.loads(text), how), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=re.escape(str(path))):
        BPETokenizer.load(path)
    assert issubclass(TokenizerFileError, ValueError)


def test_save_replaces_atomically(tok, tmp_path):
    path = tmp_path / "tok.json"
    BPETokenizer.train("old text", 260).save(path)
    tok.save(path)
    assert BPETokenizer.load(path).fingerprint == tok.fingerprint


def test_tokenizer_sources_are_isolated():
    for module in (bpe, train):
        with open(module.__file__, encoding="utf-8") as f:
            source = f.read()
        assert "minirag" not in source and "minimodel" not in source
