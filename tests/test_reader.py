"""The reader's data and its reading: KB facts parsed from hand-built chunks, held-out verbs
scrubbed, nonce verbs, gold spans located in real prompts, no eval question and no held-out
verb in the training data, eval phrasings disjoint from training templates, and the pointer
invariant: whatever the weights, an answer is a span of one chunk's window, cited by it."""

import re
from dataclasses import replace

import numpy as np
import pytest
from fakes import make_chunk, tiny_span_reader
from hypothesis import given
from hypothesis import strategies as st

from minirag.chunk import Chunk, load_kb
from minirag.eval.metrics import normalise_answer
from minirag.eval.reading import score
from minirag.files.artifacts import load_tokenizer
from minirag.prompt import IDK_TEXT, STOPWORDS, build_prompt
from minirag.reader import (
    Reader,
    Skill,
    banned_forms,
    narrowed_cell,
    of_unseen_word,
    only_echoes,
)
from minirag.reader_inputs import (
    AUXILIARIES,
    columns,
    offers_choice,
    token_types,
    windows,
)
from minirag.training.eval_filter import eval_filter
from minirag.training.facts import (
    HELD_OUT_VERBS,
    Fact,
    base_forms,
    cloze_facts,
    gap_facts,
    held_out_forms,
    line_facts,
    scrub,
    table_facts,
)
from minirag.training.questions import EVAL_PHRASINGS, is_probe, normalise_question
from minirag.training.reader_data import answer_span, nonce_verb
from minirag.training.reader_train import ReaderConfig, to_batch, training_data

TABLE = ("| Base form | Past simple | Past participle |\n|---|---|---|\n"
         "| drink | drank | drunk |\n| learn | learnt / learned | learnt / learned |\n")
PROSE = ("Add -ing: *work → working, swim → swimming*.\n"
         "- ~~I have went~~ → *I have gone*.\nWe use the past simple for finished actions.\n")


def chunk(text, meta=None):
    return make_chunk(text, "t.md", **(meta or {}))


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="module")
def data():
    return training_data(replace(ReaderConfig(), n_train=1500, n_eval=50), log=lambda *a: None)


def test_table_facts_one_per_column_with_alternatives():
    facts = table_facts(chunk(TABLE))
    assert [(f.key, f.relation, f.answer) for f in facts] == [
        ("drink", "Past simple", "drank"), ("drink", "Past participle", "drunk"),
        ("learn", "Past simple", "learnt / learned"),
        ("learn", "Past participle", "learnt / learned")]
    assert {f.kind for f in facts} == {"verb"} and facts[0].raw == "| drink | drank | drunk |"
    # a chunk that starts inside a table knows its header from the chunk's metadata
    rows_only = chunk("| swim | swam | swum |\n", {"table_header": TABLE.splitlines()[0]})
    assert [(f.key, f.answer) for f in table_facts(rows_only)] == [("swim", "swam"),
                                                                  ("swim", "swum")]


def test_arrow_correction_and_cloze_facts():
    facts = line_facts(chunk(PROSE))
    assert ("work", "working") in {(f.key, f.answer) for f in facts if f.kind == "arrow"}
    assert [(f.key, f.answer) for f in facts if f.kind == "correction"] == [
        ("I have went", "I have gone")]
    row = "| Rule | Examples |\n|---|---|\n| Double it | stop → stopping, sit → sitting |\n"
    assert [(f.key, f.answer) for f in line_facts(chunk(row))] == [("stop", "stopping"),
                                                                  ("sit", "sitting")]
    cloze = cloze_facts(chunk("We use the past simple for finished actions.\n"), STOPWORDS)
    assert {f.answer for f in cloze} == {"use", "past", "simple", "finished", "actions"}
    assert all("___" in f.key and f.key.replace("___", f.answer) == f.line for f in cloze)


