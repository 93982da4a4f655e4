"""Q-learning from input-output pairs alone (paper section 6): no actions are
given, only the inputs and the symbols to write.

One update, top to bottom (paper section 6; docs/original-release.md#bptt and the sections after it):

1. unroll the controller over T = min(49, C + 5) steps of B = 20 lanes,
   choosing joint actions epsilon-greedily (epsilon = 0.05 throughout by
   default; ``exploration="release"`` for the release's schedule) on the Q head and
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

Every ``validate_every`` updates the controller is validated greedily on 50
held-out instances of the current complexity C; a perfect score adds 4 to C
(paper section 5) and triggers the test of the paper's protocol: 50 fresh
instances of length 100.  Passing it solves the run.  Each validation is
also a *segment boundary*: every lane starts afresh from a seed drawn from
the run's generator, so a run saved there and resumed continues exactly as if
it had never stopped.
"""
from __future__ import annotations

import copy
import time
from dataclasses import asdict

import numpy as np

from tinyalgo import qlearning
from tinyalgo.complexity import FixedComplexity
from tinyalgo.controller import make_controller
from tinyalgo.curriculum import Curriculum
from tinyalgo.layers import softmax
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.fast.memory import keep_freed_memory
from tinyalgo.optim import scale_gradients, sgd_step
from tinyalgo.qconfig import QConfig, RunState
from tinyalgo.tasks import make_task

