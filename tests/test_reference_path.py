"""Training on the reference path (``reference=True``: the taught layer
pairs and the BPTT loop over named caches) solves small tasks, Q-learning
and supervised, and resumes on the same path."""
import numpy as np

from tinyalgo import controller as controller_module
from tinyalgo.cli import main
from tinyalgo.qtraining import QTrainer
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.rundir import resume_run
from tinyalgo.runs.config import SupervisedConfig
from tinyalgo.supervised import train_supervised


def counting(monkeypatch, name):
    """Count the calls of the taught function ``name`` made through tinyalgo.controller."""
    calls, taught = [], getattr(controller_module, name)

    def spy(*args):
        calls.append(1)
        return taught(*args)

    monkeypatch.setattr(controller_module, name, spy)
    return calls


def test_q_learning_on_the_reference_path_solves_copy(monkeypatch):
    calls = counting(monkeypatch, "gru_step_backward")
    cfg = QConfig(task="copy", units=24, seed=0, budget=300_000, validate_every=5, val_instances=20,
                  test_length=20, confirm_length=0, reference=True, threads=1)
    lines = []
    trainer = QTrainer(cfg, log=lines.append)
    state = trainer.run()
    assert trainer.controller.reference
    assert state.solved_at is not None, "\n".join(lines[-10:])
    assert len(calls) == state.chars // cfg.batch      # one taught GRU backward per training step


def test_supervised_on_the_reference_path_solves_reverse(monkeypatch):
    calls = counting(monkeypatch, "affine_backward")
    cfg = SupervisedConfig(task="reverse", controller="ff", units=32, seed=0, target=60, budget=300_000,
                           reference=True)
    controller, report = train_supervised(cfg, log=lambda line: None)
    assert controller.reference and calls
    assert report["solved_target"], report["history"][-3:]


def test_train_reference_command_resumes_on_the_reference_path(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main(["train", "--task", "copy", "--reference", "--units", "16", "--budget", "2000",
                 "--threads", "1", "--out", out, "--confirm-length", "0"]) == 0
    assert main(["train", "--resume", "--out", out, "--budget", "4000"]) == 0
    trainer = resume_run(out, log=lambda line: None)
    assert trainer.cfg.reference and trainer.controller.reference
    assert np.isfinite(trainer.controller.params["q.w"]).all()
