"""The tutorials.  With any function an assignment asks for made wrong, the
tutorial that teaches it fails on the ``assert`` that states what it computes.
On a student's copy of every assignment (``tinyalgo assignment make``) each
runs to its end as a plain script in fast mode: a cell that needs a function
still stubbed says which one and which assignment
(``tinyalgo.assignments.tutorial.skip_if_stub``), and every assignment is named
by the tutorial that teaches it.  A solution copy is the package as it is, so a
tutorial's run there is its run on the package: every cell runs, every ``assert`` holds and the figures are
written; in a Jupyter kernel, as the tutorial's notebook with its figures
inline, when the ``notebooks`` extra is installed, otherwise as a plain
script.  Tutorial 02's "your turn" teaches before and after the student's
work."""
import contextlib
import importlib
import importlib.util
import inspect
import json
import os
import pathlib
import re
import runpy
import subprocess
import sys
import textwrap
import time
import traceback
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tinyalgo.assignments import tutorial
from tinyalgo.assignments.make import make
from tinyalgo.assignments.notebook import notebook_path
from tinyalgo.assignments.registry import ASSIGNMENTS
from tinyalgo.assignments.tutorial import skip_if_stub
from tinyalgo.tasks.base import DOWN, UP

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parent.parent
TUTORIALS = sorted(ROOT.joinpath("tutorials").glob("[0-9]*.py"))
FIGURES = {"04": ["figure3_small.png", "table2_small.png"], "06": ["reverse_trace.png", "reverse_machine.png"]}
STUB = r"(\S+), still a stub in your copy \(assignment (\w+)\)"
NEEDS = re.compile(r"this cell needs " + STUB)
NEEDS_RESULT = re.compile(r"this cell needs `(\w+)`, which a skipped cell above did not make: it needs (.+); "
                          r"write it and run the tutorial again")


def number(path) -> str:
    return pathlib.Path(path).name[:2]


def functions_of(assignment) -> set:
    """The functions of ``assignment`` as the messages name them (module without ``tinyalgo.``)."""
    return {f"{f.module[len('tinyalgo.'):]}.{f.qualname}" for f in ASSIGNMENTS[assignment].functions}


# ------------------------------------------------------------------ the package
def test_every_assignment_names_a_tutorial_that_exists():
    numbers = sorted(number(p) for p in TUTORIALS)
    assert numbers == sorted(set(numbers)), "two tutorials share a number"
    for a in ASSIGNMENTS.values():
        assert a.tutorial in numbers, f"assignment {a.name} says 'see tutorial {a.tutorial}': there is none"


# ------------------------------------------------------------------ the asserts guard what they teach
# A wrong version of every function an assignment asks for (a mistake a student could make), made from the
# right one, and the start of the tutorial's assert that must catch it.
def swapped_up_and_down(zigzag):
    def wrong(self, lengths, reads):
        table = zigzag(self, lengths, reads)
        down, up = self.action(DOWN, 0), self.action(UP, 0)
        return np.where(table == down, up, np.where(table == up, down, table))
    return wrong


def scaled(index, factor):
    """Output ``index`` of a function returning a tuple (None: its only output) times ``factor``."""
    def make(right):
        def wrong(*args, **kwargs):
            out = right(*args, **kwargs)
            if index is None:
                return out * factor
            return tuple(o * factor if i == index else o for i, o in enumerate(out))
        return wrong
    return make


def without_the_softmax_term(right):
    return lambda dlogp, cache: dlogp


def without_the_state_gradient(step_backward):
    def wrong(self, *args, **kwargs):
        grads, dstate = step_backward(self, *args, **kwargs)
        return grads, [tuple(0 * d for d in layer) for layer in dstate]
    return wrong


def with_zero_grads(method):
    """A method returning (grads dict, ...) or a grads dict, with every gradient zero."""
    def wrong(*args, **kwargs):
        out = method(*args, **kwargs)
        if isinstance(out, dict):
            return {k: 0 * v for k, v in out.items()}
        return ({k: 0 * v for k, v in out[0].items()},) + tuple(out[1:])
    return wrong


