"""Teaching the frozen reader a new skill: a LoRA adapter (or, to compare, full fine-tuning).

What it is: the skill's examples ("A or B?" from the KB's correction lines, choice_data.py,
and from its bold forms, bold_choices.py) mixed, batch by batch, with
replayed examples of the reader's own training mix, so that what the reader already does
stays in the gradient (without replay it stops abstaining: EXPERIMENTS.md). A replayed example's
target is the base reader's own start and end distributions (`SpanReader.span_probs`), not
its gold span: the adapter is asked to change nothing there, which holds the base's behaviour
more tightly than its labels do ("learning without forgetting", Li and Hoiem 2016).
The adapter is saved with its task, "choice", and the reader routes only the questions that
offer a choice to it (reader.ROUTES), so replay need only hold the base on those: a quarter
of each batch, where an adapter applied to every question needs most of it (theory/07 §10).
`build_adapter` is `make models`' builder: data/models/choice_adapter.npz and its MANIFEST
entry. What it leaves out: reading with an adapter (Reader.load(adapter=...)) and LoRA itself
(minimodel.lora).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from minimodel.lora import LoRA, LoRAConfig, adapted_model, train_lora
from minimodel.optim import AdamW, clip_grad_norm
from minimodel.span_reader import SpanReader, span_targets
from minirag.files.artifacts import kb_sha256, load_tokenizer
from minirag.files.kb import DEFAULT_KB
from minirag.reader import ADAPTER_PATH, READER_PATH
from minirag.training.bold_choices import bold_examples, bold_facts
from minirag.training.choice_data import choice_examples, negated_corrections, split_facts
from minirag.training.facts import Fact
from minirag.training.reader_data import Example
from minirag.training.reader_train import ReaderWorld, mixed_examples, reader_world, to_batch

TASK = "choice"  # saved in the adapter's file: the reader applies it to ROUTES["choice"] only


@dataclass(frozen=True)
class AdapterConfig:
    rank: int = 4  # LoRA rank; 0 = full fine-tuning of every weight (the comparison)
    alpha: float = 8.0  # LoRA scale s = alpha / rank
    targets: tuple[str, ...] = ("attn.w_qkv", "attn.w_o")  # adapted weights (minimodel.lora)
    steps: int = 800  # optimizer steps
    lr: float = 2e-3  # constant learning rate (AdamW)
    batch_size: int = 32  # examples per step
    replay: float = 0.25  # share of each batch drawn from the reader's own training mix
    n_skill: int = 4000  # skill examples generated
    bold_share: float = 0.5  # of the skill examples, those from bold forms (bold_choices.py)
    n_replay: int = 4000  # replayed examples generated
    held_out: float = 0.2  # share of the correction and bold facts kept out of training
    null_margin: float = 8.0  # a skill answer must beat the null by this much (`batches`)
    seed: int = 0  # seeds the data, the adapter's init and the batches

    def __post_init__(self):
        if self.rank < 0 or self.steps < 0 or self.batch_size < 1 or self.n_skill < 1:
            raise ValueError("rank and steps must be >= 0, batch_size and n_skill >= 1")
        if not 0.0 <= self.replay < 1.0 or (self.replay and self.n_replay < 1):
            raise ValueError(f"replay ({self.replay}) must be in [0, 1), with n_replay >= 1 "
                             f"when it is not 0")
        if not 0.0 < self.held_out < 1.0 or not 0.0 <= self.bold_share <= 1.0:
            raise ValueError(f"held_out ({self.held_out}) must be in (0, 1), bold_share "
                             f"({self.bold_share}) in [0, 1]")
        if self.null_margin < 0:
            raise ValueError(f"null_margin ({self.null_margin}) must be >= 0")


@dataclass
class AdapterData:
    skill: list[Example]  # "A or B?" examples from the training facts (corrections, bold)
    replay: list[Example]  # the reader's training mix
    replay_targets: np.ndarray  # [n_replay, 2, 64]: the base's span distributions
    held_out: list[Example]  # "A or B?" examples from the held-out facts, in the same shares


def adapter_data(cfg: AdapterConfig, base: SpanReader, tokenizer=None,
                 world: ReaderWorld | None = None, n_held_out: int = 300) -> AdapterData:
    """The skill's examples (training lines and, apart, `n_held_out` from held-out lines: the
    correction and bold facts each split by line; `bold_share` of each set from bold forms)
    and the replay set with the base's targets, all drawn from `world` (the KB's, built when
    None) with `cfg.seed`."""
    tokenizer = tokenizer or load_tokenizer()
    world = world or reader_world(DEFAULT_KB, tokenizer)
    corrections = world.facts["correction"] + negated_corrections(world.pool)
    bold, rivals = bold_facts(world.pool)
    (train_c, test_c), (train_b, test_b) = (split_facts(facts, cfg.held_out, cfg.seed)
                                            for facts in (corrections, bold))

    def skill(from_corrections: list[Fact], from_bold: list[Fact], n: int, i: int
              ) -> list[Example]:
        rng = np.random.default_rng([cfg.seed, i])
        n_bold = int(round(cfg.bold_share * n))
        return (choice_examples(from_corrections, world.pool, world.bm25, tokenizer, n - n_bold,
                                rng)
                + bold_examples(from_bold, rivals, world.pool, world.bm25, tokenizer, n_bold, rng))

    replay = mixed_examples(world, tokenizer, cfg.n_replay, [cfg.seed, 3]) if cfg.replay else []
    return AdapterData(skill(train_c, train_b, cfg.n_skill, 0), replay,
                       base_targets(base, replay, tokenizer),
                       skill(test_c, test_b, n_held_out, 1))


def base_targets(base: SpanReader, examples: list[Example], tokenizer, block: int = 64,
                 chunk: int = 256) -> np.ndarray:
    """[n, 2, block]: the base reader's start and end distributions on each example's prompt
    (zero beyond it), computed once: replay asks the adapted reader for the same."""
    out = np.zeros((len(examples), 2, block), dtype=np.float32)
    for i in range(0, len(examples), chunk):
        ids, _, allowed, types = to_batch(examples[i:i + chunk], tokenizer)
        out[i:i + chunk, :, :ids.shape[1]] = base.span_probs(ids, allowed, types)
    return out


def batches(cfg: AdapterConfig, data: AdapterData, tokenizer):
    """next_batch() for train_lora: batch_size examples, round(replay * batch_size) of them
    replayed with the base's soft targets, the rest skill examples with their gold spans.

    The reader answers only when a span beats the null by its margin (reader.NULL_MARGIN), so
    a skill answer learnt by a small lead is silenced at reading time. A skill example with an
    answer therefore has its null position's start and end scores raised by null_margin / 2
    in the loss (`SpanReader.loss_and_grads`' logit_bias): the gold span must win by the
    margin. Replayed rows get no bias: they ask for the base's own distributions."""
    rng = np.random.default_rng([cfg.seed, 2])
    n_rep = int(round(cfg.replay * cfg.batch_size))

    def next_batch():
        skill = [data.skill[i] for i in rng.integers(0, len(data.skill), cfg.batch_size - n_rep)]
        rep = rng.integers(0, len(data.replay), n_rep) if n_rep else np.zeros(0, dtype=int)
        ids, spans, allowed, types = to_batch(skill + [data.replay[i] for i in rep], tokenizer)
        T = ids.shape[1]
        gold = np.stack(span_targets(spans[:len(skill)], T), axis=1)  # [b, 2, T] one-hot
        targets = np.concatenate([gold, data.replay_targets[rep, :, :T]])  # [B, 2, T]
        bias = np.zeros(ids.shape, dtype=np.float32)  # [B, T]
        for b, e in enumerate(skill):
            if e.answer is not None:
                bias[b, len(e.ids) - 1] = cfg.null_margin / 2  # the <|a|> (null) position
        return ids, targets.astype(np.float32), allowed, types, bias
    return next_batch


def train_adapter(cfg: AdapterConfig, base: SpanReader, data: AdapterData, tokenizer=None,
                  log=None) -> tuple[SpanReader, LoRA | None, list[float]]:
    """(the adapted reader, its adapter, the loss of every step). rank 0: full fine-tuning of
    a copy of the base (AdamW, gradient clip 1), no adapter: the comparison of lab 07."""
    next_batch = batches(cfg, data, tokenizer or load_tokenizer())
    if cfg.rank == 0:
        model = SpanReader(base.config, params={k: v.copy() for k, v in base.params.items()})
        opt, losses = AdamW(model.params, lr=cfg.lr, weight_decay=0.0), []
        for step in range(cfg.steps):
            loss, grads = model.loss_and_grads(*next_batch())
            clip_grad_norm(grads, 1.0)
            opt.step(grads)
            losses.append(loss)
            if log is not None:
                log(step, loss)
        return model, None, losses
    lora = LoRA(base.params, LoRAConfig(cfg.rank, cfg.alpha, cfg.targets, TASK), seed=cfg.seed)
    losses = train_lora(base, lora, next_batch, cfg.steps, cfg.lr, log=log)
    return adapted_model(base, lora), lora, losses


def build_adapter(cfg: AdapterConfig = AdapterConfig(), out: Path = ADAPTER_PATH,
                  log=print) -> dict:
    """`make models`: train the choice adapter on the shipped reader, save it, return its
    MANIFEST entry."""
    tokenizer = load_tokenizer()
    base = SpanReader.load(READER_PATH, tokenizer.fingerprint)
    t0 = time.perf_counter()
    data = adapter_data(cfg, base, tokenizer)
    t1 = time.perf_counter()
    _, lora, losses = train_adapter(cfg, base, data, tokenizer)
    t2 = time.perf_counter()
    lora.save(out, base.params)
    log(f"saved {out}: {lora.n_params} parameters, loss {np.mean(losses[:10]):.3f} -> "
        f"{np.mean(losses[-20:]):.3f}")
    return {"file": Path(out).name, "sha256": hashlib.sha256(Path(out).read_bytes()).hexdigest(),
            "base": READER_PATH.name, "kb_sha256": kb_sha256(DEFAULT_KB), "config": asdict(cfg),
            "n_params": lora.n_params, "final_loss": round(float(np.mean(losses[-20:])), 4),
            "data_seconds": round(t1 - t0, 1), "train_seconds": round(t2 - t1, 1)}
