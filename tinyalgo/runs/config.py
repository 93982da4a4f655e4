"""What a training run is made of: ``QConfig``, every choice of a Q-learning
run (paper section 6; docs/original-release.md), and ``SupervisedConfig``, of
a supervised one (section 5); each is saved with its run's checkpoints.  The
training loops are ``tinyalgo.qtraining`` and ``tinyalgo.supervised``; where
a Q-learning run stands is ``tinyalgo.qtraining.RunState``."""
from __future__ import annotations

from dataclasses import dataclass

from tinyalgo.runs.options import TrainingOptions, budget_option, controller_option, option, task_option
from tinyalgo.rewards import REWARDS

DISCOUNTS = ("dynamic", "1", "0.99", "0.95")
Q_KINDS = ("watkins", "one-step")
EXPLORATIONS = ("constant", "release")
SOLVED_LR_AFTER = ("solve", "pass")   # solved_lr from the paper's solve, or from the first pass at confirm_length
FF_TASKS = ("reverse", "walk")       # the paper's Table 1 uses the FF controller for these


def default_controller(task: str) -> str:
    return "ff" if task in FF_TASKS else "gru"


@dataclass
class QConfig(TrainingOptions):
    """Everything a Q-learning run depends on (saved with its checkpoint).

    The options shared with supervised runs (units, seed, batch, lr, budget,
    threads, reference, ...) are declared in ``tinyalgo.runs.options.TrainingOptions``;
    ``saved_before``: the value of a run saved before the option existed
    (``QConfig.from_saved``)."""

    task: str = task_option("addition")
    controller: str = controller_option("", default_text="ff for reverse and walk, gru otherwise, as in the paper's"
                                                         " Table 1")
    budget: int = budget_option(30_000_000)
    discount: str = option("dynamic", "the discount of the Q targets: dynamic = gamma * V-hat(next) / V-hat(now)"
                                      " (paper section 6.1), or a constant", choices=DISCOUNTS)
    gamma: float = option(1.0, "the paper's gamma in gamma * V-hat'/V-hat of the dynamic discount",
                          minimum=0.0, maximum=1.0, open_below=True, sweep=True,
                          sweep_help="; a sweep sets it for its dynamic-discount columns, the constant-discount"
                                     " columns keep their discount")
    q: str = option("watkins", "the Q targets: Watkins Q(lambda) (paper section 6.2) or one-step", choices=Q_KINDS)
    lam: float = option(1.0, "lambda of Watkins Q(lambda)", minimum=0.0, maximum=1.0, cli=False)
    penalty: bool = option(True, "the penalty on sum_a Q(s,a) - 1 (paper section 6.3)")
    kappa: float = option(0.01, "the weight of that penalty", minimum=0.0, cli=False)
    reward: str = option("binary", "the reward of a step (paper section 6, Appendix C)", choices=REWARDS, sweep=True)
    epsilon: float = option(0.05, "the exploration rate of a training lane", minimum=0.0, maximum=1.0, cli=False)
    exploration: str = option("constant", "constant: epsilon on every training lane (paper); release: 0 once"
                                          " validation characters are right (>= 90% after the penalty switch), as"
                                          " the Torch release", choices=EXPLORATIONS, saved_before="release")
    greedy_lanes: int = option(0, "training lanes of the batch that never explore (epsilon 0; 0: epsilon on every"
                                  " lane, the paper)", minimum=0, maximum=lambda cfg: cfg.batch - 1,
                               reason="at least one lane explores", metavar="N", sweep=True)
    solved_lr: float = option(0.0, "the SGD learning rate once the paper's solve is recorded (0: keep lr)",
                              minimum=0.0, metavar="LR", sweep=True)
    solved_lr_after: str = option("solve", "when solved_lr takes over: at the paper's solve, or at the first pass"
                                           " of the test at confirm_length", choices=SOLVED_LR_AFTER,
                                  saved_before="solve", sweep=True)
    q_lr: float = option(0.1, "the TD error's factor (q_lr * (Q(s,a) - target))", minimum=0.0, open_below=True,
                         cli=False)
    streak: int = option(2, "perfect validations in a row to advance the curriculum", minimum=1, cli=False)
    test_length: int = option(100, "the paper's solve: 50 fresh instances of this length, all perfect", minimum=1,
                              cli=False)
    report_lengths: tuple = option((100, 1000), "lengths of the final report", cli=False)
    confirm_length: int = option(1000, "after the paper's solve (length 100), train on until 50 instances of this"
                                       " length pass too (0: stop at the paper's solve)", minimum=0, metavar="L",
                                 saved_before=0, sweep=True)
    confirm_passes: int = option(5, "the test at confirm_length must pass this many times in a row, once after"
                                    " each curriculum advance", minimum=1, metavar="N", saved_before=1, sweep=True)
    keep_best: bool = option(True, "out of budget before the test at confirm_length passed: end with the model"
                                   " that did best on it (kept in <out>/best.npz) if it beats the last one on a"
                                   " fresh test", saved_before=False)
    extra_curriculum: bool = option(True, "3-number addition: the release's extra curriculum", cli=False)

    def __post_init__(self):
        self.controller = self.controller or default_controller(self.task)
        self.discount = str(self.discount)
        self.report_lengths = tuple(int(x) for x in self.report_lengths)
        super().__post_init__()
        if self.discount != "dynamic" and self.gamma != 1.0:
            raise ValueError(f"gamma applies to the dynamic discount only; with discount={self.discount} the"
                             f" discount is that constant: leave gamma at 1 (got {self.gamma})")


@dataclass
class SupervisedConfig(TrainingOptions):
    """Everything a supervised run depends on (saved with its checkpoint): the
    options of every training run (``tinyalgo.runs.options.TrainingOptions``: task,
    controller, units, seed, budget, ...) and the target."""

    target: int = option(1000, "supervised: stop once this complexity is solved (paper: 1000)", minimum=1)
