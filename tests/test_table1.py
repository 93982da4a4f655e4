"""Table 1 sweeps: runs go through any executor; a sweep stopped and run again
ends with the rows of one never stopped, and a finished one trains nothing;
the table puts each count in its cell and notes the options that differ from
their defaults; a sweep's table1.csv reads back as its rows, and rebuilds the
table where no run log is kept."""
import errno
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sweep_helpers import stopped_after_the_first_save, without_clock
from tinyalgo.runs import rundir
from tinyalgo.cli import main
from tinyalgo.experiments import table1
from tinyalgo.experiments.table1 import Job, run_sweep, table1_jobs
from tinyalgo.experiments.table1_report import (option_notes, read_results_csv, summarize_directory, table1_markdown,
                                                write_table1)
from tinyalgo.qtraining import QTrainer

FIXTURES = Path(__file__).parent / "fixtures"
SMALL = dict(confirm_length=0, validate_every=3, val_instances=10, test_length=20, report_lengths=(20,))



def sweep(out, seeds=(0, 1), budget=6_000):
    jobs = table1_jobs(["copy"], ["full"], seeds, budget, str(out), **SMALL)
    with ThreadPoolExecutor(max_workers=1) as pool:          # any Executor will do
        return run_sweep(jobs, executor=pool, log=lambda s: None)



def test_table1_sweep_through_an_executor(tmp_path):
    rows = sweep(tmp_path)
    assert [r["seed"] for r in rows] == [0, 1] and all(r["chars"] >= 6_000 for r in rows)
    assert summarize_directory(tmp_path) == rows
    live = (tmp_path / "runs" / "copy-full-s0.log").read_text().splitlines()   # each run's progress as it went
    assert "validation solved" in live[0] and live[-1].startswith("length")
    assert (tmp_path / "runs" / "copy-full-s0" / "checkpoint.npz").exists()     # the final model, to evaluate


def test_a_failing_summary_stops_the_sweep_instead_of_running_every_job_first():
    started, gate = [], threading.Event()
    jobs = table1_jobs(["copy"], ["full"], [0, 1, 2], 1_000, "")

    def run(job):
        started.append(job.name)
        if len(started) > 1:                          # a second run would still be going when the first
            gate.wait(10)                             # one's summary fails
        return dict(task=job.task, column=job.column, seed=job.seed, solved=False, minutes=0.0, chars=0,
                    minutes_to_solve=None, solved_fraction_100=None, solved_fraction_1000=None)

    def summary(rows):
        raise RuntimeError("the summary failed")

    logged = []
    pool = ThreadPoolExecutor(max_workers=1)
    with pytest.raises(RuntimeError, match="the summary failed"):
        run_sweep(jobs, executor=pool, log=logged.append, on_result=summary, run=run)
    gate.set()
    pool.shutdown(wait=True)
    # the third cannot start before the second ends (one worker), which waits for the gate: cancelled
    assert started[0] == "copy-full-s0" and "copy-full-s2" not in started
    assert len(logged) == 1 and "copy-full-s0" in logged[0]   # the finished run is logged before the summary


@pytest.mark.slow
def test_a_stopped_sweep_resumes_to_the_same_rows(tmp_path, monkeypatch):
    straight = sweep(tmp_path / "straight")
    with stopped_after_the_first_save(monkeypatch) as saves:
        sweep(tmp_path / "stopped")
    assert saves and all(chars < 6_000 for chars in saves)
    assert not list((tmp_path / "stopped" / "runs").glob("*.json"))            # no run finished
    resumed = sweep(tmp_path / "stopped")
    assert "resumed from" in (tmp_path / "stopped" / "runs" / "copy-full-s0.log").read_text()
    assert without_clock(resumed) == without_clock(straight)


def test_a_finished_sweep_trains_nothing(tmp_path, monkeypatch):
    rows = sweep(tmp_path, seeds=(0,), budget=2_000)

    def no_training(*args, **kw):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(QTrainer, "run", no_training)
    assert sweep(tmp_path, seeds=(0,), budget=2_000) == rows


