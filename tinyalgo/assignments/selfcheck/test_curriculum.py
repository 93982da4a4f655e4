"""Assignment "curriculum": Curriculum.record, the paper's curriculum rule
(section 5: start at 6, add 4 once validation is 100% correct; tutorial 04)."""
from tinyalgo.curriculum import Curriculum


def test_curriculum_advances_after_a_perfect_validation():
    c = Curriculum()
    assert c.record(0.9) is False and c.level == 6, f"90% solved must not advance: level {c.level}, expected 6"
    assert c.record(1.0) is True and c.level == 10, f"100% solved must add 4: level {c.level}, expected 10"
    assert c.record(1.0) is True and c.level == 14, f"a second perfect validation adds 4 again: level {c.level}"


def test_curriculum_streak():
    c = Curriculum(streak=2)
    got = [c.record(s) for s in (1.0, 0.98, 1.0, 1.0)]
    assert got == [False, False, False, True], (f"streak 2: a failure restarts the count; "
                                                f"got advances {got}, expected [False, False, False, True]")
    assert c.level == 10 and c.run == 0, f"after the advance: level {c.level}, run {c.run}; expected 10 and 0"


def test_curriculum_threshold():
    c = Curriculum(threshold=0.9, increment=2, start=3)
    assert c.record(0.85) is False and c.level == 3, f"0.85 < threshold 0.9: level {c.level}, expected 3"
    assert c.record(0.95) is True and c.level == 5, f"0.95 >= threshold 0.9 adds 2: level {c.level}, expected 5"


def test_curriculum_history():
    c = Curriculum()
    c.record(0.5, step=3)
    c.record(1.0, step=5)
    expected = [{"level": 6, "solved": 0.5, "advanced": False, "step": 3},
                {"level": 6, "solved": 1.0, "advanced": True, "step": 5}]
    assert c.history == expected, f"history: got {c.history}, expected {expected} (the level before the advance)"
