"""Q-learning end to end: the paper's loop (QTrainer) solves copy at a short
length and stops there; resuming a run gives the same outcome as never
stopping; bad configurations are refused; the options beyond the paper
(tinyalgo.runs.beyond.BeyondThePaper) act where they say."""
import numpy as np
import pytest

from tinyalgo.qtraining import RunState
from tinyalgo.runs.config import QConfig
from tinyalgo.qtraining import QTrainer
from tinyalgo.runs.beyond import BeyondThePaper


def small(**kw):
    base = dict(task="copy", units=24, seed=0, budget=600_000, validate_every=5, val_instances=20,
                test_length=20, report_lengths=(20,), confirm_length=0, dtype="float64")
    base.update(kw)
    return QConfig(**base)


@pytest.mark.slow
def test_q_learning_solves_copy_at_a_short_length_and_stops_there():
    """The paper's loop stops at the solve, even where the configuration asks a
    wrapper to train on past it (confirm_length: BeyondThePaper's)."""
    lines = []
    trainer = QTrainer(small(confirm_length=60), log=lines.append)
    state = trainer.run()
    assert state.solved_at is not None and state.done, "\n".join(lines[-15:])
    assert state.chars == state.solved_at["chars"] < trainer.cfg.budget and state.confirmed_at is None
    assert lines[-1].endswith(f"SOLVED: 20 of 20 test instances of length 20 after {state.chars} characters")
    report = trainer.final_report()
    assert report["evaluations"][0]["solved"] == 1.0


def test_the_papers_loop_refuses_options_that_act_before_the_solve():
    for kw, given in ((dict(exploration="release"), "exploration='release'"), (dict(greedy_lanes=3), "greedy_lanes=3")):
        with pytest.raises(ValueError, match=f"{given}: beyond the paper; the paper's QTrainer runs"
                                             f" exploration='constant', greedy_lanes=0: train with"
                                             f" tinyalgo.runs.beyond.BeyondThePaper"):
            QTrainer(small(**kw))


@pytest.mark.slow
def test_at_the_papers_values_the_wrapper_is_the_papers_loop():
    """BeyondThePaper with confirm_length 0 and every other option at the
    paper's value trains exactly what QTrainer trains."""
    cfg = small(budget=30_000, validate_every=3)
    paper, wrapped = QTrainer(cfg, log=lambda s: None), BeyondThePaper(cfg, log=lambda s: None)
    paper.run()
    wrapped.run()
    assert (paper.state.chars, paper.state.solved_at) == (wrapped.state.chars, wrapped.state.solved_at)
    for name, value in paper.controller.params.items():
        np.testing.assert_array_equal(wrapped.controller.params[name], value)


@pytest.mark.slow
def test_resume_continues_the_same_run():
    cfg = small(budget=30_000, validate_every=3)
    straight = QTrainer(cfg, log=lambda s: None)
    straight.run()
    first = QTrainer(cfg, log=lambda s: None)
    first.run(should_stop=lambda: first.state.updates >= 6)
    params, state = first.boundary()
    controller = type(first.controller)(first.controller.config, params={k: v.copy() for k, v in params.items()})
    resumed = QTrainer(cfg, controller=controller, state=RunState(**vars(state)), log=lambda s: None)
    resumed.run()
    assert resumed.state.chars == straight.state.chars and resumed.state.updates == straight.state.updates
    def key(history):
        return [(h["level"], h["solved"], h["chars"]) for h in history]     # not the wall-clock seconds
    assert key(resumed.curriculum.history) == key(straight.curriculum.history)
    for name in straight.controller.params:
        np.testing.assert_array_equal(resumed.controller.params[name], straight.controller.params[name])


@pytest.mark.parametrize("kw,message", [
    (dict(task="sorting"), "task must be one of copy, reverse, walk, addition, addition3, multiplication;"
                           " got 'sorting'"),
    (dict(discount="0.5"), "discount must be one of dynamic, 1, 0.99, 0.95; got '0.5'"),
    (dict(q="sarsa"), "q must be one of watkins, one-step"),
    (dict(batch=0), "batch must be at least 1; got 0"),
    (dict(exploration="greedy"), "exploration must be one of constant, release"),
    (dict(gamma=0.0), r"gamma must be in \(0, 1\]; got 0.0"),
    (dict(gamma=1.5), r"gamma must be in \(0, 1\]; got 1.5"),
    (dict(confirm_length=-1), "confirm_length must be at least 0; got -1"),
    (dict(confirm_passes=0), "confirm_passes must be at least 1"),
    (dict(solved_lr=-0.1), "solved_lr must be at least 0; got -0.1"),
    (dict(greedy_lanes=-1), r"greedy_lanes must be 0..19 \(at least one lane explores\); got -1"),
    (dict(greedy_lanes=20), r"greedy_lanes must be 0..19 \(at least one lane explores\); got 20"),
    (dict(batch=8, greedy_lanes=8), r"greedy_lanes must be 0..7"),
    (dict(controller="rnn"), "controller must be one of ff, gru, lstm; got 'rnn'"),
])
def test_bad_config(kw, message):
    with pytest.raises(ValueError, match=message):
        QConfig(**kw)


