"""LoRA: fine-tune a frozen model through a low-rank update of some of its weights.

What it is: for each adapted weight W [In, Out] of a base model (y = x @ W + b), two small
trainable matrices A [In, r] and B [r, Out] with r << min(In, Out); the model then uses

    W_eff = W + s A B,   s = alpha / r          -- Hu et al. 2021, "LoRA", §4.1

Only A and B train; W stays frozen, so one base can carry many small adapters. B starts at
0, so a fresh adapter changes nothing; A starts random, so the first gradient of B is not 0.
The paper writes h = W0 x + B A x (weights [out, in]); our weights are [in, out], so here A
is the down-projection x -> x A and B the up-projection. Adapting a model means building a
copy of it whose params dict holds W_eff (`adapted_model`): its own backward then gives
dL/dW_eff, and `LoRA.grads` turns that into dL/dA and dL/dB by the chain rule.
What it leaves out: dropout on the low-rank path, adapting biases or embeddings, a rank per
layer (AdaLoRA), quantised bases (QLoRA), several adapters at once.

Shape letters (as layers.py's linear): In the input width of an adapted weight, Out its
output width, r the rank.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .checkpoint import CheckpointError, load_params, params_sha256, save_params
from .optim import AdamW

FORMAT = "lora"  # the format name in an adapter file's header
TARGETS = ("attn.w_qkv", "attn.w_o", "mlp.w_fc", "mlp.w_proj")  # the weights one may adapt


@dataclass(frozen=True)
class LoRAConfig:
    rank: int = 4  # r: the inner width of A B, so the update has rank <= r
    # alpha: s = alpha / r. Fixed, not 2 r: keep it when you change r and the size of the
    # update at a given learning rate stays about the same (Hu et al. §4.1 do the same)
    alpha: float = 8.0
    targets: tuple[str, ...] = ("attn.w_qkv", "attn.w_o")  # name suffixes of adapted weights
    # the family of inputs the adapter was trained for, a name its user chooses and reads
    # (PEFT's task_type plays this part); LoRA itself never looks at it
    task: str | None = None

    def __post_init__(self):
        if not isinstance(self.rank, int) or isinstance(self.rank, bool) or self.rank < 1:
            raise ValueError(f"rank ({self.rank!r}) must be an integer >= 1")
        if not isinstance(self.alpha, (int, float)) or not self.alpha > 0:
            raise ValueError(f"alpha ({self.alpha!r}) must be a number > 0")
        if not isinstance(self.targets, tuple) or not self.targets:
            raise ValueError(f"targets ({self.targets!r}) must be a non-empty tuple of {TARGETS}")
        unknown = [t for t in self.targets if t not in TARGETS]
        if unknown:
            raise ValueError(f"unknown targets {unknown}; choose from {TARGETS}")
        if self.task is not None and not (isinstance(self.task, str) and self.task):
            raise ValueError(f"task ({self.task!r}) must be a non-empty string or None")


class LoRA:
    """Example: LoRA(MiniGPT(MiniGPTConfig(n_layer=2)).params).n_params -> 2 * 4 * (64 + 192)
    + 2 * 4 * (64 + 64) = 3072 (rank 4 on w_qkv [64, 192] and w_o [64, 64] of two blocks)"""

    def __init__(self, base_params: dict[str, np.ndarray], config: LoRAConfig | None = None,
                 seed: int = 0):
        self.config = config = config or LoRAConfig()
        self.scale = config.alpha / config.rank  # s
        self.targets = sorted(k for k, w in base_params.items() if w.ndim == 2 and any(
            k == t or k.endswith("." + t) for t in config.targets))  # adapted weight names
        if not self.targets:
            raise ValueError(f"no 2-D weight of the base is named like {config.targets}")
        rng, r = np.random.default_rng(seed), config.rank
        self.params = {}  # "<weight name>.A" -> [In, r], "<weight name>.B" -> [r, Out]
        for k in self.targets:
            n_in, n_out = base_params[k].shape
            # A ~ N(0, 1/In): x A then has entries the size of x's own (loralib's Kaiming
            # init has this scale up to a constant); B = 0: the adapter starts as "no change".
            self.params[k + ".A"] = rng.normal(0.0, 1.0 / np.sqrt(n_in), (n_in, r)).astype(
                base_params[k].dtype)  # [In, r]
            self.params[k + ".B"] = np.zeros((r, n_out), dtype=base_params[k].dtype)  # [r, Out]

    @property
    def n_params(self) -> int:
        return sum(v.size for v in self.params.values())

    @staticmethod
    def lora_param_count(shapes, r: int) -> int:
        """Trainable parameters of rank-r adapters on weights of `shapes` [(In, Out), ...]:
        sum r (In + Out), against In Out each for full fine-tuning."""
        return sum(r * (i + o) for i, o in shapes)

    def delta(self, name: str) -> np.ndarray:
        """The update s A B of the weight `name`."""
        return self.scale * (self.params[name + ".A"] @ self.params[name + ".B"])  # [In, Out]

    def _check(self, params: dict[str, np.ndarray]) -> None:
        for k in self.targets:
            want = (self.params[k + ".A"].shape[0], self.params[k + ".B"].shape[1])
            if k not in params or params[k].shape != want:
                got = params[k].shape if k in params else "missing"
                raise ValueError(f"{k}: base weight is {got}, this adapter is for {want}")

    def adapted(self, base_params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """A new params dict: W + s A B for every adapted weight; the other entries are the
        base's own arrays (not copied)."""
        self._check(base_params)
        return {**base_params, **{k: base_params[k] + self.delta(k) for k in self.targets}}

    def grads(self, full_grads: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """dL/dA and dL/dB from the gradients of a model run on `adapted` params (the base
        itself gets none: it is frozen). Fresh arrays every call."""
        # W_eff = W + s A B, so dL/dA[i, j] = sum_o dW[i, o] s B[j, o] and likewise for B:
        # dA = s dW B^T,  dB = s A^T dW   (dW = dL/dW_eff, the model's own gradient)
        g = {}
        for k in self.targets:
            dW, A, B = full_grads[k], self.params[k + ".A"], self.params[k + ".B"]  # [In, Out]
            g[k + ".A"] = self.scale * (dW @ B.T)  # [In, Out] @ [Out, r] -> [In, r]
            g[k + ".B"] = self.scale * (A.T @ dW)  # [r, In] @ [In, Out] -> [r, Out]
        return g

    def merge(self, params: dict[str, np.ndarray]) -> None:
        """W <- W + s A B in place: the model then runs at the base's speed, with no adapter.
        Merge once; `unmerge` undoes it."""
        self._check(params)
        for k in self.targets:
            params[k] += self.delta(k)  # [In, Out]

    def unmerge(self, params: dict[str, np.ndarray]) -> None:
        """W <- W - s A B in place. subtle: floating point is not exact, (W + D) - D can
        differ from W in its last bits, so an unmerged base is close to the original but not
        always byte-identical: its sha256 may change, and then `LoRA.load` refuses it as a
        base. Keep a copy of the original base for that."""
        self._check(params)
        for k in self.targets:
            params[k] -= self.delta(k)  # [In, Out]

    def save(self, path, base_params: dict[str, np.ndarray]) -> None:
        """Write A and B, the config (task included) and the sha256 of `base_params` (the
        unmerged base) to an .npz, atomically (checkpoint.save_params)."""
        self._check(base_params)
        c = self.config
        save_params(path, self.params, {"rank": c.rank, "alpha": c.alpha,
                                        "targets": list(c.targets), "task": c.task,
                                        "base_sha256": params_sha256(base_params)}, fmt=FORMAT)

    @classmethod
    def load(cls, path, base_params: dict[str, np.ndarray]) -> LoRA:
        """Read an adapter written by `save` for `base_params`. Another base, a tampered or
        truncated file, or arrays of the wrong names or shapes: a CheckpointError naming the
        file."""
        params, header = load_params(path, fmt=FORMAT)
        if header.get("base_sha256") != params_sha256(base_params):
            raise CheckpointError(f"{path}: adapter made for another base model (base sha256 "
                                  f"{str(header.get('base_sha256'))[:12]}...)")
        try:
            config = LoRAConfig(header["rank"], header["alpha"], tuple(header["targets"]),
                                header.get("task"))
            lora = cls(base_params, config)
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"{path}: bad adapter config in the header ({e})") from e
        if ({k: (v.shape, v.dtype) for k, v in params.items()}
                != {k: (v.shape, v.dtype) for k, v in lora.params.items()}):
            raise CheckpointError(f"{path}: adapter names, shapes or dtypes do not match "
                                  "its config on this base")
        lora.params = params
        return lora


