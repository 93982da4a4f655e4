"""Record the behaviour and final parameters of the fixed-seed Q-learning runs
that tests/test_q_loop.py checks (tests/fixtures/q_runs.json and q_runs.npz).

    python tests/q_runs.py

Run it only when the loop is meant to compute something else; a change of
BLAS kernel, thread count or summation order moves the parameters by far
less than the test's tolerances and changes no behaviour."""
import json
import pathlib
import platform
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).parent / "fixtures"
sys.path.insert(0, str(HERE.parent.parent))

import tinyalgo  # noqa: E402, F401
from tinyalgo.runs.beyond import BeyondThePaper  # noqa: E402
from tinyalgo.runs.config import QConfig  # noqa: E402


def behaviour(trainer) -> dict:
    """What a run did, in numbers no BLAS kernel changes."""
    s = trainer.state
    return dict(chars=s.chars, updates=s.updates, solved_at=s.solved_at and s.solved_at["chars"],
                levels=[h["level"] for h in trainer.curriculum.history], best=s.best and s.best["chars"],
                restored=s.restored_best is not None, passed=s.passed_at and s.passed_at["chars"])


def processor() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()


def main():
    fixture = json.loads((HERE / "q_runs.json").read_text(encoding="utf-8"))
    runs, params = {}, {}
    for case, options in fixture["cases"].items():
        trainer = BeyondThePaper(QConfig(**options), log=lambda line: None)
        trainer.run()
        runs[case] = behaviour(trainer)
        params.update({f"{case}/{name}": value for name, value in trainer.controller.params.items()})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    fixture["made_by"] = (f"tests/q_runs.py at commit {commit} on {processor()},"
                          f" NumPy {np.__version__}")
    fixture["runs"] = runs
    (HERE / "q_runs.json").write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
    np.savez_compressed(HERE / "q_runs.npz", **params)


if __name__ == "__main__":
    main()
