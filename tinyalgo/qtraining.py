"""Q-learning from input-output pairs alone (paper section 6): no actions are
given, only the inputs and the symbols to write.

One update, ``q_update``, top to bottom (docs/original-release.md#bptt and the sections after it):

1. unroll the controller over T = min(49, C + 5) steps of B = 20 lanes,
   choosing joint actions epsilon-greedily (epsilon = 0.05) on the Q head and
   writing the symbol head's argmax; lanes that end an episode start a new one
   (the episode barrier cuts the recurrent state);
2. compute the Q targets over the rollout: by default Watkins Q(lambda = 1)
   with the dynamic discount V-hat(next) / V-hat(now) (``qlearning``); the
   rollout's end bootstraps with max_a Q of the next state;
3. gradients: the TD error q_lr * (Q(s,a) - target) on the chosen action, the
   penalty kappa * (sum_a Q(s,a) - 1)^2 once it is switched on, and the
   cross-entropy of the symbol head on every write; one BPTT through the
   shared controller;
4. divide by B * T / 10, clip the global norm to 5, plain SGD (lr 0.1).

The run, ``QTrainer.run``: every ``validate_every`` updates the controller
is validated greedily on 50 held-out instances of the current complexity C;
95 % solved switches the penalty on; two perfect validations in a row add 4
to C (paper section 5) and trigger the test of the paper's protocol, 50 fresh
instances of length 100.  Each validation is also a *segment boundary*: every
lane starts afresh from a seed drawn from the run's generator, so a run saved
there and resumed continues exactly as if it had never stopped.

When Q-learning stops: at the first of

- **the solve**: all 50 test instances of length ``test_length`` (100)
  solved, after a curriculum advance (``state.solved_at`` is set);
- **the budget**: ``budget`` characters trained (``state.solved_at`` stays None);
- **a request**: ``should_stop()`` true at a segment boundary (resumable).

The paper's configuration, the fields of ``cfg`` this loop reads:

==========================  =====================================================
``task``, ``base``          the task (section 4); ``extra_curriculum``: 3-number
                            addition's training instances (the release's)
``controller``, ``units``,  the controller (``make_controller``)
``layers``, ``dtype``
``seed``                    the run's generator: controller, lanes, exploration, tests
``batch``, ``max_rollout``  B = 20 lanes, T = min(49, C + 5) steps
``epsilon``                 0.05, every lane (section 6)
``q``, ``discount``,        Watkins Q(lambda = 1), the dynamic discount
``gamma``, ``lam``          gamma V-hat'/V-hat (section 6.1-6.2)
``penalty``, ``kappa``      the penalty on sum_a Q - 1, weight 0.01 (section 6.3)
``reward``, ``q_lr``        binary reward; the TD error's factor 0.1
``lr``, ``max_norm``        plain SGD, 0.1, global norm clipped to 5
``start``, ``increment``,   the curriculum: C from 6, + 4 after ``streak``
``streak``                  perfect validations in a row (section 5)
``validate_every``,         validation every 4 updates on 50 instances
``val_instances``
``test_length``             the solve's test: 50 instances of length 100
``budget``                  characters to train at most
``report_lengths``          ``final_report``'s lengths
==========================  =====================================================

``QTrainer`` reads nothing else.  The options beyond the paper (exploration
schedules, greedy lanes, a learning rate after the solve, training on past
the solve until a longer length passes, keeping the best tested model) are
``tinyalgo.runs.beyond.BeyondThePaper``, a subclass that overrides the five
hooks (``epsilon``, ``greedy_lanes``, ``learning_rate``,
``after_solve``, ``at_budget_end``); ``tinyalgo train`` runs it.
"""
from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from tinyalgo import qlearning
from tinyalgo.controller import make_controller
from tinyalgo.curriculum import Curriculum, FixedComplexity
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.layers import softmax
from tinyalgo.optim import scale_gradients, sgd_step
from tinyalgo.tasks import make_task


# The options beyond the paper that act before the solve, at the paper's values (QTrainer refuses others).
PAPER_BEFORE_THE_SOLVE = dict(exploration="constant", greedy_lanes=0)


