"""Shared helpers of the sweep tests: tiny appendix sweeps, a sweep stopped
from outside after its first save, and rows compared without their
wall-clock fields."""
import contextlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from tinyalgo.runs import rundir
from tinyalgo.experiments import appendix

# tiny runs: copy solves the test at length 10 in about 11,000 characters (a second)
SMALL = dict(validate_every=3, val_instances=10, test_length=10, report_lengths=(10,))


def run(name, out, columns, seeds=(0,), budget=15_000, tasks=("copy",), summarize=False):
    """A tiny Appendix B or C sweep (``columns``: bases or rewards) in this process; its table."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return appendix.run_appendix(name, list(tasks), list(columns), list(seeds), budget, str(out), SMALL, "cmd",
                                     summarize=summarize, executor=pool, log=lambda s: None)


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
