"""The whole loop: rag_answer's Answer (timings, citations among the retrieved chunks, a prompt
within budget), the shipped pipeline answering and citing, a KB edit that changes the answer
with no retraining, and `minirag ask` as a subprocess (JSON shape, bad input)."""

import json
import shutil
import subprocess
import sys

import pytest
from fakes import tiny_span_reader

from minimodel.span_reader import SpanReader
from minirag import pipeline as pipeline_module
from minirag.cli import RULE_NOTES
from minirag.eval.reading import faithfulness_rows
from minirag.files.artifacts import load_tokenizer
from minirag.files.kb import DEFAULT_KB
from minirag.index.cache import IndexConfig, load_or_build_index
from minirag.pipeline import DEFAULT_EMBEDDER, RAGPipeline, load_reader, rag_answer
from minirag.prompt import IDK_TEXT
from minirag.reader import Reader
from minirag.retrieve import Retriever

SMALL = {"verbs.md": "# Verbs\n## Irregular\n| Base form | Past simple | Past participle |\n"
                     "|---|---|---|\n| swim | swam | swum |\n| go | went | gone |\n",
         "nouns.md": "# Nouns\n## Plurals\nOne mouse, two mice. One child, two children.\n"}


@pytest.fixture(scope="module")
def small_retriever(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    for name, text in SMALL.items():
        (root / name).write_text(text, encoding="utf-8")
    index = load_or_build_index(root, cache_dir=tmp_path_factory.mktemp("cache"))
    return Retriever(index.store, index.bm25)


@pytest.fixture(scope="module")
def pipeline():
    return RAGPipeline.from_defaults()


def test_rag_answer_keeps_every_intermediate_value(small_retriever):
    tok = load_tokenizer()
    reader = Reader(tiny_span_reader(len(tok), noise=0.5), tok, null_margin=0.0)
    a = rag_answer("past participle of swim", small_retriever, reader, k=2)
    assert set(a.timings) == {"retrieve", "prompt", "generate", "total"}
    parts = a.timings["retrieve"] + a.timings["prompt"] + a.timings["generate"]
    assert a.timings["total"] == pytest.approx(parts, abs=2e-3)  # the stages tile the total
    assert len(a.chunks) == 2 and len(a.prompt.token_ids) <= 64
    assert set(a.prompt.citations.values()) <= {c.id for c in a.chunks}
    assert a.abstained == (a.text == IDK_TEXT) == (a.citations == {})
    for marker, chunk in a.citations.items():
        assert a.prompt.citations[marker] == chunk.id and a.reading.answer in a.prompt.text


def test_a_bad_k_is_refused_not_replaced_by_the_default(small_retriever):
    tok = load_tokenizer()
    reader = Reader(tiny_span_reader(len(tok)), tok)
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        RAGPipeline(small_retriever, reader, k=0)
    pipe = RAGPipeline(small_retriever, reader, k=2)
    for k in (0, -1, 1.5):
        with pytest.raises(ValueError, match="k must be an integer >= 1"):
            pipe.ask("past of swim", k)
    assert len(pipe.ask("past of swim").chunks) == 2 and len(pipe.ask("go", 1).chunks) == 1


def test_every_verb_row_is_asked_once_per_form_and_the_oracle_always_shows_it(small_retriever):
    # the small KB's verbs (swim, go) are trained ones: no held-out rows, whose rate of no
    # questions would be NaN; 2 verbs x 2 forms = 4 questions in every row
    tok = load_tokenizer()
    reader = Reader(tiny_span_reader(len(tok), noise=0.5), tok, null_margin=0.0)
    rows = faithfulness_rows(reader, {"r": small_retriever}, small_retriever.store.chunks)
    assert [(r["context"], r["group"], r["retriever"], r["n"]) for r in rows] == [
        ("counterfactual", "all", None, 4), ("trained verbs", "oracle", None, 4),
        ("trained verbs", "retrieved", "r", 4)]
    assert rows[1]["answer_in_prompt"] == 1.0  # the asked row is in the prompt's one window


@pytest.mark.parametrize("question, answer, doc", [
    ("past participle of sing", "sung", "irregular-verbs-abc.md"),
    ("plural of mouse", "mice", "irregular-plurals.md"),
    ("superlative of little", "the least", "irregular-comparatives.md"),
])
def test_the_shipped_pipeline_answers_and_cites(pipeline, question, answer, doc):
    a = pipeline.ask(question)
    assert not a.abstained and a.reading.answer == answer, a.text
    (chunk,) = a.citations.values()
    assert chunk.doc_id == doc and answer in chunk.text


def test_the_shipped_pipeline_abstains_off_topic(pipeline):
    a = pipeline.ask("what does vivir mean in portuguese")
    assert a.abstained and a.text == IDK_TEXT


def test_the_shipped_pipeline_reads_a_choice_with_its_adapter_and_the_rest_with_the_base(
        pipeline):
    choice, plain = pipeline.ask("teached or taught?"), pipeline.ask("past participle of sing")
    assert choice.reading.by_skill and choice.reading.answer == "taught", choice.text
    assert not plain.reading.by_skill
    base = Reader(pipeline.reader.model, pipeline.reader.tokenizer)  # the same weights, no skill
    assert base.read(plain.prompt) == plain.reading  # bit for bit the base's reading
    alone = base.read(choice.prompt)  # the base's model would say "I don't know"; the row of
    assert alone.null_score + base.null_margin >= alone.span_score  # *teach* answers instead
    assert (alone.answer, alone.respells, alone.by_skill) == ("taught", "teached", False)


def test_a_stale_default_adapter_is_left_out_with_a_warning_and_any_other_is_refused(
        tmp_path, monkeypatch):
    """A reader rebuilt since the adapter was made: the pipeline still answers, and says how to
    rebuild the adapter; an adapter asked for by name must load."""
    from minimodel.checkpoint import CheckpointError
    from minimodel.lora import LoRA, LoRAConfig
    from minirag.reader import READER_PATH

    other = SpanReader(SpanReader.load(READER_PATH).config, seed=5).params
    LoRA(other, LoRAConfig(task="choice")).save(tmp_path / "stale.npz", other)
    with pytest.raises(CheckpointError, match="another base"):
        load_reader(tmp_path / "stale.npz")
    monkeypatch.setattr(pipeline_module, "DEFAULT_ADAPTER", tmp_path / "stale.npz")
    with pytest.warns(UserWarning, match="minirag train adapter"):
        reader = load_reader(tmp_path / "stale.npz")
    assert reader.skill is None
    with pytest.warns(UserWarning, match="no such checkpoint"):
        monkeypatch.setattr(pipeline_module, "DEFAULT_ADAPTER", tmp_path / "missing.npz")
        assert load_reader(tmp_path / "missing.npz").skill is None
    assert load_reader(None).skill is None


def test_editing_the_kb_changes_the_answer_without_retraining(tmp_path):
    """One row of the verb table rewritten in a copy of the KB: both forms follow the edit.
    (`minirag eval`'s counterfactual row measures the same on every verb row, oracle context;
    this is one case end to end, through retrieval, with no retraining.)"""
    kb = tmp_path / "kb"
    shutil.copytree(DEFAULT_KB, kb)
    abc = kb / "irregular-verbs-abc.md"
    text = abc.read_text(encoding="utf-8")
    assert "| sing | sang | sung |" in text
    abc.write_text(text.replace("| sing | sang | sung |", "| sing | sangh | sunged |"),
                   encoding="utf-8")
    index = load_or_build_index(kb, IndexConfig(embedder=DEFAULT_EMBEDDER),
                                cache_dir=tmp_path / "cache")  # the pipeline's retriever
    edited = RAGPipeline(Retriever(index.store, index.bm25), Reader.load())
    for question, answer in [("past participle of sing", "sunged"), ("past of sing", "sangh")]:
        a = edited.ask(question)
        assert a.reading.answer == answer, a.text
        assert next(iter(a.citations.values())).doc_id == "irregular-verbs-abc.md"


def ask(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "minirag", "ask", *args], capture_output=True,
                          text=True, input=stdin, timeout=300)


