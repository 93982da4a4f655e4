"""The options of a Q-learning run beyond the paper, as the hooks the paper's
loop calls (``tinyalgo.qtraining.QTrainer``); ``QConfig.beyond_the_paper()``
makes them.  At the paper's values each hook does what the paper does.

=====================  ===============================  ==========================================
hook                   the paper                        beyond it (the options)
=====================  ===============================  ==========================================
``epsilon``            0.05 on every training lane      ``exploration="release"``: 0 once the
                                                        validation characters are right (the
                                                        Torch release); ``greedy_lanes`` never
                                                        explore (``q_update``)
``learning_rate``      ``lr`` throughout                ``solved_lr`` from the solve (or the first
                                                        pass at ``confirm_length``) on
``done_after_advance`` stop at the solve (length 100)   ``confirm_length``: train on until that
                                                        length passes ``confirm_passes`` tests in
                                                        a row, remembering the best tested model
``out_of_budget``      nothing                          ``keep_best``: end with the best tested
                                                        model if it beats the last on a fresh test
=====================  ===============================  ==========================================
"""
from __future__ import annotations


class BeyondThePaper:
    """The hooks of one run's configuration ``cfg`` (a ``QConfig``)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def epsilon(self, state) -> float:
        """Exploration rate on the training lanes (paper section 6: epsilon-greedy).

        "constant" (default): ``cfg.epsilon`` (0.05) throughout.  "release":
        the original release's schedule (docs/original-release.md#exploration):
        0 once the validation characters are all right, or >= 90% right after
        the penalty switch."""
        if self.cfg.exploration == "release":
            acc = state.val_char_accuracy
            if acc >= 1.0 or (state.penalty_on and acc >= 0.9):
                return 0.0
        return self.cfg.epsilon

    def learning_rate(self, state) -> float:
        """``lr``, or ``solved_lr`` once the run reached the point it names."""
        cfg = self.cfg
        reached = (state.solved_at if cfg.solved_lr_after == "solve" else state.passed_at) is not None
        return cfg.solved_lr if cfg.solved_lr and reached else cfg.lr

    def done_after_advance(self, trainer, elapsed: float) -> bool:
        """After an advance of a solved run: done at once (the paper), or with
        ``confirm_length`` once 50 fresh instances of that length pass
        ``confirm_passes`` times in a row; every test there is a candidate for
        the best tested model."""
        cfg, s = self.cfg, trainer.state
        if not cfg.confirm_length:
            return True
        test = trainer.evaluate(cfg.confirm_length, cfg.val_instances)
        trainer.curriculum.history[-1]["confirm_solved"] = test["solved"]
        s.confirm_streak = s.confirm_streak + 1 if test["solved"] == 1.0 else 0
        level = trainer.curriculum.level
        if s.confirm_streak and s.passed_at is None:
            s.passed_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=level)
        if s.best is None or test["solved"] >= s.best["solved"]:        # ties: the later, longer-trained model
            s.best = dict(solved=test["solved"], seconds=round(elapsed, 2), chars=s.chars, level=level)
            trainer.best_params = trainer.snapshot()
        trainer.log(f"[{elapsed:7.1f}s] length {cfg.confirm_length}: solved {test['solved']:6.1%}"
                    f" ({s.confirm_streak} of {cfg.confirm_passes} passes in a row)")
        if s.confirm_streak < cfg.confirm_passes:
            return False
        s.confirmed_at = dict(seconds=round(elapsed, 2), chars=s.chars, level=level)
        return True

    def out_of_budget(self, trainer) -> None:
        """Out of budget without the confirmation: the last model and the best
        tested one (``state.best``) take the same fresh test at
        ``confirm_length``; if the best one does better, the run ends with it
        (``keep_best``).  Both take the same instances, so neither is judged by
        an older, luckier score."""
        cfg, s = self.cfg, trainer.state
        if not (cfg.keep_best and cfg.confirm_length and s.best is not None and trainer.best_params is not None):
            return
        seed = int(trainer.rng.integers(2 ** 63))
        last = trainer.evaluate(cfg.confirm_length, cfg.val_instances, seed=seed)["solved"]
        last_params = trainer.snapshot()
        trainer.load(trainer.best_params)
        best = trainer.evaluate(cfg.confirm_length, cfg.val_instances, seed=seed)["solved"]
        trainer.log(f"out of budget: on {cfg.val_instances} fresh instances of length {cfg.confirm_length} the last"
                    f" model solves {last:6.1%}, the best tested one {best:6.1%} (complexity {s.best['level']},"
                    f" {s.best['chars']} characters, {s.best['solved']:6.1%} when tested)")
        if best > last:
            s.restored_best = dict(s.best, last_solved=last, retest_solved=best)
            trainer.log("ending with the best tested model")
            trainer.mark_boundary()
        else:
            trainer.load(last_params)
