"""reader_inputs.py: what the reader is given, on hand-built prompts: the table column of each
token, the question-match flags (exact words in training, the stems of missing words at
reading time) folded into token types, struck-out text, and where a word goes on across a
hyphen or an apostrophe; and the readings of a question (its kind, and read back from ids)."""

import pytest

from minirag.chunk import Chunk
from minirag.files.artifacts import load_tokenizer
from minirag.prompt import build_prompt
from minirag.reader_inputs import (
    N_COLUMNS,
    choice_sides,
    columns,
    content_stems,
    in_question,
    inside_word,
    offers_choice,
    question_of,
    struck_out,
    token_types,
)


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


def test_columns_number_the_cells_of_table_rows_only(tok):
    chunks = [Chunk("a" * 12, "| go | went | gone |\nGo a | b gone.", "t.md", 0,
                    {"section": "T"})]
    ids = build_prompt("past of go", chunks, tokenizer=tok).token_ids
    pairs = [(tok.decode([i]), c) for i, c in zip(ids, columns(ids, tok))]
    window = pairs[pairs.index(("<|#1|>", 0)) + 1:-1]
    assert window[:7] == [("|", 1), (" go", 1), (" |", 2), (" went", 2), (" |", 3),
                          (" gone", 3), (" |\n", 4)]  # a token's column: its first character's
    assert "".join(t for t, _ in window[7:]) == "Go a | b gone."
    assert all(c == 0 for _, c in window[7:])  # a bar inside a prose line makes no table
    assert all(c == 0 for (_, c) in pairs[:pairs.index(("<|#1|>", 0))])  # the question: 0
    assert max(columns(ids, tok, n_columns=3)) == 2  # capped


def test_in_question_marks_context_words_the_question_uses(tok):
    chunks = [Chunk("a" * 12, "| Sit | sat | sat |\nTo sit, sitting: of.", "t.md", 0,
                    {"section": "T"})]
    ids = build_prompt("past of sit", chunks, tokenizer=tok).token_ids
    flags = in_question(ids, tok)
    marked = "".join(tok.decode([i]) for i, f in zip(ids, flags) if f)
    assert marked.split() == ["Sit", "sit", "of"]  # whole words, any case; not "sitting"
    ctx = ids.index(tok.encode_special("<|ctx|>")[0])
    assert not any(flags[:ctx + 1])  # the question's own tokens are never marked
    assert in_question(tok.encode("past of sit"), tok) == [0, 0, 0]  # no context at all
    types = token_types(ids, tok)
    assert [t // N_COLUMNS for t in types] == flags
    assert [t % N_COLUMNS for t in types] == columns(ids, tok)


def test_at_reading_time_a_word_the_context_lacks_flags_its_stem(tok):
    chunks = [Chunk("a" * 12, "| buy | bought | bought |\n| stop | stopped | stopped |", "t.md",
                    0, {"section": "T"})]
    ids = build_prompt("i buyed it, stop?", chunks, tokenizer=tok).token_ids
    marked = lambda flags: "".join(tok.decode([i]) for i, f in zip(ids, flags) if f).split()  # noqa: E731
    assert marked(in_question(ids, tok)) == ["stop"]  # training's flags: exact words only
    # "buyed" is not in the context: its stem "buy" is; "stop" is, so "stopped" is not flagged
    assert marked(in_question(ids, tok, stems=True)) == ["buy", "stop"]
    assert [t // N_COLUMNS for t in token_types(ids, tok, stems=True)] == \
        in_question(ids, tok, stems=True)


@pytest.mark.parametrize("text, kept", [
    ("~~buyed~~ → bought", " → bought"),  # a wrong form, then its correction
    ("~~I have went.~~ → I have gone.", " → I have gone."),  # a struck sentence
    ("teached~~ → taught", " → taught"),  # the window was cut inside the struck text
    ("say *a big old house* (not ~~a big", "say *a big old house* (not"),  # ... or ends in it
    ("no mark, went", "no mark, went"),
    ("use me: ~~you and I~~", "use me:"),  # a struck phrase that ends the window
    ("me is correct; ~~", "me is correct;"),  # a window cut right after an opening mark
])
def test_struck_out_marks_the_wrong_forms_and_their_marks(tok, text, kept):
    pieces = [tok.vocab[t].decode("utf-8", errors="replace") for t in tok.encode(text)]
    shown = [p for p, gone in zip(pieces, struck_out(pieces), strict=True) if not gone]
    assert "".join(shown) == kept


@pytest.mark.parametrize("text, inside", [
    ("mothers-in-law", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]),  # hyphens between letters
    ("didn't see", [1, 2, 3, 4, 5, 8, 9]),  # an apostrophe between letters
    ("the -ing form", [1, 2, 6, 7, 10, 11, 12]),  # a hyphen after a space starts no word
    ("'word' x", [2, 3, 4]),  # quotes are not part of the word
    ("girls' bikes", [1, 2, 3, 4, 8, 9, 10, 11]),  # nor a possessive's last apostrophe
])
def test_inside_word_joins_letters_across_hyphens_and_apostrophes(text, inside):
    data = text.encode()
    assert [at for at in range(len(data) + 1) if inside_word(data, at)] == inside


@pytest.mark.parametrize("question, offered", [
    ("went or gone?", True), ("is it Went OR gone", True), ("much vs many", True),
    ("lie versus lay", True), ("dreamt / dreamed ??", True),
    ("past of go", False), ("study: he/she form", False),  # "/" inside a word offers none
    ("what does 'order' mean", False), ("or", False), ("either is fine", False),
])
def test_offers_choice_on_hand_built_questions(question, offered):
    assert offers_choice(question) is offered
    # a question that offers a choice has two sides; one that offers none is all one side
    assert bool(choice_sides(question)[1]) is offered


def test_question_of_reads_the_question_back_from_a_prompt(tok):
    table = [Chunk("b" * 12, "| go | went | gone |", "t.md", 0, {"section": "T"})]
    assert question_of(build_prompt("went or gone?", table, tokenizer=tok).token_ids,
                       tok) == "went or gone?"
    assert question_of(build_prompt("past of go", [], tokenizer=tok).token_ids, tok) == "past of go"


@pytest.mark.parametrize("text, stems", [
    ("Verbs ending in -c", {"verb", "end", "c"}),  # stopwords out, stems in
    ("The Doubling of the consonant", {"doubl", "consonant"}),
    ("someone's plans", {"someon", "plan"})])  # an apostrophe dropped (someones), stemmed
def test_content_stems(text, stems):
    assert content_stems(text) == stems
