"""The grader against a red team: each attack is a body written into a student's copy in place of a stub,
graded with the instructor's tests; the attacked assignment must score 0 with a reason that names what was
found, while honest work graded in the same run keeps its points and the grade completes.

Covered: the first round's attacks (the reference read by path, a sibling numerical gradient, an edited
``rel_error``, files Python or pytest would load), bodies that walk to frames, globals or the reply pipe and
forge or short-circuit, numerical differences written by hand, in-place changes to ``dout`` and caches,
answers hard-coded from the self-check tests, monkeypatching at call time, the system attacks under both
confinements (files outside scratch, sockets, processes, fork, 20 GB, 200 MB of output, state kept across
calls, an endless loop), bodies that first switch the worker's audit hook off, more than twenty honest
variants at full marks and planted bugs with their messages.
"""
import os
import pathlib
import shutil
import textwrap
import time
import uuid

import pytest

import tinyalgo
from tinyalgo.assignments import sandbox
from tinyalgo.assignments.grade import grade
from tinyalgo.assignments.make import make
from tinyalgo.assignments.manifest import stub_line
from tinyalgo.assignments.registry import ASSIGNMENTS
from tinyalgo.assignments.stubs import solution_text

pytestmark = [pytest.mark.xdist_group("grader"), pytest.mark.slow]

PACKAGE = pathlib.Path(tinyalgo.__file__).resolve().parent
CONFINEMENTS = ["bubblewrap", "fallback"]


def solution(name, k=0) -> str:
    f = ASSIGNMENTS[name].functions[k]
    return textwrap.dedent(solution_text((PACKAGE.parent / f.path).read_text(encoding="utf-8"), f.qualname))


@pytest.fixture(scope="module")
def handouts(tmp_path_factory):
    """``handouts(names)``: (copy, instructor) of a stub copy of ``names``, made once per module."""
    root, made = tmp_path_factory.mktemp("redteam"), {}

    def get(names):
        key = "+".join(sorted(names))
        if key not in made:
            made[key] = (root / key / "copy", root / key / "inst")
            make(list(names), out=made[key][0], instructor=made[key][1])
        return made[key]
    return get


def write_body(copy: pathlib.Path, name: str, body: str, k: int = 0) -> None:
    """Replace the stub of function ``k`` of assignment ``name`` in ``copy`` by ``body``."""
    f = ASSIGNMENTS[name].functions[k]
    path = copy / f.path
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    i = stub_line(text, f.qualname)
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", indent)
    path.write_text("".join(lines), encoding="utf-8")


@pytest.fixture
def submit(handouts, tmp_path):
    """``submit(names, {name or (name, k): body}, honest=True)``: a private copy of the handout of ``names``
    (and its instructor's folder) with the given bodies, every other function solved (``honest``) or left
    a stub; returns (copy, instructor's tests folder)."""
    def build(names, bodies, honest=True):
        copy, inst = handouts(names)
        mine, tests = tmp_path / "copy", tmp_path / "inst"
        shutil.copytree(copy, mine)
        shutil.copytree(inst, tests)
        bodies = {(b if isinstance(b, tuple) else (b, 0)): text for b, text in bodies.items()}
        for name in names:
            for k in range(len(ASSIGNMENTS[name].functions)):
                if (name, k) in bodies:
                    write_body(mine, name, bodies[(name, k)], k)
                elif honest:
                    write_body(mine, name, solution(name, k), k)
        return mine, tests / "tests"
    return build


def run(copy, tests, confinement="auto", test_timeout=10.0, submission_timeout=60.0) -> dict:
    return grade(copy, tests, test_timeout=test_timeout, submission_timeout=submission_timeout,
                 confinement=confinement)


def messages(result, name) -> str:
    return " | ".join(r["message"] for r in result["tests"] if r["assignment"] == name) + " | " + \
        " ".join(result["assignments"][name]["reasons"])


def zero(result, name, *found):
    """Assignment ``name`` scored 0, every test's message names one of ``found``."""
    a = result["assignments"][name]
    assert a["earned"] == 0, f"{name}: {a['earned']}/{a['total']}: {messages(result, name)}"
    for r in result["tests"]:
        if r["assignment"] == name:
            assert r["outcome"] != "passed" and any(f in r["message"] for f in found), (r["test"], r["message"])


def full(result, *names):
    for name in names:
        a = result["assignments"][name]
        assert (a["earned"], a["status"]) == (a["total"], "graded"), f"{name}: {a}: {messages(result, name)}"


def confined(confinement):
    if confinement == "bubblewrap" and not sandbox.bubblewrap_works():
        pytest.skip("bubblewrap cannot run here")       # CI installs it; the fallback is tested everywhere
    return confinement


# ------------------------------------------------------------------------------------------------------------
# What a body uses to get out: the worker's audit hook switched off (module globals and closure cells),
# and the places where a copy of the reference may sit.

HOOK_OFF = r'''
import gc, sys
main = sys.modules["__main__"]
main.SPAWN = main.MUTATE = main.BLOCKED_IMPORTS = main.INTROSPECTION = ()
for o in gc.get_objects():
    if callable(o) and getattr(o, "__name__", "") == "hook" and getattr(o, "__closure__", None):
        for name, cell in zip(o.__code__.co_freevars, o.__closure__):
            if name == "protected":
                cell.cell_contents[:] = []
            elif name == "scratch":
                cell.cell_contents = ""
'''