def with_zero_grads_after(index):
    """A function returning a tuple whose output ``index`` is a grads dict, with every gradient zero."""
    def make(right):
        def wrong(*args, **kwargs):
            out = right(*args, **kwargs)
            return tuple({k: 0 * v for k, v in o.items()} if i == index else o for i, o in enumerate(out))
        return wrong
    return make


def without_the_pre_activations(method):
    """``cores_state_backward`` with the gradients on the pre-activations zero."""
    def wrong(*args, **kwargs):
        dpre, dstate = method(*args, **kwargs)
        return [0 * d for d in dpre], dstate
    return wrong


def without_the_barrier(backward):
    return lambda ctrl, caches, *args, **kw: backward(ctrl, [c._replace(keep=None) for c in caches], *args, **kw)


def advancing_on_any_score(record):
    def wrong(self, solved_fraction, **info):
        advanced = record(self, 1.0, **info)
        self.history[-1]["solved"] = float(solved_fraction)
        return advanced
    return wrong


def with_argument(name, value):
    """The function with its argument ``name`` replaced by ``value(argument)``."""
    def make(right):
        def wrong(*args, **kwargs):
            bound = inspect.signature(right).bind(*args, **kwargs)
            bound.arguments[name] = value(bound.arguments[name])
            return right(*bound.args, **bound.kwargs)
        return wrong
    return make


def splitting_every_state(minimise):
    return lambda machine: (machine, np.arange(machine.n_states))


BREAKS = {
    "tinyalgo.tasks.arithmetic._ColumnArithmetic._zigzag": (swapped_up_and_down, "assert truth == "),
    "tinyalgo.layers.affine_backward": (scaled(1, 2.0), 'assert max(rep["errors"].values()) < 1e-7'),
    "tinyalgo.layers.tanh_backward": (scaled(None, 0.5), 'assert max(rep["errors"].values()) < 1e-7'),
    "tinyalgo.layers.log_softmax_backward": (without_the_softmax_term, 'assert max(rep["errors"].values()) < 1e-7'),
    "tinyalgo.layers.nll_loss": (scaled(1, -1.0), "assert abs(nll - 1.386294) < 1e-6"),
    "tinyalgo.cores.gru_step_backward": (scaled(1, 0.0), 'assert max(report["errors"].values()) < 1e-6'),
    "tinyalgo.cores.lstm_step_backward": (scaled(2, 0.0), 'assert max(lstm_report["errors"].values()) < 1e-6'),
    "tinyalgo.controller.Controller.step_backward": (without_the_state_gradient,
                                                     "assert gap < 1e-10 and np.allclose(dstate[0][0]"),
    "tinyalgo.cores.gru_state_backward": (scaled(0, 0.0), 'assert max(report["errors"].values()) < 1e-6'),
    "tinyalgo.cores.gru_weights_backward": (with_zero_grads_after(1), 'assert max(report["errors"].values()) < 1e-6'),
    "tinyalgo.cores.lstm_state_backward": (scaled(0, 0.0), 'assert max(lstm_report["errors"].values()) < 1e-6'),
    "tinyalgo.cores.lstm_weights_backward": (with_zero_grads_after(1),
                                             'assert max(lstm_report["errors"].values()) < 1e-6'),
    "tinyalgo.controller.Controller.heads_backward": (scaled(1, 0.0), 'assert max(report["errors"].values()) < 1e-5'),
    "tinyalgo.controller.Controller.extra_backward": (with_zero_grads, 'assert max(report["errors"].values()) < 1e-5'),
    "tinyalgo.controller.Controller.cores_state_backward": (without_the_pre_activations,
                                                            'assert max(report["errors"].values()) < 1e-5'),
    "tinyalgo.controller.Controller.cores_weights_backward": (with_zero_grads,
                                                              'assert max(report["errors"].values()) < 1e-5'),
    "tinyalgo.controller.Controller.first_layer_backward": (with_zero_grads,
                                                            'assert max(report["errors"].values()) < 1e-5'),
    "tinyalgo.bptt.backward": (without_the_barrier, 'assert max(report["errors"].values()) < 1e-5'),
    "tinyalgo.curriculum.Curriculum.record": (advancing_on_any_score, 'assert h["level"] == level and h["advanced"]'),
    "tinyalgo.qlearning.dynamic_one_step_targets": (with_argument("v_hat", np.ones_like),    # no V-hat
                                                    "assert np.allclose(one_step[:, 0]"),
    "tinyalgo.qlearning.lambda_returns": (with_argument("lambdas", np.ones_like),                 # lambda never cut
                                          "assert np.allclose(as_lambda_return[:, 0]"),
    "tinyalgo.qlearning.watkins_targets": (with_argument("exploratory", np.zeros_like),          # no cut at exploring
                                           "assert np.allclose(targets[:, 0]"),
    "tinyalgo.qlearning.penalty": (scaled(1, 0.5), "assert abs(loss_p - 0.16) < 1e-12"),
    "tinyalgo.automata.minimise.minimise": (splitting_every_state, "assert minimal.n_states == 3"),
}
TAUGHT = {f"{f.module}.{f.qualname}": (a, f) for a in ASSIGNMENTS.values() for f in a.functions}