def test_a_sweep_waits_for_a_run_another_process_trains_and_reads_its_log(tmp_path, monkeypatch, capsys):
    straight = sweep(tmp_path / "straight", seeds=(0,), budget=2_000)
    shared = tmp_path / "shared"
    waiting = threading.Event()                    # set when the second sweep says it waits for the run

    def held_and_told(out, wait=True, log=rundir.say):
        def tell(line):
            log(line)
            waiting.set()
        return rundir.held(out, wait=wait, log=tell)

    monkeypatch.setattr(table1, "held", held_and_told)
    second = ThreadPoolExecutor(max_workers=1)
    try:
        with rundir.held(str(shared / "runs" / "copy-full-s0")):          # another sweep is training the run
            result = second.submit(sweep, shared, (0,), 2_000)
            assert waiting.wait(timeout=120), "the second sweep never said it waits"
            assert not result.done()

            def no_training(*args, **kw):
                raise AssertionError("the run was trained twice")

            monkeypatch.setattr(QTrainer, "run", no_training)
            shutil.copy(tmp_path / "straight" / "runs" / "copy-full-s0.json", shared / "runs")   # ... and finishes it
        assert result.result(timeout=120) == straight
    finally:
        second.shutdown(wait=False, cancel_futures=True)
    assert "copy-full-s0: another process is training this run; waiting for it" in capsys.readouterr().out


def test_a_run_of_other_options_is_refused_before_waiting_for_it(tmp_path, monkeypatch):
    with stopped_after_the_first_save(monkeypatch):
        sweep(tmp_path, seeds=(0,), budget=6_000)                        # a checkpoint of budget 6,000

    def wait_for_the_run(*args, **kw):
        raise AssertionError("the sweep went on to wait for the run before checking its options")

    monkeypatch.setattr(table1, "held", wait_for_the_run)
    with pytest.raises(ValueError, match="is a run with budget 6000, this sweep asks for 2000"):
        sweep(tmp_path, seeds=(0,), budget=2_000)


def test_without_locks_on_the_file_system_a_sweep_warns_and_runs(tmp_path, monkeypatch, capsys):
    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(rundir.fcntl, "flock", no_locks)
    (row,) = sweep(tmp_path, seeds=(0,), budget=2_000)
    assert row["chars"] >= 2_000 and (tmp_path / "runs" / "copy-full-s0.json").exists()
    assert "copy-full-s0: cannot lock the run directory (No locks available); two processes could train it at once" \
        in capsys.readouterr().out


def test_the_same_command_skips_runs_an_earlier_tinyalgo_finished(tmp_path, capsys):
    """The fixture's run log was written by an earlier tinyalgo; the command
    that made it finds it finished, and refuses to mix it with other options."""
    out = tmp_path / "table1"
    shutil.copytree(FIXTURES / "table1", out)
    log = out / "runs" / "copy-full-s0.json"
    before = log.read_bytes()
    command = ["experiment", "table1", "--tasks", "copy", "--columns", "full", "--seeds", "1", "--budget", "2000",
               "--workers", "1", "--out", str(out)]
    assert main(command) == 0
    assert log.read_bytes() == before and not (out / "runs" / "copy-full-s0").exists()
    assert "| copy (GRU) | 0/1 (paper 10/10) |" in (out / "table1.md").read_text()
    capsys.readouterr()
    assert main(command + ["--greedy-lanes", "5"]) == 2
    err = capsys.readouterr().err
    assert "copy-full-s0.json is a run with greedy_lanes 0, this sweep asks for 5" in err


def test_jobs_refuse_bad_options():
    with pytest.raises(ValueError, match=r"greedy_lanes must be 0\.\.19"):
        table1_jobs(["copy"], ["full"], [0], 1000, greedy_lanes=20)
    with pytest.raises(ValueError, match="unknown option 'wobble'"):
        table1_jobs(["copy"], ["full"], [0], 1000, wobble=1)
    with pytest.raises(ValueError, match="option 'units' is set by the sweep's columns"):
        Job("copy", "classic-600", 0, 1000, options={"units": 50}).config()
    assert Job("copy", "classic-600", 0, 1000, options={"greedy_lanes": 3}).config().units == 600


