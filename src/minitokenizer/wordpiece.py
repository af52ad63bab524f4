"""BERT's tokenizer: a basic tokenizer (clean, lowercase, strip accents, split on spaces and
punctuation), then WordPiece (greedy longest-match-first) against a fixed vocabulary.

What it is: the tokenizer a pretrained BERT model was trained with, so that our NumPy forward
pass (minimodel.bert) sees the ids it expects. Unlike our BPE (bpe.py) nothing is learned here:
the vocabulary comes from the model's vocab.txt, one piece per line, its line number its id.
What it leaves out: training a vocabulary, decoding, offsets, pairs of texts, the cased
(no-lowercase) variant's options beyond the `lowercase` flag. Character classes come from
Python's unicodedata, whose tables are newer than the reference's: a character added to
Unicode lately may be punctuation or an accent to one and not to the other (the two agree on
all of Unicode 3.2, and on every text of the KB).
Follows HuggingFace `tokenizers`' BertNormalizer + BertPreTokenizer + WordPiece (what
sentence-transformers runs; tests/test_wordpiece.py checks every KB file against it), itself
Google's BERT tokenization.py (Devlin et al., 2018) with one CJK range as the Rust code has it.

Example: WordPiece.from_vocab_file(p).tokenize("Café unwanted!") -> ["cafe", "un", "##want",
"##ed", "!"] (with a vocabulary that has those pieces)
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # matched in the raw text, as is
MAX_WORD_CHARS = 100  # a longer word is [UNK] without trying (BERT's max_input_chars_per_word)
# The CJK Unified Ideographs blocks: each such character becomes a word of its own (Chinese is
# written without spaces). subtle: 0x2B920, not BERT's 0x2B820, as HF tokenizers has it.
CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
       (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


class WordPieceError(ValueError):
    """A vocabulary file that cannot be used; the message names the file."""


def is_control(ch: str) -> bool:
    """Unicode's control, format, surrogate and private-use characters (Cc, Cf, Cs, Co), except
    tab and newlines, which are whitespace. subtle: not Cn, the unassigned code points: Google's
    BERT drops them too ("C*"), but HF tokenizers keeps them (they become [UNK])."""
    return ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co")


def is_punctuation(ch: str) -> bool:
    """ASCII's non-alphanumeric printables (so "$", "+", "^", "`" count) or Unicode's P*."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in CJK)


def normalize(text: str, lowercase: bool = True) -> str:
    """BertNormalizer: clean, space out CJK, strip accents and lowercase (uncased models).

    Example: normalize("Ça\\u00a0va?\\x07") -> "ca va?"
    """
    out = []
    for ch in text:
        # 1. clean: drop NUL, U+FFFD and control characters; every kind of space becomes " "
        if ch in "\x00\ufffd" or is_control(ch):
            continue
        if ch.isspace():
            out.append(" ")
        # 2. a CJK ideograph is a word of its own: put spaces round it
        elif is_cjk(ch):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    text = "".join(out)
    if lowercase:
        # 3. strip accents: decompose (NFD: "é" -> "e" + U+0301 combining acute) and drop the
        # non-spacing marks (category Mn). The uncased model's vocabulary has no accents.
        text = "".join(c for c in unicodedata.normalize("NFD", text)
                       if unicodedata.category(c) != "Mn")
        # 4. lowercase one character at a time. subtle: str.lower() on the whole text would
        # turn a final capital sigma into "ς"; the reference maps every "Σ" to "σ".
        text = "".join(c.lower() for c in text)
    return text


def pre_tokenize(text: str) -> list[str]:
    """BertPreTokenizer: split on whitespace (dropped), and make every punctuation character a
    word of its own. Example: pre_tokenize("don't stop!") -> ["don", "'", "t", "stop", "!"]"""
    words = []
    for chunk in text.split():
        word = ""  # the run of non-punctuation characters being collected
        for ch in chunk:
            if is_punctuation(ch):
                if word:
                    words.append(word)
                words.append(ch)
                word = ""
            else:
                word += ch
        if word:
            words.append(word)
    return words


class WordPiece:
    """A BERT vocabulary and the tokenizer that maps text onto it.

    `vocab` maps a piece to its id: a piece that starts a word ("want") and one that continues
    a word ("##ed") are different entries. `unk`, `cls`, `sep`, `pad` are the special ids.
    """

    def __init__(self, vocab: dict[str, int], lowercase: bool = True):
        missing = [s for s in ("[UNK]", "[CLS]", "[SEP]", "[PAD]") if s not in vocab]
        if missing:
            raise WordPieceError(f"the vocabulary has no {', '.join(missing)}")
        self.vocab = vocab  # piece -> id
        self.lowercase = lowercase  # uncased model: lowercase and strip accents first
        self.unk, self.cls = vocab["[UNK]"], vocab["[CLS]"]
        self.sep, self.pad = vocab["[SEP]"], vocab["[PAD]"]
        specials = [s for s in SPECIALS if s in vocab]
        self._special = re.compile("(" + "|".join(map(re.escape, specials)) + ")")

    @classmethod
    def from_vocab_file(cls, path: str | Path, lowercase: bool = True) -> WordPiece:
        """vocab.txt: one piece per line, the line's number (from 0) its id."""
        path = Path(path)
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError) as e:
            raise WordPieceError(f"{path}: cannot read the vocabulary ({e})") from None
        if lines and lines[-1] == "":
            lines.pop()  # the newline that ends the last line
        vocab = {}
        for i, piece in enumerate(lines):
            vocab.setdefault(piece.rstrip("\r"), i)  # a repeated piece keeps its first id
        try:
            return cls(vocab, lowercase)
        except WordPieceError as e:
            raise WordPieceError(f"{path}: {e}") from None

    def __len__(self) -> int:
        return len(self.vocab)

    def word_pieces(self, word: str) -> list[str]:
        """Greedy longest-match-first: from the start of the word, take the longest piece in
        the vocabulary, then go on from where it ended with "##" pieces. If at some position no
        piece matches, the whole word is [UNK] (not the pieces found so far).

        Example (vocab has "un", "##want", "##ed"): "unwanted" -> ["un", "##want", "##ed"]
        """
        if len(word) > MAX_WORD_CHARS:
            return ["[UNK]"]
        pieces = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:  # try the longest candidate first, shorten by one character
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            else:
                return ["[UNK]"]  # no piece, not even one character long, starts here
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """The pieces of `text` (no [CLS]/[SEP]). A special token written in the text ("[SEP]")
        is kept whole, as the reference does; everything between them is normalised."""
        pieces = []
        for i, part in enumerate(self._special.split(text)):
            if i % 2:  # the split's odd parts are the specials themselves
                pieces.append(part)
                continue
            for word in pre_tokenize(normalize(part, self.lowercase)):
                pieces += self.word_pieces(word)
        return pieces

    def encode(self, text: str, max_len: int = 256) -> list[int]:
        """[CLS] + the ids of `text` + [SEP], cut to `max_len` ids in all (the model's
        max_seq_length: all-MiniLM-L6-v2 reads 256; the rest of a longer text is dropped).

        Example: encode("", 8) -> [cls, sep]; a 1,000-word text gives exactly 8 ids.
        """
        if max_len < 2:
            raise ValueError(f"max_len ({max_len}) must be >= 2: room for [CLS] and [SEP]")
        ids = [self.vocab[p] for p in self.tokenize(text)]  # every piece is in the vocab
        return [self.cls] + ids[:max_len - 2] + [self.sep]