@contextlib.contextmanager
def made_wrong(function, make_wrong):
    """Within the block, ``function`` (an assignment's) is ``make_wrong(the right one)`` wherever tinyalgo
    holds it: a method on its class, a function in every tinyalgo module that imported it (and, on
    leaving, in every one imported meanwhile)."""
    module = importlib.import_module(function.module)
    owner, _, name = function.qualname.rpartition(".")
    if owner:
        cls = getattr(module, owner)
        right = cls.__dict__[name]
        setattr(cls, name, make_wrong(right))
        try:
            yield
        finally:
            setattr(cls, name, right)
        return
    right = getattr(module, name)
    wrong = make_wrong(right)

    def replace(old, new):
        for m in list(sys.modules.values()):
            if isinstance(m, types.ModuleType) and m.__name__.split(".")[0] == "tinyalgo":
                for key, value in list(vars(m).items()):
                    if value is old:
                        setattr(m, key, new)

    replace(right, wrong)
    try:
        yield
    finally:
        replace(wrong, right)


def test_every_function_an_assignment_asks_for_has_a_wrong_version_here():
    assert set(BREAKS) == set(TAUGHT)


@pytest.mark.parametrize("dotted", list(BREAKS), ids=[d.split(".", 1)[1] for d in BREAKS])
def test_a_wrong_taught_function_fails_its_tutorial_on_the_assert_that_teaches_it(dotted, monkeypatch, tmp_path,
                                                                                   capsys):
    assignment, function = TAUGHT[dotted]
    path = next(p for p in TUTORIALS if number(p) == assignment.tutorial)
    make_wrong, claim = BREAKS[dotted]
    monkeypatch.setenv("TINYALGO_FAST", "1")
    monkeypatch.chdir(tmp_path)
    with made_wrong(function, make_wrong), pytest.raises(AssertionError) as failed:
        runpy.run_path(str(path), run_name="__main__")
    in_tutorial = [frame for frame in traceback.extract_tb(failed.tb) if frame.filename == str(path)]
    assert in_tutorial, f"the assertion failed outside {path.name}: {failed.value!r}"
    line = in_tutorial[-1]
    assert line.line.startswith(claim), f"{path.name}:{line.lineno} failed, not the assert {claim!r}: {line.line}"
    assert "this cell needs" not in capsys.readouterr().out          # a wrong function is no stub


# ------------------------------------------------------------------ student copies
KERNEL = all(importlib.util.find_spec(m) for m in ("nbclient", "nbformat", "ipykernel"))      # the notebooks extra
# A notebook run in a Jupyter kernel started in its folder, saved with its outputs (also when a cell fails).
EXECUTE = """\
import sys

import nbclient
import nbformat

nb = nbformat.read(sys.argv[1], as_version=4)
try:
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
finally:
    nbformat.write(nb, sys.argv[2])
"""


