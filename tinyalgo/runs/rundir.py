"""A Q-learning run on disk: its directory holds ``checkpoint.npz`` (the
parameters and ``RunState`` at the last saved segment boundary, with the
run's ``QConfig``) and ``best.npz`` (the best model tested at
``confirm_length``, for ``keep_best``).  ``tinyalgo train`` and the Table 1
sweeps save and resume runs with these two functions; a run resumed from its
last boundary continues exactly as if it had never stopped (``QTrainer``).
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import asdict

try:
    import fcntl
except ImportError:                       # no POSIX locks (Windows): ``held`` holds nothing
    fcntl = None

from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
from tinyalgo.controller import Controller
from tinyalgo.qtraining import RunState
from tinyalgo.runs.config import QConfig
from tinyalgo.qtraining import QTrainer
from tinyalgo.runs.beyond import BeyondThePaper

SAVE_EVERY_SECONDS = 30.0


def checkpoint_path(out: str) -> str:
    return os.path.join(out, "checkpoint.npz")


def best_path(out: str) -> str:
    return os.path.join(out, "best.npz")


class RunHeld(ValueError):
    """A run directory that another process is training."""


def say(line: str) -> None:
    print(line, flush=True)


@contextlib.contextmanager
def held(out: str, wait: bool = True, log=say):
    """Hold run directory ``out`` (made if missing; nothing is written in it)
    while the block runs.  A process that asks for a directory another one
    holds waits until it is let go (``wait``: two sweeps sharing runs never
    train one run twice), or gets ``RunHeld``.  An advisory lock on the
    directory, let go when its process ends, even killed.  Where the system or
    the file system has no such locks (Windows, some network file systems),
    the block runs unprotected, after a warning through ``log``."""
    os.makedirs(out, exist_ok=True)
    if fcntl is None:
        yield
        return
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise RunHeld(f"{out}: another process is training this run; wait for it to end") from None
            log(f"{out}: another process is training this run; waiting for it")
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as err:
            log(f"{out}: cannot lock the run directory ({err.strerror}); two processes could train it at once")
        yield
    finally:
        os.close(fd)                      # closing the only descriptor lets the lock go


def saved_run(extra: dict, **changes) -> tuple:
    """(QConfig, RunState) of a Q-learning checkpoint's ``extra``, the config
    read with ``QConfig.from_saved`` (runs saved before an option existed
    come back as they were) and with ``changes`` applied."""
    return QConfig.from_saved({**extra["config"], **changes}), RunState(**extra["run"])


def resume_run(out: str, log=print, budget: int | None = None) -> BeyondThePaper:
    """The run saved in ``out``, ready to ``run()`` on (with a new ``budget``
    if given); its
    config is read with ``QConfig.from_saved``, so runs saved before an
    option existed resume as they were."""
    ckpt = checkpoint_path(out)
    controller, extra = load_checkpoint(ckpt)
    if extra.get("mode") != "qlearning":
        raise ValueError(f"{ckpt} is not a Q-learning run (mode {extra.get('mode')!r})")
    missing = [key for key in ("config", "run") if not isinstance(extra.get(key), dict)]
    if missing:
        raise ValueError(f"{ckpt} has no {' and no '.join(f'extra.{key}' for key in missing)} (the run's"
                         f" {' and '.join('configuration' if k == 'config' else 'state' for k in missing)}):"
                         f" it cannot be resumed; evaluate it, or train a new run without --resume")
    changes = {} if budget is None else {"budget": budget}
    cfg, state = saved_run(extra, **changes)
    trainer = BeyondThePaper(cfg, controller=controller, state=state, log=log)
    if state.best is not None:
        if os.path.exists(best_path(out)):
            best_model, best_extra = load_checkpoint(best_path(out))
            trainer.best_params, state.best = best_model.params, best_extra.get("best", state.best)
        else:
            log(f"{best_path(out)} is missing: the run forgets its best tested model")
            state.best = None
    return trainer


class RunSaver:
    """``on_boundary`` for ``QTrainer.run``: saves the run to ``out`` at a
    segment boundary once ``every`` seconds have passed since the last save
    (always with ``force=True``)."""

    def __init__(self, out: str, trainer: QTrainer, every: float | None = None):
        self.out, self.every = out, SAVE_EVERY_SECONDS if every is None else every
        self.last_save, self.best_saved = time.perf_counter(), getattr(trainer, "best_params", None)

    def __call__(self, trainer: QTrainer, force: bool = False) -> None:
        if force or time.perf_counter() - self.last_save >= self.every:
            save_run(self.out, trainer, self.best_saved)
            self.best_saved, self.last_save = getattr(trainer, "best_params", None), time.perf_counter()


def save_run(out: str, trainer: QTrainer, best_saved=None) -> None:
    """Write the run's last segment boundary to ``out``; ``best.npz`` first,
    unless ``best_saved`` is already the best model (the run state names it)."""
    params, state = trainer.boundary()
    config = trainer.controller.config
    best_params = getattr(trainer, "best_params", None)          # a BeyondThePaper run's best tested model
    if best_params is not None and best_params is not best_saved:
        save_checkpoint(best_path(out), Controller(config, params=best_params),
                        dict(mode="qlearning-best", config=asdict(trainer.cfg), best=trainer.state.best))
    save_checkpoint(checkpoint_path(out), Controller(config, params=params),
                    dict(mode="qlearning", config=asdict(trainer.cfg), run=asdict(state)))
