"""The choice skill and its adapter (training/choice_data.py, training/adapter_train.py; the
bold-form choices: test_bold_choices.py): the differing words of hand-built corrections, the
label rule (the right side, as the correction kind labels it), "none" twins, the shared eval
filter, the fact split (held-out examples of both sources ask held-out lines only), batches
whose replayed rows carry the base's own distributions, and training that moves only the
adapter (or, at rank 0, every weight), the same seed giving the same adapter."""

from dataclasses import replace

import numpy as np
import pytest

from minirag.chunk import Chunk
from minirag.eval.reading import examples_exact_match
from minirag.files.artifacts import load_tokenizer
from minirag.prompt import IDK_TEXT
from minirag.reader import READER_PATH, Reader, Reading
from minirag.reader_inputs import windows
from minirag.training.adapter_train import (
    TASK,
    AdapterConfig,
    adapter_data,
    batches,
    train_adapter,
)
from minirag.training.bold_choices import bold_facts
from minirag.training.choice_data import (
    NONE_SHARE,
    choice_examples,
    choice_question,
    differing_words,
    negated_corrections,
    split_facts,
)
from minirag.training.eval_filter import eval_filter
from minirag.training.facts import Fact
from minirag.training.questions import is_probe
from minirag.training.reader_data import Example
from minirag.training.reader_train import reader_world

SMALL = AdapterConfig(steps=4, batch_size=8, n_skill=40, n_replay=24, replay=0.5)


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


@pytest.fixture(scope="module")
def world(tok):
    return reader_world(tokenizer=tok)


@pytest.fixture(scope="module")
def base(tok):
    if not READER_PATH.is_file():
        pytest.skip("no shipped reader")
    return Reader.load().model


@pytest.fixture(scope="module")
def data(base, tok, world):
    return adapter_data(SMALL, base, tok, world, n_held_out=20)


@pytest.mark.parametrize("wrong, right, expected", [
    ("I have went", "I have gone", ("went", "gone")),
    ("She don't like tea", "She doesn't like tea", ("don't", "doesn't")),
    ("few", "a few", ("", "a")),  # only adds a word: no clean choice
    ("He go home.", "He goes home.", ("go", "goes")),  # punctuation trimmed
    ("more better", "better", ("more", "")),
])
def test_differing_words_of_hand_built_corrections(wrong, right, expected):
    assert differing_words(wrong, right) == expected


def test_negated_corrections_read_the_right_form_before_the_struck_one():
    text = ("# Adjectives\n## Order\nNo commas here: *a **big old** house* (not ~~a big, old "
            "house~~).\n- Mid position: *I always walk*, not ~~Always I walk~~. And *fine*.\n"
            "- ~~I have went~~ → I have gone\n")
    chunk = Chunk("c" * 12, text, "adj.md", 0, {"section": "Order"})
    got = [(f.kind, f.key, f.answer) for f in negated_corrections([chunk])]
    assert got == [("correction", "a big, old house", "a big old house"),
                   ("correction", "Always I walk", "I always walk")]  # the arrow kind: facts.py
    assert all("~~" in f.line and "*" not in f.line for f in negated_corrections([chunk]))


def test_a_choice_question_offers_both_sides_and_skips_additions():
    f = Fact("correction", "I have went", "correction", "I have gone", "", None)
    pairs = [choice_question(f, np.random.default_rng(s)) for s in range(40)]
    assert all(p is not None for p in pairs)
    asked = [q for q, _ in pairs]
    assert {a for _, a in pairs} == {"gone", "I have gone"}  # the differing words or the side
    assert not [q for q, a in pairs if a == "gone" and ("have went" in q or "have gone" in q)]
    both = [q for q in asked if "went" in q and "gone" in q]  # typos aside (questions.noisy)
    assert len(both) >= 0.8 * len(asked)
    whole = [q for q in both if "have went" in q and "have gone" in q]  # whole sides too
    assert 0 < len(whole) < len(both)
    assert {q.index("went") < q.index("gone") for q in both} == {True, False}  # either order
    added = Fact("correction", "few", "correction", "a few", "", None)
    assert choice_question(added, np.random.default_rng(0)) is None
    with pytest.raises(ValueError, match="clean choice"):  # never an endless draw
        choice_examples([added], [], None, None, 5, np.random.default_rng(0))