def run_tutorial(copy: pathlib.Path, path: pathlib.Path, kernel: bool = False) -> dict:
    """Run ``path`` (in ``copy``'s tutorials) as a student would, the copy's package first: a plain script, or
    with ``kernel`` its notebook in Jupyter (the kernel's own inline backend).  {"returncode", "stdout" (in a
    kernel: what the cells printed), "stderr" (in a kernel: what the cells wrote there, and the Jupyter
    log if the run failed), "seconds", "notebook" (in a kernel: the notebook with its outputs, as JSON)}."""
    env = dict(os.environ, PYTHONPATH=str(copy), TINYALGO_FAST="1", MPLBACKEND="Agg")
    command = [sys.executable, path.name]
    if kernel:
        del env["MPLBACKEND"]
        executed = path.with_name(path.stem + ".executed.ipynb")
        command = [sys.executable, "-c", EXECUTE, notebook_path(path).name, executed.name]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=path.parent, env=env, capture_output=True, text=True, timeout=600)
    run = dict(returncode=done.returncode, stdout=done.stdout, stderr=done.stderr,
               seconds=time.perf_counter() - start, notebook=None)
    if kernel and executed.exists():
        run["notebook"] = json.loads(executed.read_text(encoding="utf-8"))
        streams = [o for c in run["notebook"]["cells"] for o in c.get("outputs", []) if o["output_type"] == "stream"]
        run["stdout"] = "".join(text(o) for o in streams if o["name"] == "stdout")
        # What the cells wrote to stderr (a cell's own error is an "error" output and fails the run); the Jupyter
        # machinery's log (the kernel's shutdown may log a ZMQ traceback) counts only where the run failed.
        cells = "".join(text(o) for o in streams if o["name"] == "stderr")
        run["stderr"] = cells + (done.stderr if done.returncode else "")
    return run


def text(output) -> str:
    """A notebook output's text (nbformat keeps a multi-line text as a list of lines)."""
    return "".join(output["text"]) if isinstance(output["text"], list) else output["text"]


def make_copy(names, out, solution=False) -> pathlib.Path:
    make(names, out, solution=solution)
    assert sorted(number(p) for p in (out / "tutorials").glob("[0-9]*.py")) == \
        sorted({ASSIGNMENTS[n].tutorial for n in names}), "make copies the tutorials that teach the assignments"
    return out


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """Every tutorial run on a stub copy (a plain script) and on a solution copy (its notebook in a kernel
    when the notebooks extra is installed, else a plain script) of all assignments, in parallel (the
    solution copy's runs first, the later tutorials, which train, first of all):
    {("stub" | "solution", "NN"): run}."""
    root = tmp_path_factory.mktemp("copies")
    folders = {"solution": make_copy(list(ASSIGNMENTS), root / "solution", solution=True),
               "stub": make_copy(list(ASSIGNMENTS), root / "stub")}
    jobs = [(kind, path) for kind, copy in folders.items()
            for path in sorted((copy / "tutorials").glob("*.py"), reverse=True)]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        runs = list(pool.map(lambda job: run_tutorial(folders[job[0]], job[1], KERNEL and job[0] == "solution"),
                             jobs))
    for (kind, path), run in zip(jobs, runs):
        print(f"{kind:8s} copy: {path.name} ran in {run['seconds']:.1f} s" + (" (kernel)" if run["notebook"] else ""))
    return {(kind, number(path)): dict(run, folder=path.parent) for (kind, path), run in zip(jobs, runs)}


def check_ran_to_the_end(run):
    assert run["returncode"] == 0 and "Traceback" not in run["stderr"], run["stdout"][-2000:] + run["stderr"][-3000:]


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_on_a_stub_copy_each_cell_says_which_stub_it_needs(copies, path):
    run = copies["stub", number(path)]
    check_ran_to_the_end(run)
    named = NEEDS.findall(run["stdout"])
    assert named, f"{path.name} met no stub on a copy with every function stubbed:\n{run['stdout'][-2000:]}"
    for function, assignment in named:
        assert function in functions_of(assignment), f"{function} is not a function of assignment {assignment}"
    for name, stubs in NEEDS_RESULT.findall(run["stdout"]):      # a later cell: names the stub that stopped it
        assert set(re.findall(STUB, stubs)) <= set(named), (name, stubs)