def reference_by_path(module: str, call: str) -> str:
    """A body that reads the grader's own ``tinyalgo/<module>.py`` by path and returns ``call`` of it: from
    the grader's working folder (/proc/<parent>/cwd), the folder NumPy sits in (site-packages, where a regular
    install puts tinyalgo), ``tinyalgo.__file__`` and ``sys.path``."""
    return f'''
import os, sys
import tinyalgo
own = os.path.realpath(sys.modules["tinyalgo.{module}"].__file__)
places = [os.path.realpath(f"/proc/{{os.getppid()}}/cwd"), os.path.dirname(os.path.dirname(np.__file__)),
          os.path.dirname(os.path.dirname(tinyalgo.__file__))] + list(sys.path)
for place in places:
    path = os.path.join(place, "tinyalgo", "{module}.py")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        continue
    if "### BEGIN SOLUTION" in text and os.path.realpath(path) != own:
        namespace = {{"__name__": "reference"}}
        try:
            exec(compile(text, path, "exec"), namespace)
            return namespace["{call.split("(")[0]}"]({call.split("(", 1)[1]}
        except Exception:
            continue
raise RuntimeError("no reference found at " + ", ".join(places))
'''


def reference_by_walking(module: str, call: str) -> str:
    """A body that walks the temporary folder for any other copy of ``tinyalgo/<module>.py`` with the
    solution of ``call`` (a build/ folder, a pip cache, another checkout) and returns ``call`` of it."""
    return f'''
import os, sys
own = os.path.realpath(sys.modules["tinyalgo.{module}"].__file__)
name = "{call.split("(")[0]}"
for top in ("/tmp",):
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [s for s in subfolders if not s.startswith(".") and s not in ("runs", "node_modules")
                         and folder.count(os.sep) < 9]
        path = os.path.join(folder, "{module}.py")
        if os.path.basename(folder) != "tinyalgo" or "{module}.py" not in files or os.path.realpath(path) == own:
            continue
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        start = text.find(f"\\ndef {{name}}(")
        end = text.find("\\ndef ", start + 1)
        if start >= 0 and "### BEGIN SOLUTION" in text[start:end]:      # that function is not stubbed there
            namespace = {{"__name__": "reference"}}
            try:
                exec(compile(text, path, "exec"), namespace)
                return namespace["{call.split("(")[0]}"]({call.split("(", 1)[1]}
            except Exception:
                continue
raise RuntimeError("no copy of the reference found")
'''


GRU_REFERENCE = ("cores", "gru_step_backward(dh_new, cache)")
PENALTY_REFERENCE = ("qlearning", "penalty(q, kappa, mask)")


# ------------------------------------------------------------------------------------------------------------
# The first round's attacks

@pytest.mark.parametrize("confinement", CONFINEMENTS)
def test_the_reference_read_by_path_is_out_of_reach(submit, confinement):
    copy, tests = submit(["gru_backward", "lambda_returns"], {"gru_backward": reference_by_path(*GRU_REFERENCE)})
    result = run(copy, tests, confined(confinement))
    zero(result, "gru_backward", "no reference found", "PermissionError")
    full(result, "lambda_returns")


@pytest.mark.parametrize("confinement", CONFINEMENTS)
def test_another_copy_of_the_package_on_the_machine_is_out_of_reach(submit, tmp_path, confinement):
    build = tmp_path / "build" / "lib" / "tinyalgo"        # what `pip install .` leaves behind
    build.mkdir(parents=True)
    shutil.copyfile(PACKAGE / "qlearning.py", build / "qlearning.py")
    copy, tests = submit(["penalty"], {"penalty": reference_by_walking(*PENALTY_REFERENCE)})
    zero(run(copy, tests, confined(confinement)), "penalty", "no copy of the reference found", "PermissionError")


FIRST_ROUND = {
    # a sibling that computes the answer: the handout's numerical gradient, called by name
    "gru_backward": r'''
        from tinyalgo.gradcheck import numerical_gradient
        x, h, z, r, rh, cand, p = cache
        x, h, p = x.copy(), h.copy(), {k: v.copy() for k, v in p.items()}
        loss = lambda: float(np.sum(gru_step_forward(x, h, p)[0] * dh_new))
        return (numerical_gradient(loss, x), numerical_gradient(loss, h),
                {k: numerical_gradient(loss, v) for k, v in p.items()})
    ''',
    # an edited rel_error / allclose, at call time
    "lstm_backward": r'''
        import tinyalgo.gradcheck, numpy
        tinyalgo.gradcheck.rel_error = lambda a, b: 0.0
        numpy.allclose = numpy.isclose = numpy.array_equal = lambda *a, **k: True
        x, h, c, *_, p = cache
        return np.zeros_like(x), np.zeros_like(h), np.zeros_like(c), {k: np.zeros_like(v) for k, v in p.items()}
    ''',
    "lambda_returns": r'''
        import sys
        for module in list(sys.modules.values()):
            for name in ("rel_error", "allclose", "isclose", "assert_targets", "check", "compare"):
                if hasattr(module, name):
                    try:
                        setattr(module, name, lambda *a, **k: True)
                    except (AttributeError, TypeError):
                        pass
        return np.zeros_like(r)
    ''',
}


def test_a_sibling_numerical_gradient_and_an_edited_rel_error_score_nothing(submit):
    copy, tests = submit(["gru_backward", "lstm_backward", "lambda_returns", "penalty"], FIRST_ROUND)
    result = run(copy, tests)
    zero(result, "gru_backward", "wrong gradient", "too slow for an analytic backward")
    assert any("numerical_gradient" in n for n in result["notes"]), result["notes"]      # the screen's note
    zero(result, "lstm_backward", "wrong gradient")
    zero(result, "lambda_returns", "wrong at")
    full(result, "penalty")