def cells(text):
    """{task: {column header: cell}} of a Markdown table."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]
    head = rows[0]
    return {r[0].split()[0]: dict(zip(head, r)) for r in rows[2:]}


def row(**kw):
    return dict(dict(task="copy", column="full", seed=0, solved=True, minutes_to_solve=0.5, perfect_100=True,
                     perfect_1000=False, confirm_length=1000, confirmed=True), **kw)


def test_table1_counts_in_their_cells():
    rows = [row(), row(seed=1, confirmed=False, perfect_100=False, minutes_to_solve=1.5),
            row(task="multiplication", confirm_length=0, confirmed=False, solved=False, minutes_to_solve=None),
            row(column="dynamic", solved=False)]
    table = cells(table1_markdown(rows, 1000))
    copy, mult = table["copy"], table["multiplication"]
    assert copy["full: solved @100"].startswith("2/2") and copy["dynamic: solved @100"].startswith("0/1")
    assert copy["full: passed @1000 in training"] == "1/2" and copy["full: re-test @100"] == "1/2"
    assert copy["full: re-test @1000"] == "0/2" and copy["full: median min to solve"].startswith("1.00 (2 solved)")
    assert mult["full: solved @100"].startswith("0/1") and mult["full: passed @1000 in training"] == "-"
    assert "walk" not in table


def test_table1_notes_an_option_only_where_it_differs_from_its_default():
    plain = [row(), row(task="addition")]
    assert option_notes(plain) == []
    text = table1_markdown(plain, 1000)
    assert "--greedy-lanes" not in text and "--solved-lr" not in text
    greedy = plain + [row(task="addition3", greedy_lanes=5), row(task="addition3", seed=1, greedy_lanes=5)]
    notes = option_notes(greedy)
    assert len(notes) == 1 and notes[0].startswith("- ``--greedy-lanes``")
    assert notes[0].endswith(": 0 (copy, addition); 5 (addition3).") and notes[0] in table1_markdown(greedy, 1000)
    slow = option_notes([row(), row(task="addition", solved_lr=0.03, solved_lr_after="pass")])
    assert [n.split("``")[1] for n in slow] == ["--solved-lr", "--solved-lr-after"]
    assert slow[0].endswith("0.0 (copy); 0.03 (addition).") and slow[1].endswith("solve (copy); pass (addition).")


def test_a_table1_csv_reads_back_as_its_rows_and_rebuilds_the_table_without_the_logs(tmp_path, capsys):
    rows = sweep(tmp_path, seeds=(0, 1), budget=2_000)
    write_table1(rows, tmp_path, 2_000, "cmd")
    made = {name: (tmp_path / name).read_bytes() for name in ("table1.csv", "table1.md")}
    assert read_results_csv(tmp_path / "table1.csv") == rows                  # every field of its type, None kept
    shutil.rmtree(tmp_path / "runs")                                           # the logs are not kept
    assert summarize_directory(tmp_path) == []
    assert main(["experiment", "table1", "--summarize", "--budget", "2000", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "table1.csv").read_bytes() == made["table1.csv"]
    after_the_command = (tmp_path / "table1.md").read_text().split("\n\n", 2)[2]
    assert after_the_command == made["table1.md"].decode().split("\n\n", 2)[2]

    (tmp_path / "table1.csv").write_text("task,column,seed,solved\ncopy,full,0,yes\n")
    capsys.readouterr()
    assert main(["experiment", "table1", "--summarize", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith("table1.csv, line 2: solved is 'yes', not True or False\n")
    (tmp_path / "table1.csv").unlink()
    assert main(["experiment", "table1", "--summarize", "--out", str(tmp_path)]) == 2
    assert "and no table1.csv, to summarize" in capsys.readouterr().err


class JobsMade(Exception):
    """Raised by the stand-in for ``run_sweep``: the command made its jobs and stops before training."""


def test_gamma_of_a_sweep_applies_to_its_dynamic_discount_columns(tmp_path, monkeypatch):
    made = []

    def no_training(jobs, **kwargs):
        made.extend(jobs)
        raise JobsMade

    monkeypatch.setattr("tinyalgo.cli.sweeps.run_sweep", no_training)
    with pytest.raises(JobsMade):
        main(["experiment", "table1", "--tasks", "copy", "--columns", "classic", "dynamic", "--gamma", "0.9",
              "--seeds", "1", "--out", str(tmp_path)])
    configs = {job.column: job.config() for job in made}
    assert sorted(configs) == ["classic", "dynamic"]
    assert (configs["dynamic"].discount, configs["dynamic"].gamma) == ("dynamic", 0.9)
    assert (configs["classic"].discount, configs["classic"].gamma) == ("1", 1.0)       # its constant discount
    assert all(job.options == {"gamma": 0.9} for job in made)                        # the sweep's option, as given


def test_summarize_with_gamma_takes_the_constant_discount_columns_runs(tmp_path):
    from argparse import Namespace

    from tinyalgo.cli.sweeps import SWEEPS, run_filter
    args = Namespace(sweep=SWEEPS["table1"], gamma=0.9, out=str(tmp_path), summarize=True)
    keep, said = run_filter(args)
    assert said == "--gamma 0.9"
    assert keep({"task": "copy", "column": "classic", "seed": 0, "gamma": 1.0})
    assert keep({"task": "copy", "column": "dynamic", "seed": 0, "gamma": 0.9})
    assert not keep({"task": "copy", "column": "dynamic", "seed": 0, "gamma": 1.0})