@dataclass
class RunState:
    """Where a run stands at a segment boundary (what a checkpoint holds
    besides the parameters and the configuration)."""

    rng: dict
    curriculum: dict
    chars: int = 0
    updates: int = 0
    seconds: float = 0.0
    penalty_on: bool = False
    val_char_accuracy: float = 0.0
    solved_at: dict = None        # the paper's solve: 50 of 50 test instances of length 100
    # kept by the options beyond the paper (tinyalgo/runs/beyond.py); None or 0 in the paper's loop
    confirmed_at: dict = None     # the test at confirm_length passed confirm_passes times in a row
    confirm_streak: int = 0       # tests at confirm_length passed in a row
    passed_at: dict = None        # the first test at confirm_length that passed
    best: dict = None             # the best test at confirm_length so far (its model: trainer.best_params)
    restored_best: dict = None    # set if the run ended with that model instead of its last one
    done: bool = False
    evaluations: list = field(default_factory=list)


def q_update(controller, env, lanes, cfg, level: int, rng, epsilon: float, greedy_lanes: int, penalty_on: bool,
             lr: float):
    """One rollout of T = min(cfg.max_rollout, level + 5) steps and one SGD
    step (paper section 6).  ``lanes`` (obs, hidden state, reset) is where
    the lanes stand; returns (the gradient norm, the lanes after the rollout).
    ``greedy_lanes`` of the lanes never explore."""
    B, A, T = cfg.batch, env.n_actions, min(cfg.max_rollout, level + 5)
    dtype = controller.dtype
    qs = np.empty((T, B, A), dtype=dtype)
    actions = np.empty((T, B), dtype=np.int64)
    rewards = np.empty((T, B))
    terminal = np.empty((T, B), dtype=bool)
    exploratory = np.zeros((T + 1, B), dtype=bool)
    v_hat = np.empty((T + 1, B))
    symbols = np.empty((T, B), dtype=np.int64)                       # the symbol a write must produce
    obs, hidden, reset = lanes
    rollout = controller.rollout()                                   # parameters are fixed until the SGD step
    explore = rng.random((T, B)) < epsilon                           # epsilon-greedy, drawn for the whole rollout
    explore[:, :greedy_lanes] = False
    random_actions = rng.integers(0, A, size=(T, B))
    for t in range(T):
        q, scores, hidden = rollout.step(obs, hidden, reset)
        greedy = q.argmax(axis=1)
        a = np.where(explore[t], random_actions[t], greedy)
        exploratory[t] = a != greedy
        v_hat[t], symbols[t] = env.v_hat, env.next_target
        probs = softmax(scores) if cfg.reward != "binary" else None
        result = env.step(a, scores.argmax(axis=1), probs, explored=exploratory[t])
        qs[t], actions[t], rewards[t], terminal[t] = q, a, result.reward, result.done
        obs, reset = result.obs, result.done
    q_next, _, _ = rollout.infer(obs, hidden, reset)                  # bootstrap at the rollout's end
    v_hat[T] = env.v_hat
    # targets (section 6.1-6.2), the TD error and the penalty (6.3), the symbol head's cross-entropy
    q_max = np.concatenate([qs.max(axis=2), q_next.max(axis=1)[None]]).astype(np.float64)
    targets = qlearning.targets(cfg.q, cfg.discount, rewards, q_max, v_hat, exploratory, terminal,
                                gamma=cfg.gamma, lam=cfg.lam)
    dq, _ = qlearning.td_gradient(qs.astype(np.float64), actions, targets, np.ones((T, B), bool), cfg.q_lr)
    if penalty_on:
        dq = dq + qlearning.penalty(qs.astype(np.float64), cfg.kappa)[1]
    dlogp = np.zeros((T, B, env.vocab.size), dtype=dtype)             # d(-log p[target]) on every write
    step, lane = np.nonzero(actions >= env.n_moves)
    dlogp[step, lane, symbols[step, lane]] = -1.0
    grads, _ = rollout.backward(dq.astype(dtype), dlogp)             # BPTT
    norm = sgd_step(controller.params, scale_gradients(grads, B, T), lr, cfg.max_norm)
    return norm, (obs, hidden, reset)