@pytest.fixture(scope="module")
def confirmed():
    """A copy run trained until length 60 passed (once) after its solve at 20, and its log."""
    lines = []
    trainer = BeyondThePaper(small(confirm_length=60, confirm_passes=1), log=lines.append)
    trainer.run()
    return trainer, lines


@pytest.mark.slow
def test_confirm_length_trains_on_past_the_papers_solve(confirmed):
    """With confirm_length the run does not stop at the paper's solve (length
    20 here) but goes on until 50 instances of the longer length pass too."""
    trainer, lines = confirmed
    state = trainer.state
    assert state.solved_at is not None and state.confirmed_at is not None, "\n".join(lines[-15:])
    assert state.confirmed_at["chars"] >= state.solved_at["chars"]
    confirms = [h["confirm_solved"] for h in trainer.curriculum.history if "confirm_solved" in h]
    assert confirms[-1] == 1.0 and all(c < 1.0 for c in confirms[:-1])
    assert trainer.evaluate(60, 50)["solved"] > 0.9


def test_the_dynamic_discount_carries_gamma():
    """gamma is the paper's gamma in gamma * V'/V (1 in the release), in both Q variants."""
    from tinyalgo import qlearning
    rng = np.random.default_rng(0)
    T, B = 6, 3
    r, q = rng.integers(0, 2, (T, B)).astype(float), rng.random((T + 1, B))
    v = np.arange(T + 1, 0, -1)[:, None] * np.ones((1, B))
    explore, term = rng.random((T + 1, B)) < 0.3, np.zeros((T, B), bool)
    got = qlearning.targets("watkins", "dynamic", r, q, v, explore, term, gamma=0.9)
    np.testing.assert_allclose(got, qlearning.watkins_targets(r, q, explore, term, gamma=0.9, v_hat=v))
    assert not np.allclose(got, qlearning.targets("watkins", "dynamic", r, q, v, explore, term))
    one_step = qlearning.targets("one-step", "dynamic", r, q, v, explore, term, gamma=0.9)
    np.testing.assert_allclose(one_step[:-1], r[:-1] / v[:-2] + 0.9 * v[1:-1] / v[:-2] * q[1:-1])


def test_exploration_schedules():
    """constant: epsilon on every training lane throughout (the paper); release:
    0 once the validation characters are all right, or >= 90% after the penalty
    switch (the Torch release under LuaJIT, docs/original-release.md#exploration)."""
    constant = BeyondThePaper(small(), log=lambda s: None)
    release = BeyondThePaper(small(exploration="release"), log=lambda s: None)
    for acc, penalty_on, expected in [(0.5, False, 0.05), (0.95, False, 0.05), (0.95, True, 0.0),
                                      (1.0, False, 0.0), (0.85, True, 0.05)]:
        for trainer in (constant, release):
            trainer.state.val_char_accuracy, trainer.state.penalty_on = acc, penalty_on
        assert constant.epsilon() == 0.05
        assert release.epsilon() == expected, (acc, penalty_on)


def explored_by_lane(monkeypatch, **kw):
    """Which lanes took an exploratory step during a few updates (B,)."""
    from tinyalgo.environment import Environment
    seen = []
    real = Environment.step

    def spy(env, actions, symbols=None, probs=None, explored=None):
        seen.append(explored.copy())
        return real(env, actions, symbols, probs, explored=explored)

    monkeypatch.setattr(Environment, "step", spy)
    trainer = BeyondThePaper(small(epsilon=0.5, **kw), log=lambda s: None)
    trainer.start_segment()
    for _ in range(5):
        trainer.update()
    return np.any(seen, axis=0)


def test_greedy_lanes_never_explore(monkeypatch):
    """greedy_lanes = 3: lanes 0-2 act greedily throughout, the others
    explore with epsilon; with 0 (the paper) every lane explores."""
    some = explored_by_lane(monkeypatch, greedy_lanes=3)
    assert not some[:3].any() and some[3:].all()
    assert explored_by_lane(monkeypatch).all()


def test_default_controller_follows_the_paper():
    assert QConfig(task="reverse").controller == "ff" and QConfig(task="walk").controller == "ff"
    assert QConfig(task="addition").controller == "gru"


@pytest.mark.slow
def test_confirm_passes_needs_that_many_passes_in_a_row():
    """With confirm_passes = 3 the run stops only after three tests at the
    confirm length passed in a row, one after each curriculum advance."""
    lines = []
    trainer = BeyondThePaper(small(confirm_length=60, confirm_passes=3), log=lines.append)
    state = trainer.run()
    assert state.confirmed_at is not None, "\n".join(lines[-15:])
    confirms = [h["confirm_solved"] for h in trainer.curriculum.history if "confirm_solved" in h]
    assert confirms[-3:] == [1.0, 1.0, 1.0] and state.confirm_streak == 3
    streak = 0
    for c in confirms[:-1]:                      # never three in a row before the end
        streak = streak + 1 if c == 1.0 else 0
        assert streak < 3


