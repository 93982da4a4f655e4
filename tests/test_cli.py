"""The command line: ``tinyalgo show`` and one-line errors with status 2."""
import argparse
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tinyalgo.cli import main


def test_show_steps_through_the_ground_truth(capsys):
    assert main(["show", "--task", "addition", "--complexity", "12", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "frame 1/" in out and "episode ended: all written, 7 of 7 outputs right" in out


def test_show_step_mode_quits_on_q(monkeypatch, capsys):
    monkeypatch.setattr("builtins.input", lambda prompt="": "q")
    assert main(["show", "--task", "copy", "--complexity", "5", "--step"]) == 0
    assert "frame 2/" not in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["show", "--task", "division"], "unknown task 'division'"),
    (["show", "--base", "12"], "base must be an integer from 2 to 10"),
    (["show", "--task", "multiplication", "--base", "2"], "needs a base of at least 3"),
    (["show", "--task", "reverse", "--complexity", "-1"], "complexity must be an integer of at least 2"),
    (["train", "--greedy-lanes", "20", "--budget", "1000"], "--greedy-lanes must be 0..19"
                                                            " (at least one lane explores)"),
])
def test_errors_are_one_line_with_status_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_python_dash_m_runs_without_traceback():
    done = subprocess.run([sys.executable, "-m", "tinyalgo", "show", "--task", "nope"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "unknown task" in done.stderr


@pytest.mark.slow
def test_train_then_resume_then_evaluate(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main(["train", "--task", "copy", "--units", "16", "--budget", "4000", "--out", out]) == 0
    assert (tmp_path / "run" / "checkpoint.npz").exists() and (tmp_path / "run" / "log.json").exists()
    assert main(["train", "--resume", "--out", out, "--budget", "8000"]) == 0
    text = capsys.readouterr().out
    assert "resuming" in text and "characters" in text
    assert main(["evaluate", out + "/checkpoint.npz", "--complexities", "10", "--instances", "5",
                 "--json", str(tmp_path / "e.json")]) == 0
    assert (tmp_path / "e.json").exists()
    capsys.readouterr()
    assert main(["evaluate", out + "/checkpoint.npz", "--complexities", "10", "--instances", "5", "--departures"]) == 0
    text = capsys.readouterr().out        # a barely trained copy model: failed instances, each with its first departure
    check_departures(text, complexity=10, instances=5)
    assert main(["evaluate", out + "/checkpoint.npz", "--complexities", "10", "12", "--epsilon", "0.05"]) == 0
    text = capsys.readouterr().out        # the greedy lines, then the same complexities acting as training lanes
    assert "acting as a training lane (epsilon 0.05)" in text and text.count("(complexity     1") == 4
    assert main(["evaluate", out + "/checkpoint.npz", "--epsilon", "1.5"]) == 2
    captured = capsys.readouterr()
    assert "epsilon must be in [0, 1]; got 1.5" in captured.err and captured.out == ""


DEPARTURE = re.compile(r"left them at step (\d+) \(output (\d+)\): (\S+) \(Q (-?\d+\.\d+)\)"
                       r" instead of (\S+) \(Q (-?\d+\.\d+)\)")


def check_departures(text: str, complexity: int, instances: int) -> None:
    """``evaluate --departures`` on copy: the instances the greedy line counts
    as failed (at least one), each listed once with how it ended and the
    greedy action it took instead of copy's ground truth (right+write)."""
    solved = float(re.search(rf"\(complexity +{complexity}\): solved +([\d.]+)%", text)[1]) / 100
    failed = int(re.search(rf"complexity {complexity}: (\d+) of {instances} failed;", text)[1])
    assert failed == round(instances * (1 - solved)) and failed >= 1, text
    lines = re.findall(r"^  instance +(\d+): ([a-z ]+); (.*)$", text, flags=re.M)
    assert len(lines) == failed and len({lane for lane, _, _ in lines}) == failed, text
    for lane, reason, where in lines:
        assert 0 <= int(lane) < instances and reason in ("wrong write", "timeout"), where
        if where != "never left the ground-truth actions":
            step, output, action, q_action, truth, q_truth = DEPARTURE.fullmatch(where).groups()
            assert truth == "right+write" and action != truth, where     # copy's ground truth, every step
            assert int(output) == int(step) < complexity, where           # each step before it wrote one output
            assert float(q_action) >= float(q_truth), where               # greedy: the taken action's Q is the max


def test_resume_of_a_missing_run_is_one_line(tmp_path, capsys):
    assert main(["train", "--resume", "--out", str(tmp_path / "none")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.slow
def test_resume_loads_the_best_tested_model(tmp_path, capsys):
    """A run's best tested model (best.npz) comes back on --resume; without
    the file the run says so and forgets it."""
    from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
    out = tmp_path / "run"
    assert main(["train", "--task", "copy", "--units", "16", "--budget", "4000", "--out", str(out)]) == 0
    controller, extra = load_checkpoint(out / "checkpoint.npz")
    extra["run"]["best"] = dict(solved=0.9, seconds=1.0, chars=2000, level=6)
    save_checkpoint(out / "checkpoint.npz", controller, extra)
    save_checkpoint(out / "best.npz", controller, dict(mode="qlearning-best", best=dict(extra["run"]["best"])))
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(out), "--budget", "6000"]) == 0
    assert "is missing" not in capsys.readouterr().out
    (out / "best.npz").unlink()
    save_checkpoint(out / "checkpoint.npz", controller, extra)
    assert main(["train", "--resume", "--out", str(out), "--budget", "8000"]) == 0
    assert "best.npz is missing: the run forgets its best tested model" in capsys.readouterr().out


@pytest.mark.slow
def test_the_best_tested_model_can_be_evaluated(tmp_path, capsys):
    """best.npz says which task and configuration it comes from, as checkpoint.npz does."""
    out = tmp_path / "run"
    assert main(["train", "--task", "copy", "--units", "24", "--budget", "300000", "--confirm-length", "200",
                 "--confirm-passes", "3", "--out", str(out)]) == 0
    assert (out / "best.npz").exists()
    capsys.readouterr()
    assert main(["evaluate", str(out / "best.npz"), "--complexities", "20", "--instances", "5"]) == 0
    assert "best.npz: copy (base 10), GRU-24" in capsys.readouterr().out


# ------------------------------------------------------------ a command line people understand
def test_version_comes_from_the_package(capsys):
    import tinyalgo
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"tinyalgo {tinyalgo.__version__}"


@pytest.mark.parametrize("command", [[], ["show"], ["train"], ["evaluate"], ["experiment"], ["trace"], ["table2"],
                                     ["automaton"]])
def test_every_option_has_help_with_its_default(command, capsys):
    from tinyalgo.cli.main import build_parser
    parser = build_parser()
    if command:
        parser = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == command[0])[1]
    for action in parser._actions:
        if action.option_strings and action.dest not in ("help", "version"):
            assert action.help and ("default" in action.help or action.required and "required" in action.help), \
                (command, action.dest)
    assert main(command + ["--help"]) == 0
    text = capsys.readouterr().out
    if command in ([], ["show"], ["train"]):
        assert "add3 = addition3" in text and "mul = multiplication" in text        # the task aliases


def test_show_explains_its_symbols_and_a_raised_complexity(capsys):
    assert main(["show", "--task", "addition", "--complexity", "2", "--seed", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("legend: [x] the cell under the head") and "q end marker" in out[0]
    shown = int(re.search(r"addition  complexity (\d+)", "\n".join(out))[1])
    assert shown > 2 and out[1].startswith(f"note: complexity 2 was raised to {shown}: addition draws two numbers")
    assert main(["show", "--task", "copy", "--complexity", "5"]) == 0
    assert "note:" not in capsys.readouterr().out                                      # copy draws what it is asked


def test_show_takes_a_length_in_digits(capsys):
    assert main(["show", "--task", "addition", "--length", "7"]) == 0
    assert "addition  complexity 14  step 0" in capsys.readouterr().out


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly():
    done = subprocess.run(f"{sys.executable} -m tinyalgo show --task addition --complexity 400 | head -1",
                          shell=True, capture_output=True, text=True, executable="/bin/bash")
    assert done.stdout.startswith("legend:") and done.stdout.count("\n") == 1
    assert done.stderr == ""
    done = subprocess.run(f"set -o pipefail; {sys.executable} -m tinyalgo show --complexity 400 | head -1",
                          shell=True, capture_output=True, text=True, executable="/bin/bash")
    assert done.returncode == 141 and done.stderr == ""                     # 128 + SIGPIPE, as `yes | head` ends


def test_evaluate_takes_lengths_and_prints_both(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main(["train", "--task", "reverse", "--units", "8", "--budget", "500", "--confirm-length", "0",
                 "--out", out]) == 0
    capsys.readouterr()
    assert main(["evaluate", out + "/checkpoint.npz", "--lengths", "10", "30", "--instances", "3"]) == 0
    text = capsys.readouterr().out
    assert "reverse (base 10)" in text and "length = complexity / 2" in text
    assert re.search(r"length +10 \(complexity +20\): solved", text)
    assert re.search(r"length +30 \(complexity +60\): solved", text)
    assert main(["evaluate", out + "/checkpoint.npz", "--complexities", "21", "--instances", "3"]) == 0
    assert re.search(r"length +10.5 \(complexity +21\): solved", capsys.readouterr().out)


def test_evaluate_says_when_the_sampler_drew_longer_instances_than_the_length(tmp_path, capsys):
    """Addition draws L = max(c // 2, a random 1..3) digits: "length 1" runs
    boards of 1-3 digits, which the line's note says; length 50's are all 50."""
    out = str(tmp_path / "run")
    assert main(["train", "--task", "addition", "--units", "8", "--budget", "300", "--confirm-length", "0",
                 "--out", out]) == 0
    capsys.readouterr()
    assert main(["evaluate", out + "/checkpoint.npz", "--lengths", "1", "50", "--instances", "30",
                 "--json", str(tmp_path / "e.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = {n: i for i, line in enumerate(lines) for n in (1, 50) if re.match(rf"length +{n} \(", line)}
    assert lines[at[1] + 1] == ("  note: the instances drawn have complexity 2..6: addition draws two numbers of"
                                " L = max(c // 2, a random 1..3) digits: complexity 2L")
    assert at[50] == len(lines) - 1 or "note" not in lines[at[50] + 1]
    rows = json.loads((tmp_path / "e.json").read_text())["results"]
    assert [r["drawn"] for r in rows] == [[2, 6], [100, 100]]


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def validation_line(seconds, level, chars):
    return (f"[{seconds:7.1f}s] complexity {level:4d}  validation solved {0.5:6.1%}  chars {0.9:6.1%}  eps 0.05"
            f"  trained {chars:>10d} chars  {chars / seconds:7.0f} chars/s")


def test_progress_in_a_file_is_a_line_every_few_seconds():
    import io
    from tinyalgo.cli.progress import FILE_EVERY_SECONDS, Progress
    stream, clock = io.StringIO(), FakeClock()
    progress = Progress(budget=100_000, stream=stream, terminal=False, now=clock)
    for i in range(1, 41):                                  # four validations a second for ten seconds
        clock.t = i / 4
        progress(validation_line(i / 4, 6 + i // 10, 1000 * i))
        if i == 20:
            progress("penalty on (kappa = 0.01) at complexity 8")
    progress.close()
    lines = stream.getvalue().splitlines()
    assert 4 <= len(lines) <= 10 / FILE_EVERY_SECONDS + 5, lines
    at = next(i for i, line in enumerate(lines) if line.startswith("penalty on"))
    assert "(20k/100k chars)" in lines[at - 1]               # where the run stood when the penalty came on
    # the first log line says 0.2 s (0.25 rounded): 5,000 chars/s
    assert lines[0] == "complexity 6 | validation 50% | 5,000 chars/s | 0:00 elapsed | ETA 0:20 (1,000/100k chars)"
    assert lines[-1] == "complexity 10 | validation 50% | 4,000 chars/s | 0:10 elapsed | ETA 0:15 (40k/100k chars)"


def test_progress_on_a_terminal_updates_one_line_in_place(monkeypatch):
    import io
    from tinyalgo.cli.progress import Progress
    monkeypatch.setenv("COLUMNS", "100")        # the status is cut to the terminal's width: not the one pytest runs in
    stream, clock = io.StringIO(), FakeClock()
    progress = Progress(budget=10_000, stream=stream, terminal=True, now=clock)
    for i in range(1, 11):
        clock.t = i / 4
        progress(validation_line(i / 4, 6, 1000 * i))
    progress("SOLVED")
    progress.close()
    text = stream.getvalue()
    assert text.count("\r") == 10 and text.count("\n") == 2 and text.endswith("\nSOLVED\n")   # the status, then SOLVED
    assert "budget spent (10k/10k chars)" in text.split("\r")[-1]


def test_train_prints_a_few_progress_lines_not_one_per_validation(tmp_path, capsys):
    assert main(["train", "--task", "copy", "--units", "8", "--budget", "3000", "--confirm-length", "0",
                 "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    status = [line for line in out.splitlines() if line.startswith("complexity ")]
    assert 1 <= len(status) <= 3 and "validation solved" not in out, out
    assert re.search(r"^complexity \d+ \| validation \d+% \| [\d,.k]+ chars/s \| \d+:\d\d elapsed"
                     r" \| (ETA [\d:-]+|budget spent) \([\d,]+/3,000 chars\)$", status[0]), status


def leaf_parsers(parser, path=()):
    """(path, parser) of every command without subcommands (argparse's tree, walked)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from leaf_parsers(child, path + (name,))


def flags_of(parser) -> list:
    return [a for a in parser._actions if a.option_strings and a.dest not in ("help", "version")]


def test_each_sweep_parser_has_only_the_options_it_uses():
    """No sweep parser accepts a flag its command refuses: a sweep's flags are the options it declares;
    every flag of every experiment command gives its default."""
    from tinyalgo.cli.main import build_parser
    from tinyalgo.cli.sweeps import SWEEPS

    leaves = dict(leaf_parsers(build_parser()))
    for path, parser in leaves.items():
        if path[0] == "experiment":
            for action in flags_of(parser):
                assert "default" in action.help or action.required and "required" in action.help, (path, action.dest)
    for name, sweep in SWEEPS.items():
        flags = {a.dest for a in flags_of(leaves[("experiment", name)])}
        assert flags == set(sweep.names), name
        assert "reference" not in flags                 # the reference path: the same maths, no other result
    assert "controllers" in SWEEPS["figure3"].names and "gamma" not in SWEEPS["figure3"].names
    assert "reward" not in SWEEPS["appendix-c"].names and "reward" in SWEEPS["appendix-b"].names


def sweep_folder(folder):
    """A sweep folder holding two finished copy runs (seeds 0 and 1, full column, budget 2,000, base 10, the 0/1
    reward), each with a Figure 5 test at complexity 10 of 2 instances."""
    import json
    import shutil
    from pathlib import Path

    shutil.copytree(Path(__file__).parent / "fixtures" / "table1" / "runs", folder / "runs")
    for seed in (0, 1):
        (folder / "runs" / f"copy-full-s{seed}").mkdir()
        (folder / "runs" / f"copy-full-s{seed}" / "figure5.json").write_text(json.dumps(
            [dict(complexity=10, instances=2, solved=1.0, char_accuracy=1.0, tested=True)]))
    return json.loads((folder / "runs" / "copy-full-s0.json").read_text())["config"]


@pytest.mark.parametrize("name", ["table1", "figure5", "appendix-b", "appendix-c"])
def test_summarize_uses_every_flag_it_accepts(name, tmp_path, capsys):
    """No sweep parser accepts a flag its command then refuses: with --summarize, each other flag either selects
    the saved runs (or, for figure5, the saved tests) and the table is made, or argparse refuses it (exit 2,
    "not allowed with": --workers alone, which runs runs)."""
    from tinyalgo.cli.main import build_parser
    from tinyalgo.cli.sweeps import SWEEPS

    config = sweep_folder(tmp_path)
    leaves = dict(leaf_parsers(build_parser()))
    values = dict(tasks=["copy"], columns=["full"], bases=["10"], rewards=["binary"], seeds=["2"], first_seed=["0"],
                  budget=["2000"], complexities=["10"], instances=["2"], workers=["1"])
    refused = set()
    for action in flags_of(leaves[("experiment", name)]):
        if action.dest in ("out", "summarize"):
            continue
        value = values.get(action.dest) or [str(config[action.dest])]
        tests = [f for dest, f in (("complexities", ["--complexities", "10"]), ("instances", ["--instances", "2"]))
                 if name == "figure5" and action.dest != dest for f in f]         # the folder's saved tests
        argv = ["experiment", name, "--summarize", "--out", str(tmp_path), action.option_strings[0], *value, *tests]
        status, err = main(argv), capsys.readouterr().err
        if status == 2 and "not allowed with argument --summarize" in err:
            refused.add(action.dest)
            continue
        assert status == 0, (argv, err)
    assert refused == {"workers"} and set(SWEEPS[name].names) >= {"workers", "summarize"}


def test_summarize_takes_the_runs_its_options_select(tmp_path, capsys):
    sweep_folder(tmp_path)
    table = tmp_path / "table1.csv"
    assert main(["experiment", "table1", "--summarize", "--out", str(tmp_path)]) == 0
    assert [line.split(",")[2] for line in table.read_text().splitlines()[1:]] == ["0", "1"]     # every run
    assert main(["experiment", "table1", "--summarize", "--out", str(tmp_path), "--first-seed", "1"]) == 0
    assert [line.split(",")[2] for line in table.read_text().splitlines()[1:]] == ["1"]
    assert main(["experiment", "table1", "--summarize", "--out", str(tmp_path), "--seeds", "1"]) == 0
    assert [line.split(",")[2] for line in table.read_text().splitlines()[1:]] == ["0"]
    capsys.readouterr()
    assert main(["experiment", "figure5", "--summarize", "--out", str(tmp_path), "--tasks", "walk"]) == 2
    assert "none of its 2 saved runs is one that --tasks walk selects" in capsys.readouterr().err
    assert main(["experiment", "appendix-b", "--summarize", "--out", str(tmp_path), "--gamma", "0.5"]) == 2
    assert "none of its 2 saved runs is one that --gamma 0.5 selects" in capsys.readouterr().err


def test_resume_uses_every_flag_it_accepts(tmp_path, monkeypatch, capsys):
    """``train --resume`` takes every flag of ``train``: the saved run's own value continues it (the command
    that started a run, with --resume), --budget sets its new budget, another value is one line naming both."""
    import shutil
    from pathlib import Path

    from tinyalgo.cli import train
    from tinyalgo.cli.main import build_parser
    from tinyalgo.runs.checkpoint import load_checkpoint
    from tinyalgo.runs.config import QConfig

    out = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "fixtures" / "q-copy", out)
    saved = QConfig.from_saved(load_checkpoint(str(out / "checkpoint.npz"))[1]["config"])
    resumed = []
    monkeypatch.setattr(train, "run_qlearning", lambda args, cfg, folder: resumed.append((cfg, folder)) or 0)
    parser = dict(leaf_parsers(build_parser()))[("train",)]
    for action in flags_of(parser):
        if action.dest in ("out", "resume"):
            continue
        own = getattr(saved, action.dest)
        if isinstance(own, bool):
            flag = action.option_strings[0] if own else action.option_strings[-1]
            argv, other = [flag], [action.option_strings[-1] if own else action.option_strings[0]]
        else:
            flag = action.option_strings[0]
            argv = [flag, str(own)]
            choices = [c for c in (action.choices or []) if str(c) != str(own)]
            another = "reverse" if isinstance(own, str) else 0.5 if isinstance(own, float) else \
                3 if action.dest == "base" else own + 1
            other = [flag, str(choices[0] if choices else another)]
        assert main(["train", "--resume", "--out", str(out), *argv]) == 0, (argv, capsys.readouterr().err)
        assert resumed.pop() == (None, str(out))
        status = main(["train", "--resume", "--out", str(out), *other])
        err = capsys.readouterr().err
        if action.dest == "budget":
            assert status == 0 and resumed.pop() == (None, str(out))
        else:
            assert status == 2 and f"the run in {out} was made with" in err and err.count("\n") == 1, (other, err)
    monkeypatch.chdir(tmp_path)
    shutil.copytree(out, tmp_path / "runs" / "q-copy-gru-s0")
    assert main(["train", "--task", "copy", "--units", "16", "--resume"]) == 0          # --out: the options' run
    assert resumed.pop() == (None, str(Path("runs") / "q-copy-gru-s0"))


def test_every_flag_of_every_command_gives_its_default():
    from tinyalgo.cli.main import build_parser

    for path, parser in leaf_parsers(build_parser()):
        for action in flags_of(parser):
            assert action.help and ("default" in action.help or action.required and "required" in action.help), \
                (path, action.dest)


def test_train_supervised_trains_and_saves_its_run(tmp_path, capsys):
    out = tmp_path / "sup"
    assert main(["train-supervised", "--task", "copy", "--units", "8", "--budget", "2000", "--target", "6",
                 "--out", str(out)]) == 0
    assert "supervised copy with a GRU-8 controller" in capsys.readouterr().out
    assert (out / "checkpoint.npz").exists() and (out / "log.json").exists()
    assert main(["evaluate", str(out / "checkpoint.npz"), "--complexities", "6", "--instances", "2"]) == 0


# ------------------------------------------------------------ outputs that would destroy what is there
FIXTURE_CHECKPOINT = Path(__file__).parent / "fixtures" / "q-copy" / "checkpoint.npz"


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_verify_refuses_an_output_that_is_not_a_regular_file(tmp_path, capsys):
    from test_verify import reverse_machine
    machine = tmp_path / "m.json"
    reverse_machine(4).save(machine)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["verify", str(machine), "--json", str(fifo)]) == 2
    assert f"--json {fifo} is not a regular file (a device, FIFO or socket)" in one_line_error(capsys)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)                       # left as it was


def test_verify_refuses_an_output_naming_its_machine_or_another_output(tmp_path, capsys):
    from test_verify import reverse_machine
    machine = tmp_path / "m.json"
    reverse_machine(4).save(machine)
    saved = machine.read_bytes()
    (tmp_path / "link.json").symlink_to(machine)
    for option in ("--json", "--dot", "--aalpy", "--certificate"):
        for same in (str(machine), str(tmp_path / "link.json"), str(tmp_path / "." / "m.json")):
            assert main(["verify", str(machine), option, same]) == 2
            assert f"{option} {same} is the machine the command reads" in one_line_error(capsys)
    out = str(tmp_path / "new.dot")
    assert main(["verify", str(machine), "--dot", out, "--aalpy", out]) == 2
    assert f"--dot {out} and --aalpy {out} name the same file" in one_line_error(capsys)
    assert machine.read_bytes() == saved and not os.path.exists(out)


@pytest.mark.parametrize("option", ["--window", "--max-window"])
def test_verify_windows_stop_at_the_largest_the_checker_accepts(option, tmp_path, capsys):
    from test_verify import reverse_machine
    from tinyalgo.automata.check import MAX_WINDOW
    machine = tmp_path / "m.json"
    reverse_machine(4).save(machine)
    for value in (str(MAX_WINDOW + 1), "99999999999999999999999"):
        assert main(["verify", str(machine), "--window", "1", "--max-window", "1", option, value]) == 2
        assert f"argument {option}: must be from 1 to {MAX_WINDOW}" in one_line_error(capsys)


@pytest.mark.parametrize("options", [dict(window=17), dict(max_window=17)])
def test_the_verifier_refuses_a_window_the_checker_would_reject(options):
    from test_verify import reverse_machine
    from tinyalgo.automata.verify import verify
    name = next(iter(options))
    with pytest.raises(ValueError, match=f"^{name} must be from 1 to 16 "):
        verify(reverse_machine(4), **options)


SMALL_AUTOMATON = ["--complexities", "6", "--instances", "2", "--fidelity", "6", "--fidelity-instances", "2",
                   "--max-clusters", "2"]


def test_automaton_refuses_an_out_folder_that_holds_files(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "machine.json").write_text("a machine I kept")
    assert main(["automaton", str(FIXTURE_CHECKPOINT), "--out", str(out), *SMALL_AUTOMATON]) == 2
    assert f"--out {out} is not empty (1 entries); give a new or empty folder" in one_line_error(capsys)
    assert (out / "machine.json").read_text() == "a machine I kept"


def test_automaton_refuses_a_checkpoint_whose_base_does_not_fit_its_controller(tmp_path, capsys):
    import numpy as np
    arrays = dict(np.load(FIXTURE_CHECKPOINT))
    header = json.loads(str(arrays["__header__"]))
    header["extra"]["config"]["base"] = 2                  # a base-10 copy controller said to be of base 2
    arrays["__header__"] = np.array(json.dumps(header))
    checkpoint = tmp_path / "base2.npz"
    with open(checkpoint, "wb") as f:
        np.savez(f, **arrays)
    assert main(["automaton", str(checkpoint), "--out", str(tmp_path / "m"), *SMALL_AUTOMATON]) == 2
    assert "the controller has obs_sizes (17, 17, 2, 3, 3); copy in base 2 needs (9, 9, 2, 3, 3)" \
        in one_line_error(capsys)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("argv,message", [
    (["--fidelity", "6", "--fidelity-instances", "1000000000000"],
     "--fidelity-instances 1000000000000 at --fidelity 6 needs about"),
    (["--top", "1000000000000"], "--instances 50 at --top 1000000000000 needs about"),
])
def test_automaton_names_the_option_that_makes_a_size_too_large(argv, message, tmp_path, capsys):
    assert main(["automaton", str(FIXTURE_CHECKPOINT), "--out", str(tmp_path / "m"), *argv]) == 2
    assert message in one_line_error(capsys)