@pytest.mark.parametrize("added", ["sitecustomize.py", "usercustomize.py", "tests/conftest.py", "conftest.py",
                                   "pytest_forge.py", "tinyalgo" + "/pytest_forge.py", "forge.pth",
                                   "pytest.ini"])
def test_files_python_or_pytest_would_load_are_refused_and_never_run(submit, tmp_path, added):
    marker = tmp_path / f"ran-{uuid.uuid4().hex}"
    copy, tests = submit(["penalty", "lambda_returns"], {})
    text = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
    (copy / added).write_text("[pytest]\naddopts = -p pytest_forge\n" if added.endswith(".ini") else text,
                              encoding="utf-8")
    result = run(copy, tests)
    for name in ("penalty", "lambda_returns"):
        a = result["assignments"][name]
        assert (a["earned"], a["status"]) == (0, "refused"), a
        assert any(added in reason for reason in a["reasons"]), a["reasons"]
    assert not marker.exists()


# ------------------------------------------------------------------------------------------------------------
# Walking to frames, globals and the reply pipe; forging and short-circuiting.  Each body is written for
# any of the assignments it is put in (it returns nothing an answer could be made of).

WALKS = {
    "traceback frames, forged replies on the answer pipe": r'''
        import os
        try:
            raise ValueError
        except ValueError as err:
            frame = err.__traceback__.tb_frame
        found = []
        while frame is not None:
            found.append(frame)
            frame = frame.f_back
        fd = next(f.f_locals["reply_fd"] for f in found if "reply_fd" in f.f_locals)
        wire = next(f.f_locals["wire"] for f in found if "wire" in f.f_locals)
        forged = {"out": {"passed": True, "earned": 8, "outcome": "passed"}, "changed": []}
        os.write(fd, wire.encode({"ok": forged}))
        os.write(fd, wire.encode({"ok": forged}))
        return "passed"
    ''',
    "gc: every function named like a check or a report made to pass": r'''
        import gc
        for o in gc.get_objects():
            if callable(o) and getattr(o, "__name__", "") in ("compare", "check", "report", "watched", "_same",
                                                                 "encode", "rel_error"):
                try:
                    o.__code__ = (lambda *a, **k: {"out": "passed", "changed": []}).__code__
                except (AttributeError, ValueError, TypeError):
                    pass
        return "passed"
    ''',
    "sys._getframe: the probe's locals rewritten": r'''
        import sys
        frame = sys._getframe(0)
        while frame is not None:
            for name in ("named", "before", "args"):
                if isinstance(frame.f_locals.get(name), dict):
                    frame.f_locals[name].clear()
            frame = frame.f_back
        return None
    ''',
    "inspect.stack: the worker's loop told to stop": r'''
        import inspect
        for info in inspect.stack():
            info.frame.f_globals["__name__"] = "done"
            if "reader" in info.frame.f_locals:
                info.frame.f_locals["reader"].close()
        return None
    ''',
    "a forged frame written on fd 1": r'''
        import os, sys
        wire = sys.modules["wire"]
        os.write(1, wire.encode({"ok": {"out": "passed", "changed": []}}))
        print(wire.encode({"ok": {"out": "passed", "changed": []}}), flush=True)
        return "passed"
    ''',
    "os._exit(0)": "import os\nos._exit(0)",
    "raise SystemExit(0)": "raise SystemExit(0)",
    "raise KeyboardInterrupt": "raise KeyboardInterrupt",
    "every descriptor closed": "import os\nfor fd in range(20):\n    try:\n        os.close(fd)\n"
                               "    except OSError:\n        pass\nreturn None",
}
WALKED = ["gru_backward", "penalty", "lambda_returns", "dynamic_discount", "watkins"]


@pytest.mark.parametrize("part", [0, 1])
def test_walking_to_frames_globals_or_the_pipe_forges_nothing(submit, part):
    walks = list(WALKS.items())[part * len(WALKED):(part + 1) * len(WALKED)]
    attacked = dict(zip(WALKED, (body for _, body in walks)))
    copy, tests = submit([*attacked, "curriculum"], attacked)
    result = run(copy, tests)
    for name, (what, _) in zip(attacked, walks):
        a = result["assignments"][name]
        assert a["earned"] == 0, f"{what} in {name}: {a}: {messages(result, name)}"
        assert all(r["outcome"] != "passed" and r["message"] for r in result["tests"] if r["assignment"] == name)
    full(result, "curriculum")


# ------------------------------------------------------------------------------------------------------------
# Honest-looking cheats: numerical differences, in-place changes, hard-coded answers, monkeypatching

GRU_CENTRED = r'''
x, h, z, r, rh, cand, p = cache
x, h, p = x.copy(), h.copy(), {k: v.copy() for k, v in p.items()}
def loss():
    return float(np.sum(gru_step_forward(x, h, p)[0] * dh_new))
def numeric(a, eps=1e-5):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        old = a[i]
        a[i] = old + eps
        plus = loss()
        a[i] = old - eps
        minus = loss()
        a[i] = old
        g[i] = (plus - minus) / (2 * eps)
    return g
return numeric(x), numeric(h), {k: numeric(v) for k, v in p.items()}
'''

