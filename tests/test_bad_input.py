"""Every bad input is refused before any work starts.

Command line: exit status 2, one line on stderr naming the option and what
it allows, nothing written.  Python API: a ValueError saying what was wrong
and what is allowed.  One row per case, as a user would mistype it."""
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
from tinyalgo.cli import main
from tinyalgo.controller import Controller
from tinyalgo.controller_config import ControllerConfig
from tinyalgo.runs.fileio import TEMP_PREFIX, atomic_write_bytes, remove_stale_temporaries
from tinyalgo.rewards import write_rewards
from tinyalgo.runs.rundir import held

FIXTURES = Path(__file__).parent / "fixtures"
UNWRITABLE = "/proc/tinyalgo-run" if os.geteuid() == 0 else "readonly/run"   # root writes anywhere else


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A folder with the files the cases name: a file, a run, checkpoints, CSVs."""
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("not a folder\n")
    shutil.copytree(FIXTURES / "q-copy", "run")
    controller, extra = load_checkpoint("run/checkpoint.npz")
    for name, value in (("nan", np.nan), ("inf", np.inf)):
        broken = Controller(controller.config, params={k: v.copy() for k, v in controller.params.items()})
        broken.params["q.w"][0, 0] = value
        save_checkpoint(f"{name}.npz", broken, extra)
    save_checkpoint("bare.npz", controller)                        # no task: --task is needed, and must fit
    os.mkdir("stateless")                                          # a Q-learning run without its run state
    save_checkpoint("stateless/checkpoint.npz", controller, {k: v for k, v in extra.items() if k != "run"})
    arrays = dict(np.load("run/checkpoint.npz"))
    np.savez("list.npz", **dict(arrays, __header__=np.array("[1, 2]")))      # a header that is a JSON list
    Path("binary.csv").write_bytes(bytes(range(256)) * 4)
    Path("columns.csv").write_text("task,controller,seed\ncopy,gru,0\n")
    header = "task,controller,seed,complexity,solved,char_accuracy,trained_level,solved_1000_in_training," \
             "train_seconds,chars"
    Path("values.csv").write_text(header + "\ncopy,gru,zero,10,1.0,1.0,10,True,1.0,100\n")
    os.mkdir("readonly")
    os.chmod("readonly", 0o500)
    yield tmp_path
    os.chmod(tmp_path / "readonly", 0o700)


def listing(folder):
    return sorted((str(p.relative_to(folder)), p.is_file() and (p.stat().st_size, p.stat().st_mtime_ns))
                  for p in Path(folder).rglob("*"))


BIG = str(10 ** 12)

CASES = [
    # output paths: a file, inside a file, not writable, empty
    (["train", "--out", "afile"], "--out afile is a file"),
    (["train", "--out", "afile/run"], "--out afile/run is inside the file"),
    (["train", "--out", UNWRITABLE], f"--out {UNWRITABLE}: cannot write in"),
    (["train", "--out", ""], "argument --out: must not be empty"),
    (["train", "--out", "run"], "--out run already holds a run"),
    (["evaluate", "run/checkpoint.npz", "--json", "run"], "--json run is a folder"),
    (["evaluate", "run/checkpoint.npz", "--json", "afile/e.json"], "--json afile/e.json is inside the file"),
    (["evaluate", "run/checkpoint.npz", "--json", ""], "argument --json: must not be empty"),
    (["experiment", "table1", "--out", "afile"], "--out afile is a file"),
    (["experiment", "figure3", "--out", "afile/figures"], "--out afile/figures is inside the file"),
    # sizes that would exhaust memory: refused with the estimate
    (["show", "--complexity", BIG], f"--complexity {BIG} needs about"),
    (["show", "--task", "addition", "--length", BIG], f"--complexity {2 * 10 ** 12} needs about"),
    (["show", "--width", BIG], f"--width {BIG} needs about"),
    (["evaluate", "run/checkpoint.npz", "--instances", str(10 ** 9)], f"--instances {10 ** 9}"),
    (["evaluate", "run/checkpoint.npz", "--lengths", BIG], f"at complexity {BIG} needs about"),
    (["train", "--units", str(10 ** 7)], f"--units {10 ** 7} needs about"),
    (["train", "--confirm-length", BIG], f"--confirm-length {BIG} needs about"),
    (["train-supervised", "--target", BIG], f"--target {BIG} needs about"),
    (["experiment", "figure3", "--complexities", BIG], "needs about"),
    (["experiment", "table1", "--confirm-length", BIG], f"--confirm-length {BIG} needs about"),
    # negative seeds, named
    (["show", "--seed", "-1"], "argument --seed: must be at least 0"),
    (["train", "--seed", "-1"], "argument --seed: must be at least 0"),
    (["evaluate", "run/checkpoint.npz", "--seed", "-3"], "argument --seed: must be at least 0"),
    (["experiment", "table1", "--first-seed", "-1"], "argument --first-seed: must be at least 0"),
    # options the command does not have, combinations argparse refuses, a resumed run's options
    (["train", "--target", "100"], "unrecognized arguments: --target 100"),
    (["train", "--mode", "supervised"], "unrecognized arguments: --mode supervised"),
    (["train-supervised", "--gamma", "0.9"], "unrecognized arguments: --gamma 0.9"),
    (["train-supervised", "--no-penalty"], "unrecognized arguments: --no-penalty"),
    (["train-supervised", "--resume", "--out", "run"], "unrecognized arguments: --resume"),
    (["train", "--discount", "0.99", "--gamma", "0.9"], "argument --gamma: not allowed with argument --discount"),
    (["train", "--resume", "--out", "run", "--units", "32"], "--units: the run in run was made with 16, not 32;"
                                                             " --resume continues a run as it was made"),
    (["train", "--resume", "--out", "run", "--task", "reverse"], "--task: the run in run was made with copy, not"
                                                                 " reverse"),
    (["train", "--resume", "--out", "run", "--no-penalty"], "--penalty: the run in run was made with on, not off"),
    (["train", "--resume"], "--resume: runs/q-addition-gru-s0 holds no run to continue"),
    (["train", "--resume", "--out", "norun"], "--resume: norun holds no run to continue"),
    (["automaton", "run/checkpoint.npz", "--out", "m", "--top", "5", "--complexities", "10"],
     "argument --complexities: not allowed with argument --top"),
    (["experiment", "table1", "--controllers", "ff"], "unrecognized arguments: --controllers ff"),
    (["experiment", "table1", "--instances", "5"], "unrecognized arguments: --instances 5"),
    (["experiment", "figure3", "--columns", "full"], "unrecognized arguments: --columns full"),
    (["experiment", "figure3", "--gamma", "0.9"], "unrecognized arguments: --gamma 0.9"),
    (["experiment", "table1", "--reference"], "unrecognized arguments: --reference"),
    (["experiment", "appendix-c", "--reward", "binary"], "unrecognized arguments: --reward binary"),
    (["experiment", "appendix-b", "--summarize", "--workers", "1"],
     "argument --workers: not allowed with argument --summarize"),
    (["experiment", "table1", "--workers", "2", "--summarize"], "argument --summarize: not allowed with argument"
                                                                " --workers"),
    (["experiment", "table1", "--summarize", "--out", "run"], "--out run: no run logs in run/runs"),
    (["experiment", "figure3", "--summarize"], "unrecognized arguments: --summarize"),
    (["evaluate", "run/checkpoint.npz", "--lengths", "10", "--complexities", "20"],
     "argument --complexities: not allowed with argument --lengths"),
    # --merge CSVs, before the sweep
    (["experiment", "figure3", "--merge", "missing.csv"], "--merge missing.csv: no such file"),
    (["experiment", "figure3", "--merge", "run"], "--merge run: is a folder"),
    (["experiment", "figure3", "--merge", "binary.csv"], "--merge binary.csv is not a text CSV file"),
    (["experiment", "figure3", "--merge", "columns.csv"], "--merge columns.csv lacks the column(s) complexity"),
    (["experiment", "figure3", "--merge", "values.csv"], "--merge values.csv: a row cannot be read"),
    # checkpoints: not finite, another task, base or fields
    (["evaluate", "nan.npz"], "parameter q.w has 1 NaN or infinite values"),
    (["evaluate", "inf.npz"], "parameter q.w has 1 NaN or infinite values"),
    (["evaluate", "run/checkpoint.npz", "--task", "reverse"], "trained on copy, not on reverse"),
    (["evaluate", "run/checkpoint.npz", "--base", "8"], "trained in base 10, not in base 8"),
    (["evaluate", "bare.npz", "--task", "walk"], "walk in base 10 needs"),
    (["evaluate", "bare.npz", "--task", "copy", "--base", "2"], "copy in base 2 needs"),
    (["evaluate", "bare.npz"], "does not say which task it was trained on: give --task"),
    (["evaluate", "afile"], "checkpoint afile: not a readable .npz archive"),
    # budgets and numbers
    (["train", "--budget", "0"], "argument --budget: must be at least 1; got 0"),
    (["train", "--budget", "3e7"], "argument --budget: expected an integer, got '3e7'"),
    (["experiment", "table1", "--budget", "0"], "argument --budget: must be at least 1"),
    (["train", "--gamma", "nan"], "argument --gamma: must be in (0, 1]; got nan"),
    (["train", "--solved-lr", "-0.1"], "argument --solved-lr: must be at least 0"),
    (["evaluate", "run/checkpoint.npz", "--epsilon", "nan"], "argument --epsilon: epsilon must be in [0, 1]"),
    (["evaluate", "run/checkpoint.npz", "--instances", "0"], "argument --instances: must be at least 1"),
    (["show", "--task", "copy", "--complexity", "0"], "complexity must be an integer of at least 1 for copy"),
    (["show", "--task", "divide"], "unknown task 'divide'; allowed: copy, reverse"),
    (["show", "--tsak", "copy"], "unrecognized arguments: --tsak copy"),
    # inside a trained controller: outputs before the work, the checkpoint's task
    (["automaton", "run/checkpoint.npz", "--out", "afile"], "--out afile is a file"),
    (["automaton", "run/checkpoint.npz", "--task", "reverse", "--out", "machine"], "trained on task 'copy', not"),
    (["trace", "run/checkpoint.npz", "--png", "run"], "--png run is a folder"),
    (["trace", "run/checkpoint.npz", "--complexity", "0"], "--complexity: must be from 1 to 10,000"),
    (["trace", "missing.npz"], "no such file"),
    (["trace", "run/checkpoint.npz", "--complexity", "5000000000"], "--complexity: must be from 1 to 10,000"),
    (["trace", "run/checkpoint.npz", "--complexity", "10000000"], "--complexity: must be from 1 to 10,000: every"
                                                                  " step is recorded and printed; got 10,000,000"),
    (["trace", "run/checkpoint.npz", "--width", "1000000000"], "--width: must be from 1 to 200 columns each side"
                                                               " of the head; got 1,000,000,000"),
    (["train", "--resume", "--out", "stateless"], "stateless/checkpoint.npz has no extra.run (the run's state): it"
                                                  " cannot be resumed"),
    (["evaluate", "list.npz"], "list.npz: its header is a JSON list, not an object"),
    (["table2", "--out", "afile"], "--out afile is a file"),
    (["table2", "--digits", "1000000000"], "--digits 1000000000 needs about"),
    (["experiment", "appendix-b", "--tasks", "multiplication", "--bases", "2", "--out", "ab"],
     "--tasks multiplication with --bases 2: no task is valid in these bases"),
    (["experiment", "figure5", "--complexities", "10", "1000000000000", "--out", "f5"],
     "--instances 50 at complexity 1000000000000 needs about"),
    (["automaton", "run/checkpoint.npz", "--out", "m", "--complexities", "1000000000000"],
     "--instances 50 at --complexities up to 1000000000000 needs about"),
    (["automaton", "run/checkpoint.npz", "--out", "m", "--instances", "1000000000"],
     "--instances 1000000000 at --complexities up to 100 needs about"),
    (["automaton", "run/checkpoint.npz", "--out", "m", "--fidelity", "1000000000000"],
     "--fidelity 1000000000000 needs about"),
    (["table2", "--max-digits", "1000000000"], "--max-digits 1000000000 needs about"),
    (["table2", "--instances", "1000000000"], "--instances 1000000000 needs about"),
    (["train-supervised", "--task", "addition3", "--base", "2"],
     "--task 'addition3' needs a base of at least 3; got base 2"),
]


@pytest.mark.parametrize("argv,message", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_the_command_line_refuses_bad_input_before_work(argv, message, workdir, capsys):
    before = listing(workdir)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err, captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.out == ""                                 # refused before the work, so nothing printed
    assert listing(workdir) == before                         # and nothing written


# ------------------------------------------------------------------ Python API
def gru(units=8, layers=1, core="gru"):
    config = ControllerConfig(obs_sizes=(17, 17, 2, 3, 3), n_actions=4, n_symbols=17, core=core, units=units,
                              layers=layers)
    return Controller(config, rng=np.random.default_rng(0))


def obs(batch=3):
    return np.zeros((batch, 5), dtype=np.int64)


STEPS = [
    (lambda c: c.step(obs(3), c.initial_state(4)), r"must hold float64 arrays of shape \(3, 8\) \(lanes, units\),"
                                                    r" the controller's dtype; got shape \(4, 8\)"),
    (lambda c: c.step(obs(3), gru(units=9).initial_state(3)), r"shape \(3, 8\) \(lanes, units\), the controller's"
                                                              r" dtype; got shape \(3, 9\)"),
    (lambda c: c.step(obs(3), [(c.initial_state(3)[0][0].astype(np.int64),)]), r"float64 arrays .* of int64"),
    (lambda c: c.step(obs(3), [(c.initial_state(3)[0][0].astype(np.float32),)]),
     r"must hold float64 arrays of shape \(3, 8\) \(lanes, units\), the controller's dtype; got shape \(3, 8\)"
     r" of float32"),
    (lambda c: c.step(obs(3), [(np.zeros((3, 8)).tolist(),)]), "got list"),
    (lambda c: c.step(obs(3), gru(core="lstm").initial_state(3)), r"tuple of 1 array\(s\) for a GRU core \(h\); got"
                                                                    r" tuple of 2"),
    (lambda c: c.step(obs(3), None), r"must be a list of 1 tuple\(s\) .* \(initial_state\(3\)\); got NoneType"),
    (lambda c: c.step(obs(3), []), r"with 1 layer\(s\) must be .*; got a list of 0"),
    (lambda c: c.step(obs(3), c.initial_state(3), reset=np.ones(4, bool)), r"reset must be None or a bool array of"
                                                                            r" shape \(3,\), one flag per lane"),
    (lambda c: c.step(obs(3), c.initial_state(3), reset=np.ones((3, 1), bool)), r"shape \(3,\), one flag per lane"),
    (lambda c: c.initial_state(0), "batch must be a positive integer; got 0"),
    (lambda c: Controller(c.config, params={k: v for k, v in c.params.items() if k != "q.w"}),
     r"params do not match the configuration \(GRU-8, 1 layer\(s\)\): missing \['q.w'\], unexpected \[\]"),
    (lambda c: Controller(c.config, params=dict(c.params, extra=np.zeros(3))), r"unexpected \['extra'\]"),
    (lambda c: Controller(c.config, params=dict(c.params, **{"q.w": np.zeros((8, 5))})),
     r"parameter q.w must have shape \(8, 4\); got \(8, 5\)"),
    (lambda c: Controller(c.config.to_dict()), "config must be a ControllerConfig; got dict"),
]


@pytest.mark.parametrize("call,message", STEPS, ids=[m[:40] for _, m in STEPS])
def test_the_controller_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call(gru())


def test_a_good_state_passes_the_checks():
    c = gru(layers=2, core="lstm")
    q, logp, state, _ = c.step(obs(3), c.initial_state(3), reset=np.array([True, False, True]))
    q2, _, _, _ = c.step(obs(3), state)
    assert q.shape == (3, 4) and len(state) == 2 and len(state[0]) == 2 and np.isfinite(q2).all()


PROBS = np.full((2, 17), 1 / 17)
REWARD_CASES = [
    ("continuous", np.where(np.eye(2, 17, dtype=bool), np.nan, PROBS), r"got 2 NaN or infinite value\(s\)"),
    ("discretized", np.where(np.eye(2, 17, dtype=bool), np.inf, PROBS), "finite, in"),
    ("continuous", -PROBS, "got values from -0.0588"),
    ("continuous", PROBS[:, :5], r"shape \(2, V\) with V >= 10 symbols; got \(2, 5\)"),
    ("continuous", None, r"Appendix C\) need the symbol probabilities; got None"),
    ("shaped", PROBS, "reward must be one of binary, discretized, continuous"),
]


@pytest.mark.parametrize("kind,probs,message", REWARD_CASES)
def test_the_appendix_c_rewards_refuse_bad_probabilities(kind, probs, message):
    write = np.ones(2, dtype=bool)
    with pytest.raises(ValueError, match=message):
        write_rewards(kind, write, write, np.zeros(2, dtype=np.int64), probs, 10)


def test_good_probabilities_give_rewards():
    write = np.ones(2, dtype=bool)
    rewards = write_rewards("continuous", write, write, np.zeros(2, dtype=np.int64), PROBS, 10)
    assert np.allclose(rewards, 1 / 17)


# ------------------------------------------------------- interrupted writes
KILLED_WRITER = """
import os, signal, sys
import tinyalgo.runs.fileio as fileio
def killed(src, dst):
    os.kill(os.getpid(), signal.SIGKILL)          # killed between writing and renaming
