"""A Q-learning run with the options beyond the paper: ``BeyondThePaper``
wraps the paper's loop (``tinyalgo.qtraining.QTrainer``, which stops at the
solve) by overriding its five hooks.  At the paper's values each hook does
what the paper does; ``tinyalgo train``, the sweeps and resumed runs use it.

=====================  ===============================  ==========================================
hook                   the paper (``QTrainer``)         beyond it (the options of ``QConfig``)
=====================  ===============================  ==========================================
``epsilon``            0.05 on every training lane      ``exploration="release"``: 0 once the
                                                        validation characters are right (the
                                                        Torch release)
``greedy_lanes``       none                             ``greedy_lanes``: that many lanes never
                                                        explore
``learning_rate``      ``lr`` throughout                ``solved_lr`` from the solve (or the first
                                                        pass at ``confirm_length``) on
``after_solve``        stop at the solve (length 100)   ``confirm_length``: train on until that
                                                        length passes ``confirm_passes`` tests in
                                                        a row, remembering the best tested model
``at_budget_end``      end with the last model          ``keep_best``: end with the best tested
                                                        model if it beats the last on a fresh test
=====================  ===============================  ==========================================

So a run of the default options (``confirm_length`` 1000) trains on past the
paper's solve; ``confirm_length=0`` stops at it, as the paper.
"""
from __future__ import annotations

from tinyalgo.qtraining import QTrainer


class BeyondThePaper(QTrainer):
    """The paper's Q-learning run (``QTrainer``) with the options beyond the
    paper of its ``cfg`` (a ``QConfig``).  ``best_params``: the parameters of
    ``state.best`` (a resumed run loads them from its files)."""

    def __init__(self, cfg, controller=None, state=None, log=print):
        super().__init__(cfg, controller=controller, state=state, log=log)
        self.best_params = None

    def epsilon(self) -> float:
        """Exploration rate on the training lanes (paper section 6: epsilon-greedy).

        "constant" (default): ``cfg.epsilon`` (0.05) throughout.  "release":
        the original release's schedule (docs/original-release.md#exploration):
        0 once the validation characters are all right, or >= 90% right after
        the penalty switch."""
        cfg, state = self.cfg, self.state
        if cfg.exploration == "release":
            acc = state.val_char_accuracy
            if acc >= 1.0 or (state.penalty_on and acc >= 0.9):
                return 0.0
        return cfg.epsilon

    def greedy_lanes(self) -> int:
        """``cfg.greedy_lanes`` of the training lanes never explore (``q_update``)."""
        return self.cfg.greedy_lanes

    def learning_rate(self) -> float:
        """``lr``, or ``solved_lr`` once the run reached the point it names."""
        cfg, state = self.cfg, self.state
        reached = (state.solved_at if cfg.solved_lr_after == "solve" else state.passed_at) is not None
        return cfg.solved_lr if cfg.solved_lr and reached else cfg.lr

    def after_solve(self, elapsed: float) -> bool:
        """After an advance of a solved run: done at once (the paper), or with
        ``confirm_length`` once 50 fresh instances of that length pass
        ``confirm_passes`` times in a row; every test there is a candidate for
        the best tested model."""
        cfg, s = self.cfg, self.state
        if not cfg.confirm_length:
            return True
        test = self.evaluate(cfg.confirm_length, cfg.val_instances)
        self.curriculum.history[-1]["confirm_solved"] = test["solved"]
        s.confirm_streak = s.confirm_streak + 1 if test["solved"] == 1.0 else 0
        level = self.curriculum.level
        if s.confirm_streak and s.passed_at is None:
            s.passed_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=level)
        if s.best is None or test["solved"] >= s.best["solved"]:        # ties: the later, longer-trained model
            s.best = dict(solved=test["solved"], seconds=round(elapsed, 2), chars=s.chars, level=level)
            self.best_params = self.snapshot()
        self.log(f"[{elapsed:7.1f}s] length {cfg.confirm_length}: solved {test['solved']:6.1%}"
                 f" ({s.confirm_streak} of {cfg.confirm_passes} passes in a row)")
        if s.confirm_streak < cfg.confirm_passes:
            return False
        s.confirmed_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=level)
        return True

    def at_budget_end(self) -> None:
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
        last_params = self.snapshot()
        self.load(self.best_params)
        best = self.evaluate(cfg.confirm_length, cfg.val_instances, seed=seed)["solved"]
        self.log(f"out of budget: on {cfg.val_instances} fresh instances of length {cfg.confirm_length} the last"
                 f" model solves {last:6.1%}, the best tested one {best:6.1%} (complexity {s.best['level']},"
                 f" {s.best['chars']} characters, {s.best['solved']:6.1%} when tested)")
        if best > last:
            s.restored_best = dict(s.best, last_solved=last, retest_solved=best)
            self.log("ending with the best tested model")
            self.mark_boundary()
        else:
            self.load(last_params)
