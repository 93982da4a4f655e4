"""tinyalgo never switches matplotlib's global backend: importing any of its
modules and drawing its pictures leaves ``rcParams["backend"]`` as it was,
never calls ``matplotlib.use`` and never loads pyplot (a notebook's own
``plt.show()`` keeps working), and every drawing is a ``tinyalgo.inspection.figure.Figure``
that shows itself as a PNG."""
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.environment import Environment
from tinyalgo.inspection.figure import Figure
from tinyalgo.inspection.trace import trace_instance
from tinyalgo.inspection.trace_plots import trace_figure

ROOT = pathlib.Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Run in a fresh interpreter without MPLBACKEND: matplotlib.use is replaced by a recorder before tinyalgo
# loads; the backend is read raw (dict access: reading rcParams["backend"] would resolve it).
PROBE = r"""
import importlib, json, os, pkgutil, sys
import numpy as np
import matplotlib

calls = []
matplotlib.use = lambda *args, **kwargs: calls.append(repr(args))
raw = lambda: repr(dict.__getitem__(matplotlib.rcParams, "backend"))
before = raw()

import tinyalgo
imported, optional = [], []
for info in pkgutil.walk_packages(tinyalgo.__path__, "tinyalgo."):
    if info.name == "tinyalgo.__main__" or ".grading" in info.name:
        continue                                        # runs the CLI; pytest files of the assignments
    try:
        importlib.import_module(info.name)
        imported.append(info.name)
    except ImportError as err:                          # an extra that is not installed (gymnasium, distributed),
        missing = err if isinstance(err, ModuleNotFoundError) else err.__cause__    # perhaps said in a clearer one
        if not isinstance(missing, ModuleNotFoundError) or (missing.name or "tinyalgo").split(".")[0] == "tinyalgo":
            raise
        optional.append(info.name)
after_imports = raw()

from tinyalgo.automata import extract
from tinyalgo.automata.draw import draw_machine
from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.environment import Environment
from tinyalgo.experiments.figure3 import plot_figure3
from tinyalgo.inspection.trace import trace_instance
from tinyalgo.inspection.trace_plots import write_trace_png

out = sys.argv[1]
controller = Controller(ControllerConfig.for_environment(Environment("reverse", batch_size=1), "ff", 8),
                        rng=np.random.default_rng(0))
write_trace_png(trace_instance(controller, "reverse", 7, seed=0), os.path.join(out, "trace.png"))
draw_machine(extract(controller, "reverse", complexities=[3, 5], instances=4)["reduced"], os.path.join(out, "m.png"))
rows = [dict(task="copy", controller=c, seed=0, complexity=k, solved=1.0)
        for c in ("ff", "gru", "lstm") for k in (10, 100)]
plot_figure3(rows, os.path.join(out, "f3.png"))
print(json.dumps(dict(before=before, after_imports=after_imports, after_drawing=raw(), calls=calls,
                      pyplot="matplotlib.pyplot" in sys.modules, imported=imported, optional=optional)))
"""


@pytest.mark.slow
def test_importing_and_drawing_leaves_the_backend_alone(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["calls"] == [], f"matplotlib.use was called: {got['calls']}"
    assert got["before"] == got["after_imports"] == got["after_drawing"]
    assert not got["pyplot"], "a tinyalgo module loaded matplotlib.pyplot"
    for name in ("tinyalgo.inspection.trace_plots", "tinyalgo.automata.draw", "tinyalgo.experiments.figure3",
                 "tinyalgo.experiments.table2", "tinyalgo.inspection.figure"):
        assert name in got["imported"]
    for name in ("trace.png", "m.png", "f3.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG_MAGIC


def test_no_module_calls_matplotlib_use():
    offenders = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tinyalgo").rglob("*.py"))
                 if re.search(r"\bmatplotlib\s*\.\s*use\s*\(|from\s+matplotlib\s+import\s+(use|pyplot)\b"
                              r"|import\s+matplotlib\.pyplot", p.read_text(encoding="utf-8"))]
    assert offenders == [], f"these modules switch the backend or use pyplot: {offenders}"


def test_a_drawing_is_a_figure_that_shows_itself_as_png():
    controller = Controller(ControllerConfig.for_environment(Environment("reverse", batch_size=1), "ff", 8),
                            rng=np.random.default_rng(0))
    fig = trace_figure(trace_instance(controller, "reverse", 7, seed=0), "t")
    assert isinstance(fig, Figure)
    png = fig._repr_png_()                 # what Jupyter shows for a cell's last expression or display(fig)
    assert png[:8] == PNG_MAGIC and len(png) > 10_000
