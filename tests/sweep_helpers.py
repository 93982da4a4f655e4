"""Shared helpers of the sweep tests: a sweep stopped from outside after its
first save, and rows compared without their wall-clock fields."""
import contextlib

import pytest

from tinyalgo import rundir


class Stop(Exception):
    """A sweep stopped from outside (a killed worker)."""


@contextlib.contextmanager
def stopped_after_the_first_save(monkeypatch):
    """Inside: a run saves at its first segment boundary and is stopped
    there (``Stop``).  Yields the list of characters trained at each save."""
    real_save, saves = rundir.save_run, []

    def save_then_stop(out, trainer, best_saved=None):
        real_save(out, trainer, best_saved)
        saves.append(trainer.state.chars)
        raise Stop

    with monkeypatch.context() as m:
        m.setattr(rundir, "SAVE_EVERY_SECONDS", 0.0)        # a save at the first segment boundary
        m.setattr(rundir, "save_run", save_then_stop)
        with pytest.raises(Stop):
            yield saves


def without_clock(rows):
    return [{k: v for k, v in r.items() if not k.startswith("minutes")} for r in rows]