def test_choice_examples_answer_from_the_right_side_or_abstain(world, tok):
    facts = world.facts["correction"]
    ex = choice_examples(facts, world.pool, world.bm25, tok, 200, np.random.default_rng(3))
    rights = {f.answer for f in facts} | {differing_words(f.key, f.answer)[1] for f in facts}
    none = [e for e in ex if e.answer is None]
    assert abs(len(none) / len(ex) - NONE_SHARE) < 0.1
    for e in ex:
        assert not eval_filter().too_close(e.question) and not is_probe(e.question)
        if e.answer is None:
            assert e.start == e.end == len(e.ids) - 1  # the <|a|> position
            continue
        assert e.answer in rights and e.kind == "choice"
        lo, hi = next(w for w in windows(e.ids, tok) if w[0] <= e.start < w[1])
        assert e.end < hi and tok.decode(e.ids[e.start:e.end + 1]).strip() == e.answer


def test_split_facts_is_disjoint_deterministic_and_sized(world):
    facts = world.facts["correction"]
    train, held = split_facts(facts, 0.2, seed=0)
    assert len(held) == round(0.2 * len(facts)) and len(train) + len(held) == len(facts)
    assert not {id(f) for f in train} & {id(f) for f in held}
    assert split_facts(facts, 0.2, seed=0) == (train, held)
    assert split_facts(facts, 0.2, seed=1) != (train, held)


def test_held_out_examples_ask_only_held_out_lines(data, world):
    corrections = world.facts["correction"] + negated_corrections(world.pool)
    _, held = split_facts(corrections, SMALL.held_out, SMALL.seed)
    held_rights = {f.answer for f in held} | {differing_words(f.key, f.answer)[1] for f in held}
    _, held_bold = split_facts(bold_facts(world.pool)[0], SMALL.held_out, SMALL.seed)
    bold_lines = {f.line for f in held_bold}  # a bold answer is its form, or a phrase of its line
    answers = [e.answer for e in data.held_out if e.answer is not None]
    from_corrections = [a for a in answers if a in held_rights]
    from_bold = [a for a in answers if a not in held_rights]
    assert from_corrections and from_bold
    assert all(any(a in line for line in bold_lines) for a in from_bold)
    assert len(data.held_out) == 20 and len(data.skill) == SMALL.n_skill


def test_replayed_rows_carry_the_base_distributions_and_skill_rows_their_gold(data, tok, base):
    ids, targets, allowed, types, bias = batches(SMALL, data, tok)()
    n_rep = round(SMALL.replay * SMALL.batch_size)
    assert targets.shape == (SMALL.batch_size, 2, ids.shape[1]) == (len(bias), 2, bias.shape[1])
    assert np.allclose(targets.sum(axis=2), 1, atol=1e-5)
    skill = targets[:-n_rep]
    assert set(np.unique(skill)) <= {0.0, 1.0}  # one-hot: the gold span
    own = base.span_probs(ids[-n_rep:], allowed[-n_rep:], types[-n_rep:])
    assert np.allclose(targets[-n_rep:], own, atol=1e-5)
    # the margin: half of it on the null (the last allowed position) of each skill row with an
    # answer (its gold start is not the null), nothing on a "none" row or a replayed one
    null = allowed.shape[1] - 1 - np.argmax(allowed[:, ::-1], axis=1)  # [B] last allowed
    answered = skill[np.arange(len(skill)), 0, null[:len(skill)]] == 0
    expected = np.zeros_like(bias)
    expected[np.flatnonzero(answered), null[:len(skill)][answered]] = SMALL.null_margin / 2
    assert answered.any() and np.array_equal(bias, expected)


def test_training_moves_only_the_adapter_and_repeats_exactly(data, tok, base):
    before = {k: v.copy() for k, v in base.params.items()}
    model, lora, losses = train_adapter(SMALL, base, data, tok)
    assert all(np.array_equal(before[k], base.params[k]) for k in before)  # base frozen
    assert len(losses) == SMALL.steps and np.isfinite(losses).all()
    assert all(np.abs(v).max() > 0 for k, v in lora.params.items() if k.endswith(".B"))
    changed = {k for k in base.params if not np.array_equal(model.params[k], base.params[k])}
    assert changed == set(lora.targets)
    _, again, _ = train_adapter(SMALL, base, data, tok)
    assert all(np.array_equal(lora.params[k], again.params[k]) for k in lora.params)
    assert lora.config.task == TASK  # saved with it: the reader routes by it