class QTrainer:
    """A Q-learning run: ``run()`` trains until solved, out of budget, or
    stopped; ``snapshot()``/``restore()`` give resumable checkpoints."""

    def __init__(self, cfg: QConfig, controller=None, state: RunState = None, log=print):
        self.cfg, self.log = cfg, log
        keep_freed_memory()                       # rollouts reuse the heap instead of page-faulting
        self.task = make_task(cfg.task, cfg.base, **({"extra_curriculum": cfg.extra_curriculum}
                                                      if cfg.task == "addition3" else {}))
        self.test_task = make_task(cfg.task, cfg.base, **({"extra_curriculum": False}
                                                           if cfg.task == "addition3" else {}))
        self.rng = np.random.default_rng(cfg.seed)
        self.env = Environment(self.task, batch_size=cfg.batch, reward=cfg.reward, seed=0)
        self.curriculum = Curriculum(start=cfg.start, increment=cfg.increment, minimum=self.task.min_complexity,
                                     streak=cfg.streak)
        if controller is None:
            controller = make_controller(self.env, cfg.controller, cfg.units, cfg.layers,
                                         int(self.rng.integers(2 ** 31)), cfg.dtype, fast=not cfg.reference)
        controller.fast = not cfg.reference           # the run's config picks the path, also on resume
        self.controller = controller.set_threads(cfg.threads)
        self.agent = GreedyAgent(controller)
        if state is None:
            state = RunState(rng=self.rng.bit_generator.state, curriculum=self.curriculum.state())
        else:
            self.rng.bit_generator.state = state.rng
            self.curriculum.restore(state.curriculum)
        self.state = state
        self.best_params = None       # the parameters of state.best (a resumed run loads them from its files)
        self._mark_boundary()

    # ------------------------------------------------------------- segments
    def _start_segment(self):
        """Fresh lanes and a zero state, seeded from the run's generator."""
        s = self.state
        self.env.set_complexity(self.curriculum.sampler(low_accuracy=s.val_char_accuracy < 0.7))
        self.obs = self.env.reset(seed=int(self.rng.integers(2 ** 63)))
        self.hidden = self.controller.initial_state(self.cfg.batch)
        self.reset = np.ones(self.cfg.batch, dtype=bool)

    def _mark_boundary(self):
        """Remember the run as it is now, before the next segment draws anything."""
        self.state.rng = self.rng.bit_generator.state
        self.state.curriculum = self.curriculum.state()
        self._boundary_params = self._snapshot()
        self._boundary_state = copy.deepcopy(self.state)

    def boundary(self):
        """(params, RunState) at the last segment boundary: what to save."""
        return self._boundary_params, self._boundary_state

    # --------------------------------------------------------------- update
    def epsilon(self) -> float:
        """Exploration rate on the training lanes (paper section 6: epsilon-greedy).

        "constant" (default): ``cfg.epsilon`` (0.05) throughout.  "release":
        the original release's schedule (docs/original-release.md#exploration):
        0 once the validation characters are all right, or >= 90% right after
        the penalty switch.  ``cfg.greedy_lanes`` of the lanes never explore
        (``update``): they run whole instances, as the tests do."""
        if self.cfg.exploration == "release":
            acc = self.state.val_char_accuracy
            if acc >= 1.0 or (self.state.penalty_on and acc >= 0.9):
                return 0.0
        return self.cfg.epsilon

    def update(self) -> float:
        """One rollout and one SGD step; returns the gradient norm."""
        cfg, env, ctrl = self.cfg, self.env, self.controller
        B, A, T = cfg.batch, env.n_actions, min(cfg.max_rollout, self.curriculum.level + 5)
        dtype = ctrl.params["q.w"].dtype
        qs = np.empty((T, B, A), dtype=dtype)
        actions = np.empty((T, B), dtype=np.int64)
        rewards = np.empty((T, B))
        terminal = np.empty((T, B), dtype=bool)
        exploratory = np.zeros((T + 1, B), dtype=bool)
        v_hat = np.empty((T + 1, B))
        targets = np.empty((T, B), dtype=np.int64)                    # the symbol a write must produce
        eps = self.epsilon()
        obs, hidden, reset = self.obs, self.hidden, self.reset
        rollout = ctrl.rollout(T, B)                                  # parameters are fixed until the SGD step
        explore = self.rng.random((T, B)) < eps                       # epsilon-greedy, drawn for the whole rollout
        explore[:, :cfg.greedy_lanes] = False                         # ... except on the greedy lanes
        random_actions = self.rng.integers(0, A, size=(T, B))
        for t in range(T):
            q, scores, hidden = rollout.step(obs, hidden, reset)
            greedy = q.argmax(axis=1)
            a = np.where(explore[t], random_actions[t], greedy)
            exploratory[t] = a != greedy
            v_hat[t], targets[t] = env.v_hat, env.next_target
            probs = softmax(scores) if cfg.reward != "binary" else None
            result = env.step(a, scores.argmax(axis=1), probs, explored=exploratory[t])
            qs[t], actions[t], rewards[t], terminal[t] = q, a, result.reward, result.done
            obs, reset = result.obs, result.done
        q_next, _, _ = rollout.infer(obs, hidden, reset)               # bootstrap at the rollout's end
        self.obs, self.hidden, self.reset = obs, hidden, reset
        v_hat[T] = env.v_hat
        dlogp = np.zeros((T, B, env.vocab.size), dtype=dtype)          # cross-entropy on every write
        step, lane = np.nonzero(actions >= env.n_moves)
        dlogp[step, lane, targets[step, lane]] = -1.0
        q_max = np.concatenate([qs.max(axis=2), q_next.max(axis=1)[None]]).astype(np.float64)
        targets = qlearning.targets(cfg.q, cfg.discount, rewards, q_max, v_hat, exploratory, terminal,
                                    gamma=cfg.gamma, lam=cfg.lam)
        dq, _ = qlearning.td_gradient(qs.astype(np.float64), actions, targets, np.ones((T, B), bool), cfg.q_lr)
        if self.state.penalty_on and cfg.penalty:
            dq = dq + qlearning.penalty(qs.astype(np.float64), cfg.kappa)[1]
        grads, _ = rollout.backward(dq.astype(dtype), dlogp)
        lr = cfg.solved_lr if cfg.solved_lr and self._slower() else cfg.lr
        norm = sgd_step(ctrl.params, scale_gradients(grads, B, T), lr, cfg.max_norm)
        self.state.chars += B * T
        self.state.updates += 1
        return norm

    def _slower(self) -> bool:
        """Has the run reached the point where ``solved_lr`` takes over?"""
        s = self.state
        return (s.solved_at if self.cfg.solved_lr_after == "solve" else s.passed_at) is not None

    # ------------------------------------------------------------ validating
    def evaluate(self, length_or_complexity: int, instances: int, training_distribution: bool = False,
                 complexity: bool = False, seed: int = None) -> dict:
        """Greedy evaluation at a complexity, or at a length (x the task's factor);
        fresh instances from the run's generator unless ``seed`` is given."""
        c = length_or_complexity if complexity else length_or_complexity * self.task.factor
        task = self.task if training_distribution else self.test_task
        seed = int(self.rng.integers(2 ** 63)) if seed is None else seed
        env = Environment(task, batch_size=instances, complexity=FixedComplexity(c, task.min_complexity), seed=seed)
        return evaluate_complexity(self.agent, task, c, env=env)

    def validate(self, elapsed: float) -> None:
        """Validate at C; switch the penalty on, advance, test; a new segment."""
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
        if advanced:
            self._test(elapsed)

    def _test(self, elapsed: float) -> None:
        """After an advance: the paper's test (50 fresh instances of length
        ``test_length``, all right) solves the run; with ``confirm_length``
        the run goes on until that length passes as well, ``confirm_passes``
        times in a row (fresh instances each time)."""
        cfg, s = self.cfg, self.state
        if s.solved_at is None:
            test = self.evaluate(cfg.test_length, cfg.val_instances)
            self.curriculum.history[-1]["test_solved"] = test["solved"]
            if test["solved"] < 1.0:
                return
            s.solved_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=self.curriculum.level)
            self.log(f"[{elapsed:7.1f}s] SOLVED: {cfg.val_instances} of {cfg.val_instances} test instances of length"
                     f" {cfg.test_length} after {s.chars} characters")
        if cfg.confirm_length:
            test = self.evaluate(cfg.confirm_length, cfg.val_instances)
            self.curriculum.history[-1]["confirm_solved"] = test["solved"]
            s.confirm_streak = s.confirm_streak + 1 if test["solved"] == 1.0 else 0
            if s.confirm_streak and s.passed_at is None:
                s.passed_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=self.curriculum.level)
            if s.best is None or test["solved"] >= s.best["solved"]:        # ties: the later, longer-trained model
                s.best = dict(solved=test["solved"], seconds=round(elapsed, 2), chars=s.chars,
                              level=self.curriculum.level)
                self.best_params = self._snapshot()
            self.log(f"[{elapsed:7.1f}s] length {cfg.confirm_length}: solved {test['solved']:6.1%}"
                     f" ({s.confirm_streak} of {cfg.confirm_passes} passes in a row)")
            if s.confirm_streak < cfg.confirm_passes:
                return
            s.confirmed_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=self.curriculum.level)
        s.done = True

    def run(self, should_stop=lambda: False, on_boundary=lambda trainer: None) -> RunState:
        """Train until solved, out of budget, or ``should_stop()`` at a boundary."""
        cfg, s = self.cfg, self.state
        t0 = time.perf_counter() - s.seconds
        self._start_segment()
        try:
            while not s.done and s.chars < cfg.budget and not should_stop():
                self.update()
                if s.updates % cfg.validate_every == 0 or s.chars >= cfg.budget:
                    s.seconds = time.perf_counter() - t0
                    self.validate(s.seconds)
                    self._mark_boundary()
                    on_boundary(self)
                    self._start_segment()
        except KeyboardInterrupt:
            self.log("interrupted: keeping the last segment boundary")
            raise
        s.seconds = time.perf_counter() - t0
        if s.chars >= cfg.budget and not s.done:
            self._end_with_the_best()
        return s

    def _end_with_the_best(self) -> None:
        """Out of budget without the confirmation: the last model and the best
        tested one (``state.best``) take the same fresh test at
        ``confirm_length``; if the best one does better, the run ends with it
        (``keep_best``).  Both take the same instances, so neither is judged by
        an older, luckier score."""
        cfg, s = self.cfg, self.state
        if not (cfg.keep_best and cfg.confirm_length and s.best is not None and self.best_params is not None):
            return
        seed = int(self.rng.integers(2 ** 63))
        last = self.evaluate(cfg.confirm_length, cfg.val_instances, seed=seed)["solved"]
        last_params = self._snapshot()
        self._load(self.best_params)
        best = self.evaluate(cfg.confirm_length, cfg.val_instances, seed=seed)["solved"]
        self.log(f"out of budget: on {cfg.val_instances} fresh instances of length {cfg.confirm_length} the last model"
                 f" solves {last:6.1%}, the best tested one {best:6.1%} (complexity {s.best['level']},"
                 f" {s.best['chars']} characters, {s.best['solved']:6.1%} when tested)")
        if best > last:
            s.restored_best = dict(s.best, last_solved=last, retest_solved=best)
            self.log("ending with the best tested model")
            self._mark_boundary()
        else:
            self._load(last_params)

    def _snapshot(self) -> dict:
        """A copy of the controller's parameters."""
        return {k: v.copy() for k, v in self.controller.params.items()}

    def _load(self, params: dict) -> None:
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