def test_gap_facts_use_a_form_in_a_sentence_and_hint_its_base():
    verbs = table_facts(chunk(TABLE))
    arrows = [Fact("arrow", "stop", "arrow", "stopping", "", chunk("")),
              Fact("arrow", "hisself", "arrow", "himself", "", chunk(""))]
    bases = base_forms(verbs, arrows)
    assert bases == {"drank": "drink", "drunk": "drink", "learnt": "learn", "learned": "learn",
                     "stopping": "stop"}  # "himself" adds no ending to "hisself"
    text = ("- Facts about people: He drank the milk after lunch.\n"
            "- Wrong participle: ~~She has drank it all.~~ → *She has drunk it all.*\n"
            "Add -ing: stop → stopping.\nWe were stopping for lunch.\n")
    gaps = [(f.key, f.answer) for f in gap_facts(chunk(text), bases)]
    # the label goes; a correction's line (a struck-through wrong form) is not used, nor is a
    # line with an arrow
    assert gaps == [("He ___ (drink) the milk after lunch.", "drank"),
                    ("We were ___ (stop) for lunch.", "stopping")]


def test_scrub_removes_every_line_with_a_held_out_form():
    forms = held_out_forms(table_facts(chunk(TABLE)))
    assert {"drink", "drank", "drunk"} <= forms
    assert scrub(TABLE + PROSE, forms).count("drink") == 0
    assert "| learn | learnt / learned |" in scrub(TABLE, forms)


@given(st.integers(0, 2**32 - 1))
def test_nonce_verbs_follow_a_kb_pattern(seed):
    base, past, part = nonce_verb(np.random.default_rng(seed))
    assert re.fullmatch(r"[a-z]+", base + past + part)
    assert past in (base, past) and (part in (base, past) or part != past)


def test_no_eval_question_and_no_held_out_verb_in_training_data(data, tok):
    train, held = data
    keys = {f.key for c in load_kb() for f in table_facts(c) if f.kind == "verb"}
    probes = {normalise_question(t.format(k=k)) for k in keys
              for ts in EVAL_PHRASINGS.values() for t in ts}  # the faithfulness probes
    asked = {normalise_question(e.question) for e in train + held}
    assert not probes & asked
    gate = eval_filter()
    assert [q for q in asked if gate.too_close(q)] == []  # nor near an eval question
    assert not [q for q in asked if is_probe(q)]  # nor a probe's phrasing with an invented verb
    assert any("'ve " in q or "'d " in q for q in asked)  # contracted() is in use
    forms = held_out_forms([f for c in load_kb() for f in table_facts(c)])
    assert len(forms) > 2 * len(HELD_OUT_VERBS)  # bases, pasts and participles
    for e in train:
        words = set(re.findall(r"[a-z']+", (tok.decode(e.ids) + " " + e.question).lower()))
        assert not words & forms, (words & forms, e.question)


def test_gold_spans_decode_to_the_answer(data, tok):
    train, _ = data
    answered = [e for e in train if e.answer is not None]
    assert len(answered) > len(train) // 2
    for e in answered:
        span = tok.decode(e.ids[e.start:e.end + 1]).strip()
        assert span == e.answer.split(" / ")[0], (span, e.answer)
    for e in train:
        if e.answer is None:
            assert e.start == e.end == len(e.ids) - 1  # the <|a|> position


def test_gold_span_of_a_table_fact_is_in_its_own_cell(tok):
    text = "Cut is the same in every form: cut.\n| cut | cut | cut |\n"
    p = build_prompt("participle of cut", [chunk(text)], tokenizer=tok)
    cells = [answer_span(p.token_ids, 0, "cut", tok, column)[0] for column in (0, 1, 2, 3)]
    assert len(set(cells)) == 4  # prose, then the key's cell, the past's, the participle's
    assert [columns(p.token_ids, tok)[i] for i in cells] == [0, 1, 2, 3]
    assert tok.decode(p.token_ids[:cells[0] + 1]).endswith("every form: cut")
    facts = table_facts(chunk(TABLE))
    assert [f.column for f in facts] == [2, 3, 2, 3]