class QTrainer:
    """The paper's Q-learning run: ``run()`` trains until solved, out of
    budget, or stopped (see the module doc); ``boundary()`` is what to save to
    resume it.  Refuses a ``cfg`` that sets an option beyond the paper that
    acts before the solve (those are ``tinyalgo.runs.beyond.BeyondThePaper``'s)."""

    def __init__(self, cfg, controller=None, state: RunState = None, log=print):
        if type(self) is QTrainer:
            changed = {k: getattr(cfg, k) for k, v in PAPER_BEFORE_THE_SOLVE.items() if getattr(cfg, k, v) != v}
            if changed:
                given = ", ".join(f"{k}={v!r}" for k, v in changed.items())
                paper = ", ".join(f"{k}={v!r}" for k, v in PAPER_BEFORE_THE_SOLVE.items())
                raise ValueError(f"{given}: beyond the paper; the paper's QTrainer runs {paper}: train with"
                                 f" tinyalgo.runs.beyond.BeyondThePaper")
        self.cfg, self.log = cfg, log
        self.task = make_task(cfg.task, cfg.base, extra_curriculum=cfg.extra_curriculum)
        self.test_task = make_task(cfg.task, cfg.base, extra_curriculum=False)
        self.rng = np.random.default_rng(cfg.seed)
        self.env = Environment(self.task, batch_size=cfg.batch, reward=cfg.reward, seed=0)
        self.curriculum = Curriculum(start=cfg.start, increment=cfg.increment, minimum=self.task.min_complexity,
                                     streak=cfg.streak)
        if controller is None:
            controller = make_controller(self.env, cfg, int(self.rng.integers(2 ** 31)))
        self.controller = controller
        self.agent = GreedyAgent(controller)
        if state is None:
            state = RunState(rng=self.rng.bit_generator.state, curriculum=self.curriculum.state())
        else:
            self.rng.bit_generator.state = state.rng
            self.curriculum.restore(state.curriculum)
        self.state = state
        self.mark_boundary()

    def run(self, should_stop=lambda: False, on_boundary=lambda trainer: None) -> RunState:
        """Train until solved, out of budget, or ``should_stop()`` at a boundary."""
        cfg, s = self.cfg, self.state
        t0 = time.perf_counter() - s.seconds
        self.start_segment()
        try:
            while not s.done and s.chars < cfg.budget and not should_stop():
                self.update()
                if s.updates % cfg.validate_every == 0 or s.chars >= cfg.budget:
                    s.seconds = time.perf_counter() - t0
                    self.validate(s.seconds)
                    self.mark_boundary()
                    on_boundary(self)
                    self.start_segment()
        except KeyboardInterrupt:
            self.log("interrupted: keeping the last segment boundary")
            raise
        s.seconds = time.perf_counter() - t0
        if s.chars >= cfg.budget and not s.done:
            self.at_budget_end()
        return s

    def update(self) -> float:
        """One rollout and one SGD step (``q_update``); returns the gradient norm."""
        cfg, s = self.cfg, self.state
        norm, self.lanes = q_update(self.controller, self.env, self.lanes, cfg, self.curriculum.level, self.rng,
                                    self.epsilon(), self.greedy_lanes(), s.penalty_on and cfg.penalty,
                                    self.learning_rate())
        s.chars += cfg.batch * min(cfg.max_rollout, self.curriculum.level + 5)
        s.updates += 1
        return norm

    def validate(self, elapsed: float) -> None:
        """Validate at C; switch the penalty on; advance the curriculum and test."""
        cfg, s = self.cfg, self.state
        val = self.evaluate(self.curriculum.level, cfg.val_instances, training_distribution=True, complexity=True)
        s.val_char_accuracy = val["char_accuracy"]
        if val["solved"] >= 0.95 and not s.penalty_on and cfg.penalty:
            s.penalty_on = True
            self.log(f"penalty on (kappa = {cfg.kappa}) at complexity {self.curriculum.level}")
        level = self.curriculum.level
        advanced = self.curriculum.record(val["solved"], chars=s.chars, seconds=round(elapsed, 2))
        self.log(f"[{elapsed:7.1f}s] complexity {level:4d}  validation solved {val['solved']:6.1%}"
                 f"  chars {val['char_accuracy']:6.1%}  eps {self.epsilon():.2f}"
                 f"  trained {s.chars:>10d} chars  {s.chars / max(elapsed, 1e-9):7.0f} chars/s")
        if not advanced:
            return
        if s.solved_at is None:                 # the paper's test: 50 fresh instances of length 100, all right
            test = self.evaluate(cfg.test_length, cfg.val_instances)
            self.curriculum.history[-1]["test_solved"] = test["solved"]
            if test["solved"] < 1.0:
                return
            s.solved_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=self.curriculum.level)
            self.log(f"[{elapsed:7.1f}s] SOLVED: {cfg.val_instances} of {cfg.val_instances} test instances of length"
                     f" {cfg.test_length} after {s.chars} characters")
        s.done = self.after_solve(elapsed)

    # ------------------------------------------------- the paper's choices
    # (tinyalgo.runs.beyond.BeyondThePaper overrides these five)
    def epsilon(self) -> float:
        """The exploration rate of the training lanes: 0.05 (section 6)."""
        return self.cfg.epsilon

    def greedy_lanes(self) -> int:
        """Training lanes that never explore: none."""
        return 0

    def learning_rate(self) -> float:
        """The SGD learning rate: ``lr`` throughout."""
        return self.cfg.lr

    def after_solve(self, elapsed: float) -> bool:
        """Called at the solve's advance (and at each later advance of a run
        that goes on); True ends the run: the paper stops at the solve."""
        return True

    def at_budget_end(self) -> None:
        """Out of budget before the solve: the run ends with its last model."""

    def evaluate(self, length_or_complexity: int, instances: int, training_distribution: bool = False,
                 complexity: bool = False, seed: int | None = None) -> dict:
        """Greedy evaluation at a complexity, or at a length (x the task's factor);
        fresh instances from the run's generator unless ``seed`` is given."""
        c = length_or_complexity if complexity else length_or_complexity * self.task.factor
        task = self.task if training_distribution else self.test_task
        seed = int(self.rng.integers(2 ** 63)) if seed is None else seed
        env = Environment(task, batch_size=instances, complexity=FixedComplexity(c, task.min_complexity), seed=seed)
        return evaluate_complexity(self.agent, task, c, env=env)

    # ------------------------------------------------------------- segments
    def start_segment(self):
        """Fresh lanes and a zero state, seeded from the run's generator."""
        self.env.set_complexity(self.curriculum.sampler(low_accuracy=self.state.val_char_accuracy < 0.7))
        obs = self.env.reset(seed=int(self.rng.integers(2 ** 63)))
        self.lanes = obs, self.controller.initial_state(self.cfg.batch), np.ones(self.cfg.batch, dtype=bool)

    def mark_boundary(self):
        """Remember the run as it is now, before the next segment draws anything."""
        self.state.rng = self.rng.bit_generator.state
        self.state.curriculum = self.curriculum.state()
        self._boundary_params = self.snapshot()
        self._boundary_state = copy.deepcopy(self.state)

    def boundary(self):
        """(params, RunState) at the last segment boundary: what to save."""
        return self._boundary_params, self._boundary_state

    def snapshot(self) -> dict:
        """A copy of the controller's parameters."""
        return {k: v.copy() for k, v in self.controller.params.items()}

    def load(self, params: dict) -> None:
        """Write ``params`` into the controller's parameters (in place)."""
        for k, v in params.items():
            self.controller.params[k][...] = v

    def final_report(self) -> dict:
        """Greedy evaluation at the report lengths (50 instances each)."""
        rows = []
        for length in self.cfg.report_lengths:
            row = self.evaluate(length, self.cfg.val_instances)
            row["length"] = length
            self.log(f"length {length:>5d} (complexity {row['complexity']}): solved {row['solved']:6.1%}"
                     f"  chars before first error {row['char_accuracy']:6.1%}")
            rows.append(row)
        return dict(config=asdict(self.cfg), run=asdict(self.state), evaluations=rows,
                    history=self.curriculum.history)