def test_every_assignment_is_named_by_its_tutorial(copies, tmp_path):
    """A student with any one assignment stubbed is told about it by its tutorial.  On the copy of all of
    them a stub can stop a cell before it reaches another one (bptt.backward before Controller.step_backward):
    those assignments are checked on a copy of their own."""
    named = {a for run in (copies["stub", a.tutorial] for a in ASSIGNMENTS.values())
             for _, a in NEEDS.findall(run["stdout"])}
    alone = [a for a in ASSIGNMENTS.values() if a.name not in named]
    jobs = []
    for a in alone:
        copy = make_copy([a.name], tmp_path / a.name)
        jobs.append((a, copy, next((copy / "tutorials").glob(f"{a.tutorial}_*.py"))))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        runs = list(pool.map(lambda job: run_tutorial(job[1], job[2]), jobs))
    for (a, _, path), run in zip(jobs, runs):
        print(f"copy of {a.name} alone: {path.name} ran in {run['seconds']:.1f} s")
        check_ran_to_the_end(run)
        assert {n for _, n in NEEDS.findall(run["stdout"])} == {a.name}, run["stdout"][-2000:]


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_on_a_solution_copy_every_cell_runs(copies, path):
    """Every cell runs and every ``assert`` holds; the figures are written, and in a kernel each figure the
    tutorial shows (``show(fig)``) is inline as a PNG."""
    run = copies["solution", number(path)]
    check_ran_to_the_end(run)
    assert "this cell needs" not in run["stdout"], run["stdout"][-2000:]
    for name in FIGURES.get(number(path), []):
        figure = (run["folder"] / name).read_bytes()
        assert figure[:8] == b"\x89PNG\r\n\x1a\n" and len(figure) > 10_000, name
    if KERNEL:
        assert run["notebook"], "the notebook was not saved after its run"
        code = [c for c in run["notebook"]["cells"] if c["cell_type"] == "code"]
        assert all(c["execution_count"] is not None for c in code)
        outputs = [o for c in code for o in c["outputs"]]
        assert not [o for o in outputs if o["output_type"] == "error"]
        shown = len(re.findall(r"\bshow\(", path.read_text(encoding="utf-8")))     # each show(fig) draws one figure
        inline = sum("image/png" in o.get("data", {}) for o in outputs
                     if o["output_type"] in ("display_data", "execute_result"))
        assert inline >= shown, f"{shown} figures drawn, {inline} shown inline as PNG"


# ------------------------------------------------------------------ tutorial 02's "your turn"
YOUR_TURN = "    return np.zeros_like(x), np.zeros_like(h), {k: np.zeros_like(v) for k, v in p.items()}\n"


@pytest.mark.parametrize("body,says", [
    (None, "your backward pass returns zeros, and the check finds every array wrong: bh, bhh, bx, h, wh, whh, wx, x"),
    ("    return gru_step_backward(dh_new, cache)\n", "your backward pass: all correct"),
    ("    dx, dh, grads = gru_step_backward(dh_new, cache)\n    return dx, dh, dict(grads, wx=2 * grads['wx'])\n",
     "your backward pass is wrong for wx - right for bh, bhh, bx, h, wh, whh, x"),
], ids=["as given", "written", "one array wrong"])
def test_your_turn_teaches_before_and_after_the_work(body, says, tmp_path, monkeypatch, capsys):
    source = next(p for p in TUTORIALS if number(p) == "02").read_text(encoding="utf-8")
    assert source.count(YOUR_TURN) == 1
    script = tmp_path / "02.py"
    script.write_text(source.replace(YOUR_TURN, body or YOUR_TURN), encoding="utf-8")
    monkeypatch.setenv("TINYALGO_FAST", "1")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")
    assert says in capsys.readouterr().out


# ------------------------------------------------------------------ skip_if_stub itself
@pytest.fixture
def fresh(monkeypatch):
    """skip_if_stub with no stub met yet."""
    monkeypatch.setattr(tutorial, "MET", [])
    monkeypatch.setattr(tutorial, "_MADE_BY", {})