def test_batches_allow_windows_and_the_null_position_only(data, tok):
    train, _ = data
    ids, spans, allowed, types = to_batch(train[:8], tok)
    assert types.shape == ids.shape and types.max() < 2 * ReaderConfig().n_columns
    for b, e in enumerate(train[:8]):
        assert types[b, :len(e.ids)].tolist() == token_types(e.ids, tok)
    assert ids.shape[0] == 8 and spans.shape == (8, 2)
    for b, e in enumerate(train[:8]):
        assert allowed[b, spans[b]].all()
        lo_hi = windows(e.ids, tok)
        expected = {i for lo, hi in lo_hi for i in range(lo, hi)} | {len(e.ids) - 1}
        assert set(np.flatnonzero(allowed[b])) == expected


@given(st.integers(0, 10_000), st.sampled_from(["past of drink", "plural of mouse", "xyz"]))
def test_any_weights_answer_from_a_window_and_cite_it(tok, seed, question):
    reader = Reader(tiny_span_reader(len(tok), seed, noise=0.5), tok, null_margin=0.0)
    chunks = [chunk(TABLE), Chunk("b" * 12, PROSE, "u.md", 0, {"section": "T"})]
    prompt = build_prompt(question, chunks, tokenizer=tok)
    r = reader.read(prompt)
    if r.abstained:
        assert r.text == IDK_TEXT and r.marker is None
    else:
        n = int(r.marker[2:-1]) - 1
        lo, hi = windows(prompt.token_ids, tok)[n]
        assert r.answer in tok.decode(prompt.token_ids[lo:hi])
        assert r.text == f"{r.answer} {r.marker}" and r.marker in prompt.citations
        # graded against its own answer, it was right exactly when the answer was shown (both
        # fail only for an answer of punctuation alone, which exact match never accepts)
        m = score(reader, question, chunks, r.answer)
        assert m["em"] == m["in_prompt"] == float(bool(normalise_answer(r.answer)))
    assert reader.read(build_prompt(question, [], tokenizer=tok)).abstained  # nothing to point at


