"""Every size goes through one estimate (tinyalgo.host.memory) compared with
what this process can get: the memory available, what RLIMIT_AS leaves it,
its cgroup's limit.  Requests beyond it are refused before any work with one
line naming the size, in the API and on the command line; under a low
RLIMIT_AS the refusal comes from the address-space limit, not the machine's."""
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.environment import Environment
from tinyalgo.host.memory import MemoryRequestError, available, check_memory

GiB = 2 ** 30


@pytest.mark.parametrize("make,message", [
    (lambda: Environment("copy", batch_size=10 ** 10), "batch_size 10000000000 needs about"),
    (lambda: Environment("walk", complexity=10 ** 12), "complexity 1000000000000 needs about"),
    (lambda: Environment("copy").set_complexity(10 ** 11), "complexity 100000000000 needs about"),
    (lambda: Controller(ControllerConfig((5, 5, 2, 3, 3), n_actions=4, n_symbols=5, units=10 ** 6)),
     "units 1000000 needs about"),
])
def test_a_constructor_refuses_a_size_beyond_what_the_process_can_get(make, message):
    with pytest.raises(MemoryRequestError, match=message) as err:
        make()
    assert "\n" not in str(err.value) and "choose a smaller value" in str(err.value)


def test_the_check_names_the_largest_part_and_the_limit():
    with pytest.raises(MemoryRequestError) as err:
        check_memory([(3 * GiB, "--units 9", "parameters"), (GiB, "--batch 2", "lanes")], limit=(2 * GiB, "the test's"))
    assert str(err.value) == ("--units 9 needs about 4.0 GiB of memory (parameters: 3.0 GiB), more than the test's"
                              " (2.0 GiB); choose a smaller value")
    check_memory([(GiB, "--units 9", "parameters")], limit=(2 * GiB, "the test's"))       # fits: no error


LIMITED = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2 ** 30, 3 * 2 ** 30))
from tinyalgo.host.memory import available
print(*available(), sep="|")
"""


def limited_run(argv, limit=3 * GiB, cwd=None):
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, preexec_fn=cap, cwd=cwd)


def test_rlimit_as_is_the_limit_when_it_is_the_least():
    run = subprocess.run([sys.executable, "-c", LIMITED], capture_output=True, text=True, timeout=60)
    size, reason = run.stdout.strip().split("|")
    assert reason == "the address space RLIMIT_AS leaves this process" and 0 < int(size) < 3 * GiB
    assert available()[0] > 0


FIXTURE = str(Path(__file__).parent / "fixtures" / "q-copy" / "checkpoint.npz")
# every command that allocates in proportion to a number it is given (their --out: "r"); trace's
# --complexity and --width have ranges that fit in any memory (tests/test_bad_input.py)
BOMBS = [
    (["train", "--units", "12000", "--budget", "1000", "--out", "r"], "--units 12000 needs about"),
    (["evaluate", FIXTURE, "--instances", "1000000"], "--instances 1000000 at complexity"),
    (["automaton", FIXTURE, "--out", "r", "--complexities", "10000000"], "at --complexities up to 10000000"),
    (["automaton", FIXTURE, "--out", "r", "--instances", "10000000"], "--instances 10000000 at --complexities"),
    (["automaton", FIXTURE, "--out", "r", "--fidelity", "100000000"], "--fidelity 100000000 needs about"),
    (["table2", "--digits", "100000000", "--out", "r"], "--digits 100000000 needs about"),
    (["table2", "--max-digits", "100000000", "--out", "r"], "--max-digits 100000000 needs about"),
    (["table2", "--instances", "100000000", "--out", "r"], "--instances 100000000 needs about"),
    (["experiment", "figure5", "--complexities", "10", "100000000", "--out", "r"], "at complexity 100000000 needs"),
    (["show", "--task", "copy", "--complexity", "100000000"], "--complexity 100000000 needs about"),
]


@pytest.mark.parametrize("argv,message", BOMBS, ids=lambda a: " ".join(a)[:50] if isinstance(a, list) else "")
def test_a_command_under_a_low_rlimit_as_refuses_before_any_work(argv, message, tmp_path):
    run = limited_run([sys.executable, "-m", "tinyalgo"] + argv, cwd=tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and message in lines[0], run.stderr[-2000:]
    assert "RLIMIT_AS" in lines[0] and "Traceback" not in run.stderr and run.stdout == ""
    assert list(tmp_path.iterdir()) == []


CONSTRUCTOR = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2 ** 30, 3 * 2 ** 30))
from tinyalgo.host.memory import MemoryRequestError
try:
    exec(sys.argv[1])
except MemoryRequestError as err:
    print("refused:", err)
"""
CONSTRUCTORS = [
    ("from tinyalgo.environment import Environment; Environment('copy', batch_size=10 ** 8)", "batch_size 100000000"),
    ("from tinyalgo.environment import Environment; Environment('walk', complexity=10 ** 8)", "complexity 100000000"),
    ("from tinyalgo.controller import Controller, ControllerConfig\n"
     "Controller(ControllerConfig((5, 5, 2, 3, 3), n_actions=4, n_symbols=5, units=20000))", "units 20000"),
    ("import gymnasium as gym, tinyalgo.gym; gym.make('tinyalgo/Copy-v0', complexity=10 ** 8)",
     "complexity 100000000"),
    ("import gymnasium as gym, tinyalgo.gym; gym.make_vec('tinyalgo/Copy-v0', num_envs=10 ** 8)", "100000000"),
]


@pytest.mark.parametrize("code,message", CONSTRUCTORS, ids=[m for _, m in CONSTRUCTORS])
def test_a_constructor_under_a_low_rlimit_as_refuses_before_allocating(code, message):
    if "gymnasium" in code:
        pytest.importorskip("gymnasium")
    run = limited_run([sys.executable, "-c", CONSTRUCTOR, code.replace("\\n", "\n")])
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.stdout.startswith("refused: ") and message in run.stdout and "RLIMIT_AS" in run.stdout, run.stdout


def test_a_gym_environment_refuses_a_complexity_beyond_what_the_process_can_get():
    gym = pytest.importorskip("gymnasium")
    import tinyalgo.gym  # noqa: F401  (registers the environments)
    with pytest.raises(MemoryRequestError, match="complexity 1000000000000 needs about"):
        gym.make("tinyalgo/Copy-v0", complexity=10 ** 12)
    env = gym.make("tinyalgo/Copy-v0", complexity=50)
    env.reset(seed=0)
    with pytest.raises(MemoryRequestError, match=r"options\['complexity'\] 1000000000000 needs about"):
        env.reset(options={"complexity": 10 ** 12})