@pytest.mark.slow
def test_keep_best_ends_with_the_best_tested_model(confirmed):
    """Out of budget unconfirmed, a run whose last model is worse than the
    best one tested at the confirm length ends with the best one; if the last
    one is as good, it keeps the last one."""
    trainer, _ = confirmed
    s = trainer.state
    assert s.best["solved"] == 1.0 and s.best["chars"] == s.confirmed_at["chars"]
    good = {k: v.copy() for k, v in trainer.controller.params.items()}
    for k, v in good.items():
        np.testing.assert_array_equal(trainer.best_params[k], v)
    for v in trainer.controller.params.values():          # a model that got worse
        v *= 0.0
    trainer.at_budget_end()
    r = s.restored_best
    assert r["solved"] == 1.0 and r["last_solved"] == 0.0 and r["retest_solved"] == 1.0
    for k, v in good.items():
        np.testing.assert_array_equal(trainer.controller.params[k], v)
        np.testing.assert_array_equal(trainer.boundary()[0][k], v)        # what a checkpoint saves
    s.restored_best, s.best = None, dict(s.best, solved=0.5)   # the last model beats a best of 50%: kept
    trainer.at_budget_end()
    assert s.restored_best is None
    for k, v in good.items():
        np.testing.assert_array_equal(trainer.controller.params[k], v)


@pytest.mark.slow
def test_keep_best_compares_both_models_on_the_same_fresh_test(confirmed, monkeypatch):
    """The best model's old score (the highest of many tests) does not decide:
    a best model that is no better than the last on a fresh test is not restored,
    and the last model comes back unchanged."""
    trainer, _ = confirmed
    s = trainer.state
    last = {k: v.copy() for k, v in trainer.controller.params.items()}
    lines = []                                    # monkeypatch: the module's fixture is shared, undone afterwards
    monkeypatch.setattr(trainer, "best_params", {k: np.zeros_like(v) for k, v in last.items()})  # "100 %" once
    monkeypatch.setattr(s, "best", dict(s.best, solved=1.0))
    monkeypatch.setattr(s, "restored_best", None)
    monkeypatch.setattr(trainer, "log", lines.append)
    real_evaluate, calls = trainer.evaluate, []

    def evaluate(length, instances, **kw):   # the last model first: 80 %, below the best one's old 100 %
        row = real_evaluate(length, instances, **kw)
        calls.append(length)
        return dict(row, solved=0.8) if len(calls) == 1 else row

    monkeypatch.setattr(trainer, "evaluate", evaluate)
    trainer.at_budget_end()
    restored = s.restored_best
    assert restored is None and "the best tested one   0.0%" in lines[0], lines
    for k, v in last.items():
        np.testing.assert_array_equal(trainer.controller.params[k], v)


def learning_rates(monkeypatch, cfg, evaluate=None):
    """Run a small trainer; every SGD step's (lr, solved yet, passed at confirm_length yet).
    ``evaluate(real, length, instances, **kw)`` may stand in for the trainer's tests."""
    import tinyalgo.qtraining as qt
    used = []
    real = qt.sgd_step

    def spy(params, grads, lr, max_norm):
        used.append((lr, trainer.state.solved_at is not None, trainer.state.passed_at is not None))
        return real(params, grads, lr, max_norm)

    monkeypatch.setattr(qt, "sgd_step", spy)
    trainer = BeyondThePaper(cfg, log=lambda s: None)
    if evaluate is not None:
        real_evaluate = trainer.evaluate
        trainer.evaluate = lambda length, instances, **kw: evaluate(real_evaluate, length, instances, **kw)
    return trainer, trainer.run(), used


@pytest.mark.slow
def test_solved_lr_takes_over_once_solved(monkeypatch):
    """solved_lr: the SGD steps use lr until the paper's solve is recorded,
    solved_lr after it (the solve at 81,000 characters, then about 40 steps until the budget ends the run,
    length 60 passed once and failed since)."""
    trainer, _, used = learning_rates(monkeypatch, small(confirm_length=60, confirm_passes=3, solved_lr=0.03,
                                                         budget=100_000))
    assert trainer.state.solved_at is not None
    assert {lr for lr, solved, _ in used if not solved} == {0.1} and {lr for lr, solved, _ in used if solved} == {0.03}


@pytest.mark.slow
def test_solved_lr_after_the_first_pass(monkeypatch):
    """solved_lr_after = "pass": lr until the test at confirm_length first
    passes (recorded in state.passed_at), solved_lr after it."""
    failed = []

    def evaluate(real, length, instances, **kw):     # the first two tests at 60 fail: solved, not yet passed
        row = real(length, instances, **kw)
        if length == 60 and len(failed) < 2:
            failed.append(length)
            row = dict(row, solved=0.9)
        return row

    _, state, used = learning_rates(monkeypatch, small(confirm_length=60, confirm_passes=3, solved_lr=0.03,
                                                       solved_lr_after="pass"), evaluate)
    assert state.passed_at is not None and state.passed_at["chars"] >= state.solved_at["chars"]
    assert {lr for lr, _, passed in used if not passed} == {0.1} and {lr for lr, _, passed in used if passed} == {0.03}
    assert any(solved and not passed for _, solved, passed in used)       # solved, not yet passed: still 0.1