@given(st.integers(0, 10_000))
def test_whatever_the_weights_a_struck_out_form_is_never_the_answer(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    prompt = build_prompt("buyed or bought?", [chunk("- ~~buyed~~, ~~catched~~ → bought")],
                          tokenizer=tok)
    r = reader.read(prompt)
    assert r.abstained or not ({"buyed", "catched"} & set(re.findall(r"[a-z]+", r.answer)))
    assert r.abstained or "~" not in r.answer


@given(st.integers(0, 10_000))
def test_whatever_the_weights_a_form_of_another_kind_is_never_the_answer(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    text = "Change -ie to y: lie → lying, die → dying. Regular: play → played."
    r = reader.read(build_prompt("past of lie", [chunk(text)], tokenizer=tok))
    assert r.abstained or not {"lying", "dying"} & set(re.findall(r"[a-z]+", r.answer))
    r = reader.read(build_prompt("-ing form of lie", [chunk(text)], tokenizer=tok))
    assert r.abstained or "played" not in r.answer


def test_banned_forms_on_hand_built_windows():
    rows = "| drink | drank | drunk |\nlie → lying"
    assert banned_forms(rows, "past of behold") == {"drink", "drank", "drunk", "lie", "lying"}
    assert banned_forms(rows, "past of lie") == {"drink", "drank", "drunk", "lying"}  # -ing
    assert banned_forms(rows, "past of drink") == {"lie", "lying"}
    # a gap asks about its cue alone: a word of the scenery that keys a row is no answer
    assert banned_forms(rows, "we ___ (drink) the tea to lie down") == {"lie", "lying"}
    assert banned_forms(rows, "is drinking bad for you") == set()  # no form named, no gap
    # with the rows' headers: the cells of another column, or of another kind of form
    fly = "| fly | flew | flown |"
    heads = {fly: "| Base form | Past simple | Past participle |"}
    assert banned_forms(fly, "past participle of fly", heads) == {"fly", "flew"}
    assert banned_forms(fly, "he/she form of fly", heads) == {"flew", "flown"}
    assert banned_forms(fly, "we ___ (fly) home, one person at a time", heads) == set()


def test_a_gap_after_have_asks_for_the_participle():
    row, verbs = "| go | went | gone |", "| Base form | Past simple | Past participle |"
    assert banned_forms(row, "she has ___ (go) home", {row: verbs}) == {"go", "went"}
    assert banned_forms(row, "we've never ___ (go) there", {row: verbs}) == {"go", "went"}
    assert banned_forms(row, "she ___ (go) home", {row: verbs}) == set()  # no form named
    assert banned_forms(row, "i have to ___ (go) now", {row: verbs}) == set()  # not a perfect


def test_an_answer_that_only_echoes_a_question_asking_no_form():
    assert only_echoes("descale", "how can i descale my kettle")
    assert only_echoes("Squinting modifier?", "explain a squinting modifier")  # case, marks aside
    assert not only_echoes("an adverb between", "explain a squinting modifier")  # new words
    # a form asked: the question's own word may be the answer
    assert not only_echoes("cut", "cut + have: which form?")
    assert not only_echoes("cut", "past of cut")
    assert not only_echoes("cut", "yesterday i ___ (cut) my hand")
    assert not only_echoes("cut", "cut or cutted?")
    # a verdict asked on the question's own words: the fix may be some of them
    assert not only_echoes("taller", "is 'more taller' correct")
    # a choice: an option may be the answer, not what both options share
    assert not only_echoes("on the train", "on the train or in the train")
    assert only_echoes("Train", "on the train or in the train")
    assert only_echoes("the river", "across the river vs over the river?")
    assert not only_echoes("a small red", "a red small car or a small red car")  # its order
    assert not only_echoes("went", "went / gone, which is the past of go?")


def test_a_form_of_a_word_no_window_writes():
    rows = "| drive | drove | driven |\n| mouse | mice |"
    assert of_unseen_word("past of strive", rows)
    assert of_unseen_word("what's the plural of moose for my essay", rows)  # every word asked
    assert not of_unseen_word("past of drive", rows)
    assert not of_unseen_word("plural of mice", rows)  # a form the windows write
    assert not of_unseen_word("past of driving", rows)  # by its stem
    assert not of_unseen_word("what does strive mean", rows)  # no form asked
    assert not of_unseen_word("the plural of something like a mouse", rows)  # a vague "of"
    assert not of_unseen_word("past of the moose", rows)  # "the": nothing looked up


@given(st.integers(0, 10_000))
def test_whatever_the_weights_a_form_of_an_unseen_word_is_no_answer(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    r = reader.read(build_prompt("past of strive", [chunk("| drive | drove | driven |")],
                                 tokenizer=tok))
    assert r.abstained


@given(st.integers(0, 10_000))
def test_whatever_the_weights_no_answer_only_repeats_a_plain_question(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    text = "Use since with a point in time: since monday."
    question = "why use since with monday"
    r = reader.read(build_prompt(question, [chunk(text)], tokenizer=tok))
    assert r.abstained or not only_echoes(r.answer, question)


def test_a_reading_says_which_forms_it_ruled_out(tok):
    reader = Reader(tiny_span_reader(len(tok), 0), tok)
    text = "Change -ie to y: lie → lying, die → dying. Regular: play → played."
    r = reader.read(build_prompt("past of lie", [chunk(text)], tokenizer=tok))
    # the -ing forms and the other words' entries in the window ("play" is not shown: no query
    # word in its line)
    assert r.ruled_out == ("die", "dying", "lying")
    assert reader.read(build_prompt("why lie", [chunk(text)], tokenizer=tok)).ruled_out == ()


@given(st.integers(0, 10_000))
def test_whatever_the_weights_a_form_is_not_answered_from_another_words_entry(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    rows = "| drink | drank | drunk |\n| sink | sank | sunk |"
    for question in ("past participle of behold", "we have ___ (behold) the view"):
        r = reader.read(build_prompt(question, [chunk(rows)], tokenizer=tok))
        others = {"drink", "drank", "drunk", "sink", "sank", "sunk"}
        assert r.abstained or not others & set(r.answer.split())
    # the asked word's own row stays answerable
    ids = build_prompt("past participle of sink", [chunk(rows)], tokenizer=tok).token_ids
    r = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9).read_ids(ids)
    assert r.abstained or not {"drank", "drunk"} & set(r.answer.split())


@given(st.integers(0, 10_000))
def test_whatever_the_weights_the_answer_stands_under_the_column_asked(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    table = ("| Base form | Past simple | Past participle |\n|---|---|---|\n"
             "| sing | sang | sung |\n| ring | rang | rung |")
    r = reader.read(build_prompt("past participle of sing", [chunk(table)], tokenizer=tok))
    assert r.abstained or not {"sing", "sang"} & set(r.answer.split())


def test_a_cell_the_question_singles_out_of_its_row():
    row = "| we | us | ourselves |"
    assert narrowed_cell(row, "Ourselves", ("us", "we"))
    assert not narrowed_cell(row, "ourselves", ())  # nothing ruled out: nothing singled out
    assert not narrowed_cell(row, "ours", ("us",))  # not a whole cell
    assert not narrowed_cell(row + "\n| they | them | themselves |", "ourselves", ("them",))
    assert not narrowed_cell("we → ourselves", "ourselves", ("we",))  # an arrow, not a row
    # an arrow inside a row's cell is no cell: its word is the one asked about, not an answer
    spelling = "| -ie: change ie to y | lie → lying, die → dying |"
    assert not narrowed_cell(spelling, "lie", ("dying", "lying"))


@given(st.integers(0, 10_000))
def test_whatever_the_weights_past_a_huge_margin_only_a_singled_out_cell_answers(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=1e9)  # never, but...
    table = ("| Base form | Past simple | Past participle |\n|---|---|---|\n"
             "| sing | sang | sung |\n| ring | rang | rung |")
    r = reader.read(build_prompt("past participle of sing", [chunk(table)], tokenizer=tok))
    assert r.abstained or r.answer == "sung"  # ...the cell the column rule leaves in its row


@given(st.integers(0, 10_000))
def test_whatever_the_weights_the_answer_to_a_choice_is_one_option(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    text = "A computer mouse can be mice or mouses"
    r = reader.read(build_prompt("mouses or mice?", [chunk(text)], tokenizer=tok))
    assert r.abstained or " or " not in f" {r.answer} "
    # a question that offers no choice may still take the whole phrase
    ids = build_prompt("plural of a computer mouse", [chunk(text)], tokenizer=tok).token_ids
    lo, hi = windows(ids, tok)[0]
    assert reader._cells(ids, lo, hi) == [(lo, hi)]
    assert len(reader._cells(ids, lo, hi, choice=True)) == 2


@pytest.mark.parametrize("text, pointed, gap, answer", [
    (" If we had not left earlier", " left", True, "had not left"),  # the verb group, "not" too
    (" By May she will have been working", " working", True, "will have been working"),
    (" She hasn't seen it", " seen", True, "hasn't seen"),  # "hasn't" is one word
    (" If we had not left earlier", " left", False, "left"),  # no gap: the span as pointed
    (" The plural is mice", "ice", False, "mice"),  # not "is mice"
    (" the mothers-in-law came", "other", False, "mothers-in-law"),  # part of a word: all of it
])
def test_a_span_is_widened_to_whole_words_and_a_gap_to_its_verb_group(tok, text, pointed, gap,
                                                                        answer):
    ids = tok.encode(text)
    i = [tok.vocab[t] for t in ids].index(pointed.encode())
    s, e = Reader(None, tok)._widen(ids, i, i, (0, len(ids)), gap)
    assert tok.decode(ids[s:e + 1]).strip() == answer


@given(st.integers(0, 10_000))
def test_whatever_the_weights_the_answer_to_a_gap_holds_its_auxiliaries(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    text = "we had not left early; they will have been waiting"
    r = reader.read(build_prompt("if we ___ (leave) early", [chunk(text)], tokenizer=tok))
    if r.abstained:
        return
    words = text.replace(";", "").split()
    first = words.index(r.answer.split()[0])  # the words are unique: where the answer starts
    assert first == 0 or words[first - 1] not in AUXILIARIES


@given(st.integers(0, 10_000))
def test_whatever_the_weights_an_answer_is_whole_words(tok, seed):
    reader = Reader(tiny_span_reader(len(tok), seed), tok, null_margin=-1e9)  # answer if it can
    text = "mother-in-law → mothers-in-law; I didn't know (studies)"
    r = reader.read(build_prompt("mother-in-law: its plural?", [chunk(text)], tokenizer=tok))
    words = set(re.findall(r"[\w'-]+", text))  # every whole word, hyphens and apostrophes in
    assert r.abstained or set(re.findall(r"[\w'-]+", r.answer)) <= words


def test_the_null_margin_is_the_line_between_answering_and_abstaining(tok):
    model = tiny_span_reader(len(tok), seed=3)
    prompt = build_prompt("past of drink", [chunk(TABLE)], tokenizer=tok)
    free = Reader(model, tok, null_margin=-1e9).read(prompt)  # any span beats the null
    assert not free.abstained
    gap = free.span_score - free.null_score  # how far the best span is ahead of the null
    just_under = Reader(model, tok, null_margin=gap - 1e-3).read(prompt)
    assert (just_under.text, just_under.span_score) == (free.text, free.span_score)
    assert Reader(model, tok, null_margin=gap + 1e-3).read(prompt).text == IDK_TEXT


def test_answer_in_prompt_means_in_one_window_as_exact_match_reads_it(tok):
    reader = Reader(tiny_span_reader(len(tok)), tok)
    table = [chunk(TABLE)]
    assert score(reader, "past of drink", table, "drank")["in_prompt"] == 1.0
    assert score(reader, "past of drink", table, "Drank")["in_prompt"] == 1.0  # normalised
    assert score(reader, "past of learn", table, "learned / lernt")["in_prompt"] == 1.0  # either
    assert score(reader, "past of drink", table, "flew")["in_prompt"] == 0.0
    assert score(reader, "past of drink", table, "dran")["in_prompt"] == 0.0  # whole words
    assert score(reader, "past of drink", [], "drank")["in_prompt"] == 0.0  # closed book
    assert score(reader, "past of drink", table, None)["in_prompt"] == 0.0  # unanswerable


# ------------------------------------------------------------ a skill's adapter, routed


def test_a_skill_reads_the_questions_it_accepts_and_the_base_the_rest(tok):
    base, other = tiny_span_reader(len(tok), seed=1), tiny_span_reader(len(tok), seed=2)
    routed = Reader(base, tok, null_margin=-1e9, skill=Skill(other, offers_choice))
    for question, model in (("drank or drunk?", other), ("past of drink", base)):
        prompt = build_prompt(question, [chunk(TABLE)], tokenizer=tok)
        alone = Reader(model, tok, null_margin=-1e9).read(prompt)
        assert routed.model_for(prompt.token_ids) is model
        assert routed.read(prompt) == replace(alone, by_skill=model is other)
