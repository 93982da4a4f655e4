"""Grading "curriculum": Curriculum.record (paper section 5: start at 6, add 4 once validation
is 100 % correct) against the reference, on options and score sequences drawn at grading time."""
from tinyalgo.curriculum import Curriculum


def _check(g, options: dict, scores: list):
    c = Curriculum(**options)
    steps = []
    for k, s in enumerate(scores):
        advanced = c.record(s, step=k)
        steps.append({"advanced": advanced, "level": c.level, "run": c.run})
    got = g.call("curriculum", options=options, scores=scores)
    what = f"Curriculum({', '.join(f'{k}={v}' for k, v in options.items())}) on scores {scores}"
    if not isinstance(got, dict) or not isinstance(got.get("steps"), list) or len(got["steps"]) != len(steps):
        raise AssertionError(f"{what}: the worker's answer is malformed")
    for k, (mine, theirs) in enumerate(zip(got["steps"], steps)):
        if mine != theirs:
            raise AssertionError(f"{what}: after record({scores[k]}) (call {k + 1}) got returned"
                                 f" {mine.get('advanced')!r}, level {mine.get('level')}, run {mine.get('run')};"
                                 f" expected {theirs['advanced']!r}, level {theirs['level']}, run {theirs['run']}")
    if got.get("history") != c.history:
        raise AssertionError(f"{what}: history {got.get('history')}, expected {c.history} (the level before"
                             " the advance, with the info given to record)")


def _scores(g, n, near=1.0):
    return [float(v) for v in g.rng.choice([near, 1.0, 0.98, 0.5, 0.0, 0.9], size=n)]


def test_curriculum_advances_after_a_perfect_validation(g):
    _check(g, {}, [0.9, 1.0, 1.0])
    _check(g, {}, _scores(g, int(g.rng.integers(4, 9))))


def test_curriculum_streak(g):
    _check(g, {"streak": 2}, [1.0, 0.98, 1.0, 1.0])
    _check(g, {"streak": int(g.rng.integers(2, 4))}, _scores(g, int(g.rng.integers(6, 12))))


def test_curriculum_threshold(g):
    t = float(g.rng.choice([0.8, 0.9, 0.95]))
    _check(g, {"threshold": t, "increment": int(g.rng.integers(1, 6)), "start": int(g.rng.integers(1, 8))},
           _scores(g, int(g.rng.integers(4, 9)), near=t))


def test_curriculum_history(g):
    _check(g, {"start": int(g.rng.integers(1, 8))}, _scores(g, int(g.rng.integers(3, 7))))