def function_in(module: str, source: str, name: str):
    """The function ``name`` defined by ``source`` as if in the module ``module``."""
    namespace = {"__name__": module}
    exec(textwrap.dedent(source), namespace)
    return namespace[name]


def run_cells(source: str, **names) -> dict:
    """Run ``source`` as a tutorial's top level (its own globals); returns them."""
    namespace = {"__name__": "__main__", "skip_if_stub": skip_if_stub, **names}
    exec(compile(textwrap.dedent(source), "<tutorial>", "exec"), namespace)
    return namespace


GRU_STUB = "cores.gru_step_backward, still a stub in your copy (assignment gru_backward)"


@pytest.mark.parametrize("message", [
    "gru_step_backward: the gradients of one GRU step (assignment gru_backward): see tutorial 02",
    "gru_step_backward: the gradients of one GRU step: see tutorial 02",          # the registry names it
])
def test_a_cell_that_meets_a_stub_says_so_and_leaves_nothing(fresh, capsys, message):
    stub = function_in("tinyalgo.cores", f"def gru_step_backward(*args):\n    raise NotImplementedError({message!r})",
                       "gru_step_backward")
    ns = run_cells("""
        x = "before"
        with skip_if_stub():
            x = "rebound"
            half = 1
            dx = stub()
            after = 2
        with skip_if_stub():
            uses = half + 1
        with skip_if_stub():
            also = dx
        last = "ran"
        """, stub=stub)
    assert capsys.readouterr().out.splitlines() == [
        f"this cell needs {GRU_STUB}; write it and run the cell again",
        f"this cell needs `half`, which a skipped cell above did not make: it needs {GRU_STUB}; "
        "write it and run the tutorial again",
        f"this cell needs `dx`, which a skipped cell above did not make: it needs {GRU_STUB}; "
        "write it and run the tutorial again"]
    assert ns["last"] == "ran" and not {"x", "half", "dx", "after", "uses", "also"} & set(ns)
    assert tutorial.MET == [tutorial.Stub("cores.gru_step_backward", "gru_backward", "02")]


def test_a_stubbed_method_is_named_with_its_class(fresh, capsys):
    cls = function_in("tinyalgo.controller", """
        class Controller:
            def step_backward(self):
                raise NotImplementedError("Controller.step_backward: the layer backward passes: see tutorial 03")
        """, "Controller")
    run_cells("with skip_if_stub():\n    Controller().step_backward()\n", Controller=cls)
    assert capsys.readouterr().out == ("this cell needs controller.Controller.step_backward, still a stub in your copy"
                                       " (assignment controller_backward); write it and run the cell again\n")


def test_a_cell_that_meets_no_stub_runs_as_without_it(fresh, capsys):
    ns = run_cells("with skip_if_stub():\n    y = 2 * 21\n")
    assert ns["y"] == 42 and capsys.readouterr().out == ""


@pytest.mark.parametrize("cell,error", [
    ("raise NotImplementedError('a real gap')", NotImplementedError),
    ("assert 1 == 2, 'a claim that fails'", AssertionError),
    ("print(undefined_name)", NameError),                               # no cell was skipped before
])
def test_anything_else_is_raised(fresh, cell, error):
    with pytest.raises(error):
        run_cells(f"with skip_if_stub():\n    {cell}\n")


def test_a_name_error_inside_the_package_is_raised_even_after_a_skip(fresh, capsys):
    stub = function_in("tinyalgo.qlearning", "def penalty(*a):\n    raise NotImplementedError("
                       "'penalty: kappa (assignment penalty): see tutorial 05')", "penalty")
    broken = function_in("tinyalgo.qtraining", "def run():\n    return missing_helper()", "run")
    with pytest.raises(NameError, match="missing_helper"):
        run_cells("""
            with skip_if_stub():
                stub()
            with skip_if_stub():
                broken()
            """, stub=stub, broken=broken)
    assert "assignment penalty" in capsys.readouterr().out