@pytest.mark.parametrize("bad", [dict(replay=1.0), dict(replay=0.5, n_replay=0), dict(rank=-1),
                                 dict(batch_size=0), dict(held_out=0.0), dict(n_skill=0),
                                 dict(bold_share=1.5), dict(null_margin=-1.0)])
def test_bad_configs_are_refused(bad):
    with pytest.raises(ValueError):
        AdapterConfig(**bad)


def test_rank_zero_is_full_fine_tuning(data, tok, base):
    model, lora, _ = train_adapter(replace(SMALL, rank=0, steps=2), base, data, tok)
    assert lora is None
    assert all(not np.array_equal(model.params[k], base.params[k]) for k in base.params
               if k.endswith("w_qkv"))


class FixedReader:
    """A reader that reads each prompt (its first token id) as a fixed answer, or abstains."""

    def __init__(self, answers):
        self.answers = answers

    def read_ids(self, ids):
        answer = self.answers[ids[0]]
        return Reading(answer or IDK_TEXT, answer, "[#1]" if answer else None, answer is None,
                       0.0, 0.0)


def test_examples_exact_match_scores_answers_and_abstentions():
    ex = lambda i, answer: Example([i], 0, 0, "q", answer, "choice")  # noqa: E731
    examples = [ex(0, "I have gone"), ex(1, "I have gone"), ex(2, None), ex(3, None),
                ex(4, "a few")]
    reader = FixedReader(["i have gone home", "gone", None, "went", "A few."])
    # right, too short, right abstention, a guess where none was asked, right (normalised)
    assert examples_exact_match(reader, examples) == pytest.approx(3 / 5)


def test_eval_leaves_out_an_adapter_made_for_another_reader(tmp_path, monkeypatch, capsys):
    """A reader rebuilt after its adapter: `minirag eval` warns and scores the rest."""
    import minirag.reader
    from minimodel.lora import LoRA
    from minimodel.mini_gpt import MiniGPTConfig
    from minimodel.span_reader import SpanReader
    from minirag.eval.harness import reader_rows
    from minirag.index.cache import IndexConfig, load_or_build_index
    from minirag.retrieve import Retriever

    other = SpanReader(MiniGPTConfig(vocab_size=11, block_size=8, d_model=8, n_head=2))
    LoRA(other.params).save(tmp_path / "stale.npz", other.params)
    monkeypatch.setattr(minirag.reader, "ADAPTER_PATH", tmp_path / "stale.npz")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "verbs.md").write_text("# Verbs\n## Irregular\n| swim | swam | swum |\n")
    index = load_or_build_index(kb, IndexConfig(embedder="biencoder"), tmp_path / "cache")
    configs = {"hybrid(biencoder+bm25)": (Retriever(index.store, index.bm25), "hybrid")}
    q = {"id": "q", "question": "past of swim", "type": "literal", "topic": "verb-conjugation",
         "gold": [{"doc_id": "verbs.md", "section": "Irregular"}], "answer": "swam"}
    rows = reader_rows(configs, [q], tmp_path / "retrieval.jsonl")
    assert rows and {r["reader"] for r in rows} == {"shipped"}
    assert "adapter rows left out" in capsys.readouterr().err


def test_an_adapter_is_routed_by_the_task_saved_in_its_file(tmp_path, base):
    """The trained adapter names its task, the reader applies it to the questions of that
    task only; routed=False applies it everywhere; a task with no route is refused."""
    from minimodel.lora import LoRA, LoRAConfig
    from minirag.reader import ROUTES
    from minirag.reader_inputs import offers_choice

    assert ROUTES[TASK] is offers_choice
    for task in (TASK, "definition", None):
        LoRA(base.params, LoRAConfig(task=task)).save(tmp_path / f"{task}.npz", base.params)
    routed = Reader.load(adapter=tmp_path / f"{TASK}.npz")
    assert routed.skill.accepts is offers_choice
    assert all(np.array_equal(routed.model.params[k], v) for k, v in base.params.items())
    assert Reader.load(adapter=tmp_path / f"{TASK}.npz", routed=False).skill is None
    assert Reader.load(adapter=tmp_path / "None.npz").skill is None  # no task: every question
    with pytest.raises(ValueError, match="no route for its task 'definition'"):
        Reader.load(adapter=tmp_path / "definition.npz")
    assert Reader.load(adapter=tmp_path / "definition.npz", routed=False).skill is None