def test_minirag_ask_json_shape():
    r = ask("past participle of sing", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"question", "answer", "abstained", "citations", "prompt", "prompt_tokens", "chunks",
            "timings_ms"} <= set(out)
    assert {"retrieve", "prompt", "generate", "total"} <= set(out["timings_ms"])
    assert out["prompt_tokens"] <= 64 and len(out["chunks"]) == 3
    assert out["answer"].startswith("sung") and not out["abstained"]
    assert set(out["citations"][0]) == {"marker", "chunk_id", "doc_id", "section"}


# Each reading rule that can answer, through `minirag ask`: the question, the answer's start,
# the `--json` key that names why (cli.RULE_NOTES) and its value's end, and the note printed.
RULE_ANSWERS = [
    ("is 'i have went' correct?", "I have gone [#", "corrects", "I have went.",
     "~~I have went.~~"),
    ("what is a bare infinitive", "the base form without to", "defines", "bare infinitive",
     'definition of "bare infinitive"'),
    ("separable phrasal verbs, examples?", "put on [#", "listed", "separable verbs",
     'separable verbs:"'),  # the lead as the window shows it, cut at its start
    ("much or many with uncountable nouns", "much [#", "chosen_over", "many", 'over "many"'),
    ("her eyes were red because she ___ (cry) for hours", "had been crying [#", "fills", "cry",
     'verb group of "(cry)"'),
    ("base form of shrank", "shrink [#", "keyed_by", "shrank", 'the table row that says "shrank"'),
    ("it was the ___ (big) storm of the year", "biggest [#", "formed", "big",
     'the form of "(big)"'),
]