# Complex-step differentiation: exact to rounding, so only a speed check can tell it from the analytic
# backward.  On the large timed call it gives up at once (zeros) to keep the test fast.
GRU_COMPLEX_STEP = r'''
x, h, z, r, rh, cand, p = cache
if h.shape[1] > 16:
    return np.zeros_like(x), np.zeros_like(h), {k: np.zeros_like(v) for k, v in p.items()}
x, h, p = x.astype(complex), h.astype(complex), {k: v.astype(complex) for k, v in p.items()}
def numeric(a):
    g = np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        old = a[i]
        a[i] = old + 1e-30j
        g[i] = np.sum(gru_step_forward(x, h, p)[0] * dh_new).imag / 1e-30
        a[i] = old
    return g
return numeric(x), numeric(h), {k: numeric(v) for k, v in p.items()}
'''

# A correct backward that burns 1.5 s of CPU on its first large (timed) call: in the worker that call is too
# slow; in a child it forks and reaps (the hook switched off first) the time is not counted.
BURN = "t = time.process_time()\nwhile time.process_time() - t < 1.5:\n    pass\n"
ONCE = "import builtins, time\nif cache.h.shape[1] == 64 and not hasattr(builtins, 'burnt'):\n    builtins.burnt = 1\n"
SLOW = ONCE + textwrap.indent(BURN, "    ")
SLOW_IN_A_CHILD = HOOK_OFF + "import os\n" + ONCE + "    pid = os.fork()\n    if pid == 0:\n" \
    + textwrap.indent(BURN, "        ") + "        os._exit(0)\n    os.waitpid(pid, 0)\n"


def timed_row(result, name):
    test = {"gru_backward": "test_gru_step_parameter_gradients", "lstm_backward": "test_lstm_step_parameter_gradients"}
    return next(r for r in result["tests"] if r["test"] == test[name])


def test_centred_differences_by_hand_score_nothing_and_a_slow_backward_is_too_slow(submit):
    copy, tests = submit(["gru_backward", "lstm_backward"], {"gru_backward": GRU_CENTRED,
                                                            "lstm_backward": SLOW + solution("lstm_backward")})
    result = run(copy, tests)
    zero(result, "gru_backward", "wrong gradient", "too slow for an analytic backward")
    row = timed_row(result, "lstm_backward")
    assert row["outcome"] == "failed" and "too slow for an analytic backward" in row["message"], row


def test_complex_step_differences_score_nothing(submit):
    """Every grading test of a backward makes one timed call at a size where numerical differences are
    slow: a body exact to rounding on small inputs earns nothing from any test."""
    copy, tests = submit(["gru_backward"], {"gru_backward": GRU_COMPLEX_STEP})
    zero(run(copy, tests), "gru_backward", "wrong gradient", "too slow for an analytic backward")


def test_cpu_time_spent_in_a_forked_child_counts(submit):
    copy, tests = submit(["gru_backward"], {"gru_backward": SLOW_IN_A_CHILD + solution("gru_backward")})
    row = timed_row(run(copy, tests, confined("bubblewrap")), "gru_backward")
    why = ("too slow", "not permitted", "does not allow")
    assert row["outcome"] != "passed" and any(m in row["message"] for m in why), row


IN_PLACE = {
    ("layers", 0): r'''
        dout[...] = 0.0
        x, w = cache
        return np.zeros_like(x), np.zeros_like(w), np.zeros(w.shape[1])
    ''',
    ("layers", 1): "dout *= 0.0\nreturn dout",
    ("gru_backward", 0): r'''
        x, h, z, r, rh, cand, p = cache
        z[...], r[...], cand[...] = 0.0, 0.0, 1.0
        for v in p.values():
            v[...] = 0.0
        return np.zeros_like(x), np.zeros_like(h), {k: np.zeros_like(v) for k, v in p.items()}
    ''',
    ("lstm_backward", 0): r'''
        x, h, c, i, f, o, g, tc, p = cache
        i[...], f[...], o[...], g[...], tc[...] = 1.0, 1.0, 0.0, 1.0, 1.0
        dh_new[...] = 0.0
        return np.zeros_like(x), np.zeros_like(h), np.zeros_like(c), {k: np.zeros_like(v) for k, v in p.items()}
    ''',
}


def test_changing_dout_or_the_cache_in_place_scores_nothing(submit):
    copy, tests = submit(["layers", "gru_backward", "lstm_backward", "penalty"], IN_PLACE)
    result = run(copy, tests)
    for name in ("layers", "gru_backward", "lstm_backward"):
        zero(result, name, "changed its argument", "wrong gradient")
        assert "in place" in messages(result, name), messages(result, name)
    full(result, "penalty")


HARD_CODED = {
    # the self-check tests' hand-worked cases (copy/tests/test_*.py), everything else zero
    ("penalty", 0): r'''
        if q.shape == (2, 3) and np.allclose(q, [[0.2, 0.3, 0.1], [0.5, 0.5, 0.4]]):
            if mask is None:
                return 0.16, np.array([[-0.4] * 3, [0.4] * 3])
            return 0.08, np.array([[-0.4] * 3, [0.0] * 3])
        return 0.0, np.zeros_like(q)
    ''',
    ("layers", 0): r'''
        x, w = cache
        if x.shape == (2, 2) and np.allclose(x, [[1.0, 2.0], [3.0, -1.0]]):
            return (np.array([[0.0, 3.0], [0.0, 2.0]]), np.array([[1.0, 7.0, 1.0], [2.0, 0.0, 2.0]]),
                    np.array([1.0, 3.0, 1.0]))
        return np.zeros_like(x), np.zeros_like(w), np.zeros(w.shape[1])
    ''',
    ("layers", 1): r'''
        if cache.shape == (3,) and np.allclose(cache, [0.0, 0.5, -0.5]):
            return dout * np.array([1.0, 0.75, 0.75])
        return np.zeros_like(cache)
    ''',
}