fileio.os.replace = killed
fileio.atomic_write_bytes(sys.argv[1], b"new contents")
"""


def test_a_killed_write_leaves_its_target_and_no_temporary_file_after_the_next_write(tmp_path):
    target = tmp_path / "log.json"
    target.write_bytes(b"old contents")
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], capture_output=True)
    assert done.returncode == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)]
    assert len(left) == 1 and target.read_bytes() == b"old contents"          # the kill left its temporary file
    atomic_write_bytes(tmp_path / "other.json", b"{}")                          # the next write in the folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.json", "other.json"]


def test_the_temporary_files_of_running_processes_are_kept(tmp_path):
    mine = tmp_path / f"{TEMP_PREFIX}{os.uname().nodename.replace('.', '-')}.{os.getpid()}.x.json.abc.tmp"
    other_host = tmp_path / f"{TEMP_PREFIX}otherhost.1.x.json.abc.tmp"
    mine.write_bytes(b"")
    other_host.write_bytes(b"")
    assert remove_stale_temporaries(tmp_path) == []
    assert mine.exists() and other_host.exists()


def test_a_run_start_removes_a_stale_temporary_file(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = out / f"{TEMP_PREFIX}{os.uname().nodename.replace('.', '-')}.{int(dead.stdout)}.checkpoint.npz.q.tmp"
    stale.write_bytes(b"half a checkpoint")
    assert main(["train", "--task", "copy", "--units", "8", "--budget", "300", "--confirm-length", "0",
                 "--out", str(out)]) == 0
    assert not stale.exists() and (out / "checkpoint.npz").exists()


def test_a_run_another_process_trains_is_refused_before_work(workdir, capsys):
    before = listing(workdir)
    with held("run"):                                           # another tinyalgo is training it
        assert main(["train", "--resume", "--out", "run"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "tinyalgo: error: run: another process is training this run; wait for it to end\n"
    assert captured.out == "" and listing(workdir) == before


EXPLORED = [
    (np.zeros(4, dtype=bool), r"explored must be a bool array of shape \(3,\), one flag per lane; got shape \(4,\)"),
    (np.zeros((3, 1), dtype=bool), r"shape \(3,\), one flag per lane; got shape \(3, 1\) of bool"),
    (np.array([0.0, 1.0, 0.0]), r"got shape \(3,\) of float64"),
    (np.array([0, 2, 1]), r"explored must hold True/False \(or 0/1\); got values from 0 to 2"),
    (np.array([-1, 0, 0]), r"got values from -1 to 0"),
]


@pytest.mark.parametrize("explored,message", EXPLORED)
def test_the_environment_refuses_a_bad_explored_flag(explored, message):
    from tinyalgo.environment import Environment
    env = Environment("copy", batch_size=3, complexity=4, seed=0)
    before = env.explored.copy()
    with pytest.raises(ValueError, match=message):
        env.step(np.zeros(3, dtype=np.int64), explored=explored)
    assert (env.explored == before).all() and (env.time == 0).all()        # refused before the step


def test_an_explored_flag_of_zeros_and_ones_is_taken():
    from tinyalgo.environment import Environment
    env = Environment("copy", batch_size=3, complexity=4, seed=0)
    env.step(np.zeros(3, dtype=np.int64), explored=[1, 0, 1])
    assert env.explored.astype(bool).tolist() == [True, False, True]


# ------------------------------------------------------- the API's loose ends
def test_a_controller_takes_a_seed_or_a_generator_and_refuses_anything_else():
    config = gru().config
    by_seed, by_generator = Controller(config, rng=5), Controller(config, rng=np.random.default_rng(5))
    for name, value in by_seed.params.items():
        np.testing.assert_array_equal(value, by_generator.params[name], err_msg=name)
    for rng, shown in (("5", "'5'"), (-1, "-1"), (True, "True"), (2.5, "2.5")):
        with pytest.raises(ValueError, match=f"rng must be a seed \\(an integer >= 0\\) or a numpy Generator;"
                                             f" got {shown}"):
            Controller(config, rng=rng)


def test_evaluate_refuses_complexities_that_are_not_a_list_of_integers_before_any_run():
    from tinyalgo.evaluation import GreedyAgent, evaluate

    class NoRuns(GreedyAgent):
        def start(self, batch):
            raise AssertionError("an instance was run before the complexities were checked")

    agent = NoRuns(gru())
    with pytest.raises(ValueError, match="complexities must be a list of integers of at least 1; got '10'"):
        evaluate(agent, "copy", "10")
    with pytest.raises(ValueError, match="each of complexities must be an integer of at least 1; got 0"):
        evaluate(agent, "copy", [10, 0])
    with pytest.raises(ValueError, match="complexities must be a list of integers of at least 1; got 10"):
        evaluate(agent, "copy", 10)


@pytest.mark.parametrize("controller,extra,message", [
    (None, None, "controller must be a tinyalgo Controller; got NoneType"),
    ("gru", "x", "extra must be a dict of JSON values \\(or None\\); got str"),
    ("gru", {"when": object()}, "extra must be a dict of JSON values .*: Object of type object is not JSON"),
    ("gru", {"mode": "qlearning", "run": "x"}, "field extra.run: found str; allowed: an object"),
])
def test_save_checkpoint_refuses_what_load_checkpoint_would_refuse_and_writes_nothing(tmp_path, controller, extra,
                                                                                      message):
    from tinyalgo.runs.checkpoint import CheckpointError
    path = tmp_path / "model.npz"
    with pytest.raises(CheckpointError, match=f"cannot save checkpoint {path}: {message}"):
        save_checkpoint(path, gru() if controller == "gru" else controller, extra)
    assert list(tmp_path.iterdir()) == []


def test_a_greedy_agent_needs_a_controller():
    from tinyalgo.evaluation import GreedyAgent
    with pytest.raises(ValueError, match=r"GreedyAgent needs a controller \(tinyalgo.controller.Controller\);"
                                         r" got None"):
        GreedyAgent(None)


@pytest.mark.parametrize("kw,message", [
    (dict(threshold=2), r"curriculum threshold must be a fraction in \(0, 1\] of the validation instances solved;"
                        r" got 2"),
    (dict(threshold=0.0), r"threshold must be a fraction in \(0, 1\]"),
    (dict(threshold="1"), r"threshold must be a fraction in \(0, 1\]"),
    (dict(streak=0), "curriculum streak must be an integer of at least 1; got 0"),
    (dict(spread=-1), "curriculum spread must be an integer of at least 0; got -1"),
    (dict(minimum=0), "curriculum minimum must be an integer of at least 1; got 0"),
])
def test_the_curriculum_refuses_bad_settings(kw, message):
    from tinyalgo.curriculum import Curriculum
    with pytest.raises(ValueError, match=message):
        Curriculum(**kw)