@pytest.mark.parametrize("question, answer, key, value, note", RULE_ANSWERS)
def test_minirag_ask_names_the_reading_rule_that_answered(question, answer, key, value, note):
    out = json.loads(ask(question, "--json").stdout)
    assert out["answer"].startswith(answer) and not out["abstained"] and out[key].endswith(value)
    assert note in ask(question).stdout


def test_minirag_ask_names_no_rule_where_the_model_answered():
    out = json.loads(ask("past participle of sing", "--json").stdout)
    keys = [note[0] for note in RULE_NOTES]
    assert {k: out[k] for k in keys} == dict.fromkeys(keys)


def test_minirag_ask_into_a_pipe_closed_early_is_no_error():
    """`minirag ask ... | head -1`: the reader of the pipe stops after one line."""
    p = subprocess.Popen([sys.executable, "-m", "minirag", "ask", "past of go"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # closed before a line is read: every write fails
    assert p.wait(timeout=300) == 0
    assert "Traceback" not in p.stderr.read().decode()


@pytest.mark.parametrize("args, match", [(["  "], "empty"), (["go", "-k", "0"], "-k")])
def test_minirag_ask_bad_input(args, match):
    r = ask(*args)
    assert r.returncode == 1 and match in r.stderr and r.stderr.count("\n") == 1


def test_minirag_ask_with_an_adapter_and_with_the_reranker(tmp_path):
    """A fresh adapter (B = 0) changes no answer; one with a task reads that task's questions;
    one with a task no route knows, or made for another base, is refused in one line; the
    shipped adapter reads by default and --no-adapter leaves it out; --rerank answers from the
    re-ranked list."""
    from minimodel.lora import LoRA, LoRAConfig
    from minirag.reader import READER_PATH

    base = SpanReader.load(READER_PATH).params
    LoRA(base).save(tmp_path / "zero.npz", base)
    plain = json.loads(ask("past participle of sing", "--json").stdout)
    adapted = json.loads(ask("past participle of sing", "--json", "--adapter",
                             str(tmp_path / "zero.npz")).stdout)
    assert adapted["answer"] == plain["answer"] and adapted["prompt"] == plain["prompt"]
    assert not plain["adapter_read"] and not adapted["adapter_read"]  # no task: not routed
    LoRA(base, LoRAConfig(task="choice")).save(tmp_path / "choice.npz", base)
    routed = json.loads(ask("sang or sung?", "--json", "--adapter",
                            str(tmp_path / "choice.npz")).stdout)
    assert routed["adapter_read"]  # the question offers a choice: the adapter reads it
    LoRA(base, LoRAConfig(task="poems")).save(tmp_path / "poems.npz", base)
    r = ask("past of go", "--adapter", str(tmp_path / "poems.npz"))
    assert r.returncode == 1 and "no route for its task 'poems'" in r.stderr
    other = SpanReader(SpanReader.load(READER_PATH).config, seed=5).params
    LoRA(other).save(tmp_path / "other.npz", other)
    r = ask("past of go", "--adapter", str(tmp_path / "other.npz"))
    assert r.returncode == 1 and "another base" in r.stderr and r.stderr.count("\n") == 1
    shipped = json.loads(ask("sang or sung?", "--json").stdout)
    assert shipped["adapter_read"]  # the pipeline's own adapter, by default
    assert not json.loads(ask("sang or sung?", "--json", "--no-adapter").stdout)["adapter_read"]
    reranked = json.loads(ask("past participle of sing", "--json", "--rerank").stdout)
    assert reranked["answer"].startswith("sung") and len(reranked["chunks"]) == 3