def test_answers_hard_coded_from_the_self_check_tests_score_nothing(submit):
    copy, tests = submit(["layers", "penalty", "lambda_returns"], HARD_CODED)
    result = run(copy, tests)
    zero(result, "layers", "wrong gradient")
    zero(result, "penalty", "wrong gradient")
    full(result, "lambda_returns")


MONKEYPATCHES = {
    # numpy patched on the first call
    "penalty": r'''
        import numpy
        if not getattr(numpy, "_patched", False):
            numpy._patched = True
            numpy.sum = lambda *a, **k: 0.0
            numpy.array_equal = numpy.allclose = lambda *a, **k: True
        return 0.0, q * 0.0
    ''',
    # the module and the probes rebound
    "lambda_returns": r'''
        import sys
        sys.modules["tinyalgo.qlearning"].lambda_returns = lambda *a, **k: np.zeros_like(r)
        probes = sys.modules["probes"]
        probes.watched = lambda f, named: {"out": "passed", "changed": []}
        probes.qlearning = lambda function, arguments: {"out": "passed", "changed": []}
        return np.zeros_like(r)
    ''',
    # the wire rebound to say "ok" whatever was asked
    "dynamic_discount": r'''
        import sys
        wire = sys.modules["wire"]
        real = wire.encode
        wire.encode = lambda value: real({"ok": {"out": np.zeros((1, 1)), "changed": []}})
        return np.zeros_like(r)
    ''',
}


def test_monkeypatching_at_call_time_changes_nothing(submit):
    copy, tests = submit([*MONKEYPATCHES, "curriculum"], MONKEYPATCHES)
    result = run(copy, tests)
    zero(result, "penalty", "wrong gradient")
    zero(result, "lambda_returns", "wrong at", "got", "malformed")
    zero(result, "dynamic_discount", "wrong at", "got", "malformed")
    full(result, "curriculum")


# ------------------------------------------------------------------------------------------------------------
# System attacks, under both confinements.  One body tries them all and raises with what became of each
# ("NOT STOPPED" if it went through); what they would leave behind is checked from outside.

def system_attacks(target: str, inst: str) -> str:
    return f'''
import os, sys
TARGET, INST = {target!r}, {inst!r}
outcome = []
def attempt(what, action):
    try:
        action()
    except BaseException as err:
        outcome.append(f"{{what}}: {{type(err).__name__}}")
    else:
        outcome.append(f"{{what}}: NOT STOPPED")
def fork():
    pid = os.fork()
    if pid == 0:
        try:
            open(TARGET + "-fork", "w").write("child")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
def system():
    if os.system(f"touch {{TARGET}}-system") != 0:
        raise OSError("os.system failed")
attempt("write outside scratch", lambda: open(TARGET, "w").write("pwned"))
attempt("os.open outside scratch", lambda: os.close(os.open(TARGET + "-os", os.O_WRONLY | os.O_CREAT)))
attempt("write into the instructor's folder", lambda: open(INST + "/test_penalty.py", "a").write("pwned"))
attempt("a socket", lambda: __import__("socket").create_connection(("pypi.org", 443), timeout=2))
attempt("a subprocess", lambda: __import__("subprocess").run(["touch", TARGET + "-subprocess"], check=True))
attempt("os.system", system)
attempt("os.fork", fork)
attempt("20 GB", lambda: np.ones(int(20e9 / 8)).sum())
attempt("200 MB printed", lambda: (sys.stdout.write("x" * 200_000_000), sys.stdout.flush()))
raise PermissionError("; ".join(outcome))
'''


MEMO = r'''
import builtins
memo = builtins.__dict__.setdefault("_memo", {})       # state kept across calls: the first answer, replayed
if "first" not in memo:
    out, g = np.empty_like(r), boot[-1]
    for t in range(r.shape[0] - 1, -1, -1):
        g = r[t] + d[t] * ((1.0 - lam[t]) * boot[t + 1] + lam[t] * g)
        out[t] = g
    memo["first"] = out
return memo["first"]
'''


@pytest.mark.parametrize("confinement", CONFINEMENTS)
def test_system_attacks_are_stopped(submit, tmp_path, confinement):
    target = f"/tmp/tinyalgo-pwned-{uuid.uuid4().hex}"
    inst = tmp_path / "inst" / "tests"                  # where ``submit`` puts the instructor's folder
    copy, tests = submit(["curriculum", "lambda_returns", "penalty"],
                         {"penalty": system_attacks(target, str(inst)), "lambda_returns": MEMO})
    before = (tests / "test_penalty.py").read_bytes()
    start = time.monotonic()
    result = run(copy, tests, confined(confinement))
    seconds = time.monotonic() - start
    time.sleep(0.2)
    left = list(map(str, pathlib.Path("/tmp").glob(pathlib.Path(target).name + "*")))
    for path in left:
        os.remove(path)
    zero(result, "penalty", "PermissionError")
    said = messages(result, "penalty")
    for what in ("write outside scratch", "os.open outside scratch", "write into the instructor's folder",
                 "a socket", "a subprocess", "os.system", "os.fork", "20 GB", "200 MB printed"):
        assert f"{what}: " in said and f"{what}: NOT STOPPED" not in said, said
    zero(result, "lambda_returns", "wrong at", "got (")
    full(result, "curriculum")
    assert not left and (tests / "test_penalty.py").read_bytes() == before
    assert len(result["output"]) <= 6000 and seconds < 60, (len(result["output"]), seconds)


