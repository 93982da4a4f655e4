"""A fast, quiet start: ``tinyalgo --help``, every subcommand's help and a
usage error load no matplotlib (the drawing commands import it when they
draw), so nothing warns before the error line, even with a matplotlib
configuration folder that cannot be written.  (The CPU time is measured in
benchmarks/README.md, not here.)"""
import os
import subprocess
import sys

import pytest

PROBE = r"""
import sys
from tinyalgo.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "matplotlib")
print("MATPLOTLIB", len(loaded), file=sys.stderr)
sys.exit(code)
"""


def probe(argv, **env):
    return subprocess.run([sys.executable, "-c", PROBE] + argv, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **env))


SUBCOMMANDS = ["train", "evaluate", "show", "trace", "table2", "automaton", "verify", "experiment", "assignment",
               "notebooks"]


@pytest.mark.parametrize("argv", [["--help"]] + [[name, "--help"] for name in SUBCOMMANDS],
                         ids=lambda a: " ".join(a))
def test_help_loads_no_matplotlib(argv):
    run = probe(argv)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip().splitlines()[-1] == "MATPLOTLIB 0"


@pytest.mark.parametrize("argv", [["train", "--units", "0"], ["automaton", "nothing.npz", "--out", "x"],
                                  ["experiment", "figure3", "--budget", "-1"], ["trace", "x.npz", "--png", "t.xyz"]],
                         ids=lambda a: " ".join(a))
def test_a_usage_error_is_one_line_without_matplotlib_or_warnings(argv, tmp_path):
    locked = tmp_path / "mpl"
    locked.mkdir(mode=0o500)
    run = probe(argv, MPLCONFIGDIR=str(locked))
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and lines[-1] == "MATPLOTLIB 0", run.stderr
    assert len(lines) == 2 and "error" in lines[0], run.stderr       # the error line, then the probe's
