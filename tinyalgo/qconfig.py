"""What a Q-learning run is made of (paper section 6;
docs/original-release.md): ``QConfig``, every choice of a run (saved with its
checkpoint), and ``RunState``, where a run stands at a segment boundary.
The training loop is ``tinyalgo.qtraining``."""
from __future__ import annotations

from dataclasses import dataclass, field

from tinyalgo.fast.threads import check_threads
from tinyalgo.tasks import TASKS

DISCOUNTS = ("dynamic", "1", "0.99", "0.95")
Q_KINDS = ("watkins", "one-step")
EXPLORATIONS = ("constant", "release")
SOLVED_LR_AFTER = ("solve", "pass")   # solved_lr from the paper's solve, or from the first pass at confirm_length
FF_TASKS = ("reverse", "walk")       # the paper's Table 1 uses the FF controller for these


def default_controller(task: str) -> str:
    return "ff" if task in FF_TASKS else "gru"


@dataclass
class QConfig:
    """Everything a Q-learning run depends on (saved with its checkpoint)."""

    task: str = "addition"
    controller: str = ""          # "" = the paper's choice for the task
    units: int = 200
    layers: int = 1
    base: int = 10
    seed: int = 0
    batch: int = 20
    discount: str = "dynamic"
    gamma: float = 1.0            # the paper's gamma in gamma * V-hat'/V-hat (dynamic discount only; release: 1)
    q: str = "watkins"
    lam: float = 1.0
    penalty: bool = True
    kappa: float = 0.01
    reward: str = "binary"
    epsilon: float = 0.05
    exploration: str = "constant"  # "constant": epsilon on every training lane (paper); "release": see epsilon()
    greedy_lanes: int = 0         # this many of the batch lanes never explore (epsilon 0): they reach instance ends
    lr: float = 0.1
    solved_lr: float = 0.0        # > 0: the learning rate once the paper's solve is recorded (0: lr throughout)
    solved_lr_after: str = "solve"  # ... or "pass": once the length-confirm_length test first passes
    q_lr: float = 0.1
    max_norm: float = 5.0
    start: int = 6
    increment: int = 4
    streak: int = 2               # perfect validations in a row to advance (2 x 50 instances)
    budget: int = 30_000_000      # characters = training lane-steps (the paper's unit)
    validate_every: int = 10
    val_instances: int = 50
    test_length: int = 100        # solved = 50 fresh instances of this length, all perfect
    report_lengths: tuple = (100, 1000)
    confirm_length: int = 1000    # after the paper's solve, train on until this length passes too (0: stop)
    confirm_passes: int = 5       # ... that many times in a row (one test after each curriculum advance)
    keep_best: bool = True        # out of budget unconfirmed: end with the model that did best at confirm_length
    max_rollout: int = 49
    extra_curriculum: bool = True
    dtype: str = "float32"
    threads: int = 1              # 2: BPTT's weight gradients on a helper thread (Controller.set_threads)

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"unknown task {self.task!r}; allowed: {', '.join(TASKS)}")
        self.controller = self.controller or default_controller(self.task)
        self.discount = str(self.discount)
        if self.discount not in DISCOUNTS:
            raise ValueError(f"discount must be one of {', '.join(DISCOUNTS)}; got {self.discount!r}")
        if self.exploration not in EXPLORATIONS:
            raise ValueError(f"exploration must be one of {', '.join(EXPLORATIONS)}; got {self.exploration!r}")
        if self.q not in Q_KINDS:
            raise ValueError(f"q must be one of {', '.join(Q_KINDS)}; got {self.q!r}")
        for name in ("batch", "units", "validate_every", "val_instances", "test_length", "max_rollout",
                     "confirm_passes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1; got {getattr(self, name)}")
        if not 0.0 <= self.solved_lr:
            raise ValueError(f"solved_lr must be 0 (keep lr) or a positive learning rate; got {self.solved_lr}")
        if self.solved_lr_after not in SOLVED_LR_AFTER:
            raise ValueError(f"solved_lr_after must be one of {', '.join(SOLVED_LR_AFTER)}; got {self.solved_lr_after!r}")
        if not 0 <= self.greedy_lanes < self.batch:
            raise ValueError(f"greedy_lanes must be 0..{self.batch - 1} (at least one lane explores); got {self.greedy_lanes}")
        check_threads(self.threads)
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1]; got {self.gamma}")
        if self.confirm_length < 0:
            raise ValueError(f"confirm_length must be 0 (stop at the paper's solve) or a length; got {self.confirm_length}")
        if self.budget < 0:
            raise ValueError(f"budget must be a non-negative number of characters; got {self.budget}")
        self.report_lengths = tuple(int(x) for x in self.report_lengths)


@dataclass
class RunState:
    """The state of a run at a segment boundary (what a checkpoint holds
    besides the parameters)."""

    rng: dict
    curriculum: dict
    chars: int = 0
    updates: int = 0
    seconds: float = 0.0
    penalty_on: bool = False
    val_char_accuracy: float = 0.0
    solved_at: dict = None
    confirmed_at: dict = None
    confirm_streak: int = 0       # tests at confirm_length passed in a row
    passed_at: dict = None        # the first test at confirm_length that passed
    best: dict = None             # the best test at confirm_length so far (its model: QTrainer.best_params)
    restored_best: dict = None    # set if the run ended with that model instead of its last one
    done: bool = False
    evaluations: list = field(default_factory=list)