def adapted_model(model, lora: LoRA):
    """A model of the same class (MiniGPT, SpanReader, ...) running on `lora.adapted` params;
    its `loss_and_grads` gives the dL/dW_eff that `lora.grads` needs."""
    return type(model)(model.config, params=lora.adapted(model.params))


def train_lora(base, lora: LoRA, next_batch: Callable[[], tuple], steps: int, lr: float,
               weight_decay: float = 0.0, log=None) -> list[float]:
    """Train A and B (in place) on batches from `next_batch()`, the base frozen; returns the
    loss of every step. `next_batch` takes no argument (close over your generator:
    `lambda: make_batch(rng)`); a batch is the model's `loss_and_grads` inputs. AdamW at a
    constant `lr`, no dropout; no weight decay by default: the low rank already limits the
    update, and decay would pull it back toward "no change" at a rate of its own (pass
    `weight_decay` to try it). `log(step, loss)` is called every step when given."""
    opt = AdamW(lora.params, lr=lr, weight_decay=weight_decay)
    losses = []
    for step in range(steps):
        # the adapted copy is rebuilt each step: W_eff changes whenever A or B do
        loss, grads = adapted_model(base, lora).loss_and_grads(*next_batch())
        opt.step(lora.grads(grads))  # only A and B move
        losses.append(float(loss))
        if log is not None:
            log(step, float(loss))
    return losses