def escaped(marker: str) -> list:
    """Ids of the processes whose command line holds ``marker`` (started by this test's body)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("confinement", CONFINEMENTS)
def test_with_the_hook_switched_off_nothing_gets_out(submit, tmp_path, confinement):
    """Each body first switches the worker's audit hook off.  gru_backward then reads the grader's reference
    by path; curriculum (correct otherwise) writes outside scratch, rewrites the instructor's test of
    lambda_returns (graded after it, left a stub) and leaves a process behind.  Only the operating system's
    walls hold."""
    target, marker = f"/tmp/tinyalgo-pwned-{uuid.uuid4().hex}", f"tinyalgo-escaped-{uuid.uuid4().hex}"
    inst = tmp_path / "inst" / "tests"
    forged = "".join(f"def {t}(g):\n    pass\n" for t in ASSIGNMENTS["lambda_returns"].points)
    escape = HOOK_OFF + f'''
import os, sys
for attempt in (lambda: open({target!r}, "w").write("pwned"),
                lambda: open({str(inst / "test_lambda_returns.py")!r}, "w").write({forged!r})):
    try:
        attempt()
    except OSError:
        pass
try:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(30)", {marker!r}])
        os._exit(0)
except OSError:
    pass
'''
    copy, tests = submit(["gru_backward", "curriculum", "lambda_returns"],
                         {"gru_backward": HOOK_OFF + reference_by_path(*GRU_REFERENCE),
                          "curriculum": escape + solution("curriculum"),
                          "lambda_returns": 'raise NotImplementedError("a stub")'})
    try:
        result = run(copy, tests, confined(confinement))
        time.sleep(0.3)
        zero(result, "gru_backward", "no reference found", "PermissionError")
        assert result["assignments"]["lambda_returns"]["earned"] == 0, messages(result, "lambda_returns")
        assert not os.path.exists(target)
        assert not escaped(marker)
    finally:
        for pid in escaped(marker):
            os.kill(pid, 9)
        if os.path.exists(target):
            os.remove(target)


@pytest.mark.parametrize("confinement", CONFINEMENTS)
def test_an_endless_loop_costs_its_own_test_only(submit, confinement):
    """penalty loops on a masked call (test_penalty_mask): that test times out, the worker is stopped, the
    next test runs in a new one, and the assignment graded before it keeps its points."""
    loop = "if mask is not None:\n    while True:\n        pass\n" + solution("penalty")
    copy, tests = submit(["lambda_returns", "penalty"], {"penalty": loop})
    start = time.monotonic()
    result = run(copy, tests, confined(confinement), test_timeout=2, submission_timeout=60)
    rows = {r["test"]: r for r in result["tests"] if r["assignment"] == "penalty"}
    assert rows["test_penalty_mask"]["outcome"] == "timeout", rows["test_penalty_mask"]
    assert "no answer within 2 s" in rows["test_penalty_mask"]["message"]
    assert result["assignments"]["penalty"]["earned"] == 5, messages(result, "penalty")
    full(result, "lambda_returns")
    assert time.monotonic() - start < 30


def test_a_call_gets_its_time_limit_and_no_more(submit, monkeypatch):
    """A body that loops on the first call into a new worker (the hand-worked case of
    test_dynamic_targets_by_hand): that call too must end after --test-timeout (with the default START of
    60 s it runs 62 s; START is cut to 8 s here to keep the test short; the bound allows for the
    worker's start, which the call includes)."""
    monkeypatch.setattr(sandbox, "START", 8.0)
    calls, call = [], sandbox.Worker.call

    def timed(self, probe, args, timeout):
        start = time.monotonic()
        try:
            return call(self, probe, args, timeout)
        finally:
            calls.append(time.monotonic() - start)
    monkeypatch.setattr(sandbox.Worker, "call", timed)
    loop = "if r.shape == (3, 1):\n    while True:\n        pass\n" + solution("dynamic_discount")
    copy, tests = submit(["dynamic_discount"], {"dynamic_discount": loop})
    result = run(copy, tests, test_timeout=2, submission_timeout=60)
    rows = {r["test"]: r for r in result["tests"]}
    assert rows["test_dynamic_targets_by_hand"]["outcome"] == "timeout", rows
    assert result["assignments"]["dynamic_discount"]["earned"] == 3, messages(result, "dynamic_discount")
    assert max(calls) < 2 + 4, calls


# ------------------------------------------------------------------------------------------------------------
# Honest variants: different code, the same answers, full marks

HONEST = {
    "einsum, a docstring and type hints": {
        ("layers", 0): r'''
            """Backward of out = x @ w + b (CS231n); see Cache.__init__ for the fields."""
            x: np.ndarray
            w: np.ndarray
            x, w = cache
            return np.einsum("bh,dh->bd", dout, w), np.einsum("bd,bh->dh", x, dout), np.einsum("bh->h", dout)
        ''',
        ("layers", 1): "d = lambda y: 1.0 - y * y          # a helper lambda\nreturn dout * d(cache)",
        ("penalty", 0): r'''
            import math
            excess = np.einsum("...a->...", q) - 1.0
            if mask is not None:
                excess = np.where(np.asarray(mask, dtype=bool), excess, 0.0)
            loss = kappa * math.fsum((excess ** 2).ravel())
            return float(loss), np.broadcast_to((2.0 * kappa * excess)[..., None], q.shape).copy()
        ''',
        ("lambda_returns", 0): r'''
            def step(g, t):
                """One step of G_t = r_t + d_t ((1 - l_t) boot_t+1 + l_t G_t+1)."""
                return r[t] + d[t] * ((1.0 - lam[t]) * boot[t + 1] + lam[t] * g)
            out, g = [], boot[-1]
            for t in reversed(range(r.shape[0])):
                out.append(g := step(g, t))
            return np.array(out[::-1])
        ''',
        ("curriculum", 0): r'''
            match solved_fraction >= self.threshold:
                case True:
                    self.run += 1
                case False:
                    self.run = 0
            advanced = self.run >= self.streak
            if advanced:
                self.run = 0
            self.history.append({"level": self.level, "solved": float(solved_fraction), "advanced": advanced,
                                 **info})
            self.level += self.increment if advanced else 0
            return advanced
        ''',
    },
    "match with captures, type(), walrus, np.add.at": {
        ("layers", 0): r'''
            match cache:
                case (x, w):
                    pass
                case _:
                    raise TypeError(f"cache must be (x, w), not a {type(cache).__name__}")
            db = np.zeros(dout.shape[1])
            np.add.at(db, np.arange(db.size), dout.sum(axis=0))
            return dout @ w.T, x.T @ dout, db
        ''',
        ("layers", 1): "return np.subtract(dout, dout * cache ** 2)",
        ("penalty", 0): r'''
            match mask:
                case None:
                    keep = np.ones(q.shape[:-1])
                case given:
                    keep = np.asarray(given, dtype=float)
            if (n := q.shape[-1]) < 1:
                raise ValueError(f"{type(q).__name__} with no actions")
            excess = (q.sum(axis=-1) - 1.0) * keep
            dq = np.zeros_like(q)
            dq += (2.0 * kappa * excess)[..., None]
            return float(kappa * np.sum(excess * excess)), dq
        ''',
        ("lambda_returns", 0): r'''
            match r.shape:
                case (T, B):
                    out = np.zeros((T, B))
                case other:
                    raise ValueError(f"rewards of shape {other}")
            g = boot[T].copy()
            t = T - 1
            while t >= 0:
                g = r[t] + d[t] * ((1.0 - lam[t]) * boot[t + 1] + lam[t] * g)
                out[t] = g
                t -= 1
            return out
        ''',
        ("curriculum", 0): r'''
            if not isinstance(solved_fraction, (int, float, np.floating)):
                raise TypeError(f"{type(self).__name__}.record: a number, not {type(solved_fraction)}")
            self.run = (self.run + 1) if (reached := solved_fraction >= self.threshold) else 0
            if advanced := self.run >= self.streak:
                self.run = 0
            entry = dict(level=self.level, solved=float(solved_fraction), advanced=advanced)
            entry.update({key: value for key, value in info.items()})
            self.history.append(entry)
            if advanced:
                self.level = self.level + self.increment
            return advanced
        ''',
    },
    "try/except, local imports, nested helpers": {
        ("layers", 0): r'''
            import numpy as np
            def transpose(a):
                return a.T
            try:
                x, w = cache
            except (TypeError, ValueError) as err:
                raise TypeError("affine_backward: cache is (x, w) as affine_forward's __init__-free tuple") from err
            return np.dot(dout, transpose(w)), np.dot(transpose(x), dout), np.sum(dout, axis=0)
        ''',
        ("layers", 1): r'''
            try:
                y = np.asarray(cache, dtype=np.float64)
            except (TypeError, ValueError) as err:
                raise TypeError(f"{type(cache).__name__}: {err}") from None
            return np.multiply(dout, np.subtract(1.0, np.square(y)))
        ''',
        ("gru_backward", 0): r'''
            import numpy as np
            x, h, z, r, rh, cand, p = cache
            H = h.shape[1]
            sig = lambda s: s * (1.0 - s)            # sigmoid' from its output
            try:
                wx, wh, whh = p["wx"], p["wh"], p["whh"]
            except KeyError as err:
                raise KeyError(f"a GRU parameter is missing: {err}") from None
            dcand = dh_new * z * (1.0 - cand ** 2)
            dz = dh_new * (cand - h) * sig(z)
            drh = np.einsum("bj,ij->bi", dcand, whh)
            dr = drh * h * sig(r)
            dax = np.hstack([dz, dr, dcand])
            dah = dax[:, :2 * H]
            grads = {"wx": x.T @ dax, "bx": dax.sum(0), "wh": h.T @ dah, "bh": dah.sum(0),
                     "whh": rh.T @ dcand, "bhh": dcand.sum(0)}
            return dax @ wx.T, dh_new * (1.0 - z) + drh * r + dah @ wh.T, grads
        ''',
        ("penalty", 0): r'''
            def excess_of(values: np.ndarray) -> np.ndarray:
                return values.sum(axis=-1) - 1.0
            e = excess_of(q) * (1.0 if mask is None else np.asarray(mask))
            dq = np.empty_like(q)
            dq[...] = 2.0 * kappa * e[..., None]
            return kappa * float(e.ravel() @ e.ravel()), dq
        ''',
        ("lambda_returns", 0): r'''
            T = len(r)
            G = [None] * T + [boot[T]]
            for t in range(T - 1, -1, -1):
                G[t] = r[t] + d[t] * ((1.0 - lam[t]) * boot[t + 1] + lam[t] * G[t + 1])
            return np.stack(G[:T])
        ''',
        ("dynamic_discount", 0): r'''
            discount = gamma * np.divide(v[1:], v[:-1])
            target = r / v[:-1]
            target[~term] += (discount * q[1:])[~term]       # in place on a new array
            return target
        ''',
    },
    "list comprehensions and a namedtuple match": {
        ("gru_backward", 0): r'''
            match cache:
                case (x, h, z, r, rh, cand, p):
                    pass
            H = h.shape[1]
            dcand = dh_new * z * (1.0 - cand * cand)
            dz = dh_new * (cand - h) * z * (1.0 - z)
            drh = dcand @ p["whh"].T
            dr = drh * h * r * (1.0 - r)
            blocks = [dz, dr, dcand]
            dax = np.concatenate([b for b in blocks], axis=1)
            dah = np.concatenate(blocks[:2], axis=1)
            grads = {name: value for name, value in (("wx", x.T @ dax), ("bx", dax.sum(axis=0)), ("wh", h.T @ dah),
                                                     ("bh", dah.sum(axis=0)), ("whh", rh.T @ dcand),
                                                     ("bhh", dcand.sum(axis=0)))}
            dh = dh_new * (1.0 - z) + drh * r + dah @ p["wh"].T
            return dax @ p["wx"].T, dh, grads
        ''',
        ("lstm_backward", 0): r'''
            x, h, c, i, f, o, g, tc, p = cache
            dc = dc_new + dh_new * o * (1.0 - tc ** 2)
            gates = [(dc * g, i), (dc * c, f), (dh_new * tc, o)]
            da = np.concatenate([d * s * (1.0 - s) for d, s in gates] + [dc * i * (1.0 - g ** 2)], axis=1)
            grads = dict(wx=x.T @ da, bx=da.sum(axis=0), wh=h.T @ da, bh=np.sum(da, axis=0))
            return da @ p["wx"].T, da @ p["wh"].T, dc * f, grads
        ''',
        ("softmax_nll", 0): "softmax = np.exp(cache)\nreturn dlogp - softmax * np.sum(dlogp, axis=-1, keepdims=True)",
        ("softmax_nll", 1): r'''
            keep = np.ones(logp.shape[0], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
            rows = np.flatnonzero(keep)
            dlogp = np.zeros_like(logp)
            np.add.at(dlogp, (rows, targets[rows]), -1.0)
            return float(-sum(logp[b, targets[b]] for b in rows)), dlogp
        ''',
        ("curriculum", 0): r'''
            """Advance once `streak` validations in a row reach the threshold (paper section 5)."""
            reached: bool = bool(solved_fraction >= self.threshold)
            try:
                self.run = self.run + 1 if reached else 0
            finally:
                advanced = self.run >= self.streak
            self.run = 0 if advanced else self.run
            self.history += [dict(level=self.level, solved=float(solved_fraction), advanced=advanced, **info)]
            self.level += [0, self.increment][advanced]
            return advanced
        ''',
    },
}


@pytest.mark.parametrize("variant", list(HONEST))
def test_honest_variants_get_full_marks(submit, variant):
    bodies = HONEST[variant]
    names = sorted({name for name, _ in bodies})
    copy, tests = submit(names, bodies, honest=False)
    result = run(copy, tests)
    full(result, *names)
    assert result["earned"] == result["total"]


def test_an_honest_tanh_backward_that_works_on_a_copy_of_dout(submit):
    bodies = {("layers", 0): solution("layers"),
              ("layers", 1): "dx = dout.copy()          # in place on a copy\ndx *= 1.0 - cache * cache\nreturn dx"}
    copy, tests = submit(["layers"], bodies)
    full(run(copy, tests), "layers")


def test_there_are_at_least_twenty_honest_variants():
    assert sum(len(v) for v in HONEST.values()) >= 20


# ------------------------------------------------------------------------------------------------------------
# Planted bugs lose points with messages that name them

PLANTED = {
    # dr without its factor h: the r gate's pre-activation gradient, and all that reads it, is wrong
    "gru_backward": r'''
        x, h, z, r, rh, cand, p = cache
        H = h.shape[1]
        dcand = dh_new * z * (1.0 - cand * cand)
        dz = dh_new * (cand - h) * z * (1.0 - z)
        drh = dcand @ p["whh"].T
        dr = drh * r * (1.0 - r)
        dax = np.concatenate([dz, dr, dcand], axis=1)
        dah = dax[:, :2 * H]
        grads = {"wx": x.T @ dax, "bx": dax.sum(0), "wh": h.T @ dah, "bh": dah.sum(0),
                 "whh": rh.T @ dcand, "bhh": dcand.sum(0)}
        return dax @ p["wx"].T, dh_new * (1.0 - z) + drh * r + dah @ p["wh"].T, grads
    ''',
    # dq without the factor 2
    "penalty": r'''
        excess = q.sum(axis=-1) - 1.0
        if mask is not None:
            excess = excess * np.asarray(mask, dtype=float)
        return float(kappa * np.sum(excess ** 2)), np.repeat((kappa * excess)[..., None], q.shape[-1], axis=-1)
    ''',
    # the streak's count is not reset after an advance
    "curriculum": r'''
        self.run = self.run + 1 if solved_fraction >= self.threshold else 0
        advanced = self.run >= self.streak
        self.history.append(dict(level=self.level, solved=float(solved_fraction), advanced=advanced, **info))
        if advanced:
            self.level += self.increment
        return advanced
    ''',
}


def test_planted_bugs_lose_points_with_clear_messages(submit):
    copy, tests = submit([*PLANTED, "lambda_returns"], PLANTED)
    result = run(copy, tests)
    text = messages(result, "gru_backward")
    assert result["assignments"]["gru_backward"]["earned"] == 0 and "wx[r]" in text and "wh[r]" in text, text
    assert "wx[z]" not in text.split("right:")[0], text
    zero(result, "penalty", "wrong gradient of dq")
    assert result["assignments"]["curriculum"]["earned"] < result["assignments"]["curriculum"]["total"]
    assert "run" in messages(result, "curriculum")
    full(result, "lambda_returns")
