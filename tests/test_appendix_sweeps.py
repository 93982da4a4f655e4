"""The sweeps of Figure 5 and Appendices B and C, and Table 1's cells: tables
are made from run logs, a run that did not solve is a failed run (never a
missing one), a sweep stopped and run again ends with the rows of one never
stopped, and a bad column, base or reward is one error before anything runs."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from sweep_helpers import SMALL, run, stopped_after_the_first_save, without_clock
from tinyalgo.cli import main
from tinyalgo.experiments import appendix, figure3, figure5, table1_report
from tinyalgo.experiments.table1 import Job, table1_jobs
from tinyalgo.experiments.table1_report import parse_run_name, summarize_directory, table1_markdown
from tinyalgo.qtraining import QTrainer


def cells(text):
    """{row label's first word: {column header: cell}} of the Markdown table in ``text``."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]
    return {r[0].split()[0]: dict(zip(rows[0], r)) for r in rows[2:]}



def test_run_names_carry_base_and_reward_and_old_names_stay():
    assert Job("copy", "full", 3, 1000).name == "copy-full-s3"
    assert Job("copy", "full", 3, 1000, options={"base": 4}).name == "copy-full-b4-s3"
    assert Job("copy", "gamma-0.99", 0, 1000, options={"reward": "continuous"}).name == "copy-gamma-0.99-rcontinuous-s0"
    assert Job("walk", "full", 1, 1000, options={"base": 10, "reward": "binary"}).name == "walk-full-s1"
    assert parse_run_name("copy-dynamic-watkins-b2-rdiscretized-s9") == ("copy", "dynamic-watkins", 9)
    assert parse_run_name("addition3-classic-600-s12") == ("addition3", "classic-600", 12)
    with pytest.raises(ValueError, match="'copy-nonsense-s0' is not a run name"):
        parse_run_name("copy-nonsense-s0")


def test_appendix_b_table_from_run_logs_counts_unsolved_runs_as_failed(tmp_path):
    run("appendix-b", tmp_path, [10])                                     # solves
    run("appendix-b", tmp_path, [4], seeds=(0, 1), budget=300)           # too short to solve
    assert not appendix.appendix_b_jobs(["multiplication", "addition3"], [2], [0], 1000)   # refused: never run
    text = run("appendix-b", tmp_path, [2, 4, 10], tasks=("copy", "multiplication"), summarize=True)
    assert text == (tmp_path / "appendix_b.md").read_text()
    table = cells(text)
    copy, mult = table["copy"], table["multiplication"]
    assert copy["base 10"].endswith(", 1/1 solved (paper 0.6; ours: seed 0, 15,000 chars)")
    assert " min, 11k chars" in copy["base 10"] and not copy["base 10"].startswith("failed")
    assert copy["base 4"] == "failed, 0/2 solved (paper 0.6; ours: seeds 0, 1, 300 chars)"
    assert copy["base 2"] == "not run (paper 1.4)"
    assert mult["base 2"] == "invalid (tinyalgo refuses) (paper invalid)"
    assert mult["base 10"] == "not run (paper 24.7)"
    assert "Each cell states its seeds and its budget" in text
    assert "A run that did not solve within its budget counts as failed." in text
    csv = (tmp_path / "appendix_b.csv").read_text().splitlines()
    assert len(csv) == 4 and csv[0].split(",")[:7] == ["task", "column", "seed", "controller", "units", "budget",
                                                         "solved"]


def fake(solved_chars, **kw):
    """Rows of one cell: a run per entry, None for a run that did not solve."""
    return [dict(dict(task="copy", column="full", seed=s, budget=10_000_000, solved=c is not None,
                      minutes_to_solve=None if c is None else c / 1e5, chars_to_solve=c), **kw)
            for s, c in enumerate(solved_chars)]


def test_the_median_counts_a_failed_run_as_slower_than_any_solved():
    assert appendix.cell(fake([300_000, None, 100_000])) == dict(runs=3, solved=2, minutes=3.0, chars=300_000)
    assert appendix.cell(fake([100_000, None]))["chars"] is None                # half failed: failed
    rows = fake([100_000, None, None], reward="continuous") + fake([100_000, 200_000, None], reward="binary")
    table = cells(appendix.appendix_c_markdown(rows, rewards=["binary", "continuous"]))["copy"]
    assert table["continuous reward"] == "failed, 1/3 solved (paper 0.8)"
    assert table["0/1 reward"] == "2.00 min, 200k chars, 2/3 solved (paper 0.6)"
    text = appendix.appendix_c_markdown(rows, rewards=["binary", "continuous"])
    assert "Every cell: seeds 0-2, 10,000,000 chars" in text
    assert "with the continuous reward against the 0/1 reward (above 1: slower): copy: failed." in text
    swapped = fake([100_000, None, None], reward="binary") + fake([100_000, 200_000, None], reward="continuous")
    assert "against the 0/1 reward (above 1: slower): copy: 0/1 reward failed." in appendix.appendix_c_markdown(
        swapped, rewards=["binary", "continuous"])
    faster = fake([100_000, 300_000, None], reward="discretized") + fake([200_000, 200_000], reward="binary")
    assert "discretized reward against the 0/1 reward (above 1: slower): copy: 1.50x." in \
        appendix.appendix_c_markdown(faster)


def test_appendix_b_compares_the_small_vocabulary_with_base_10_and_counts_solves_per_base():
    rows = (fake([400_000, 400_000, None], base=2) + fake([100_000, 200_000, 300_000], base=4)
            + fake([100_000, 200_000, 300_000], base=10) + fake([None, None, 100_000], base=3)
            + [dict(r, task="walk") for r in fake([None, None, None], base=10) + fake([1_000, 5_000, None], base=4)])
    text = appendix.appendix_b_markdown(rows, bases=[2, 3, 4, 10])
    assert "against base 10 (above 1: the small vocabulary, a frequent but less reliable reward, is slower):" \
           " copy, base 2: 2.00x; walk, base 2: -." in text
    assert "- Runs that solved, over the tasks valid in every base (copy, walk): base 2 2/3, base 3 1/3, base 4 5/6," \
           " base 10 3/6." in text
    mult = [dict(r, task="multiplication") for r in fake([100_000], base=3)]
    assert "in every base (copy, walk): base 2 2/3, base 3 1/3," in appendix.appendix_b_markdown(rows + mult,
                                                                                             bases=[2, 3, 4, 10])
    assert "- Base with the fewest median characters to solve: copy: bases 4 (3/3 solved), 10 (3/3 solved);" \
           " walk: base 4 (2/3 solved)." in text
    assert appendix.fastest(rows, "walk", [10]) == "every base failed"
    assert appendix.fastest(rows, "walk", [2]) == "not run"
    assert appendix.fastest(rows, "copy", [3, 2]) == "base 2 (2/3 solved)"          # a failed base beside it
    only_arithmetic = [dict(r, task="multiplication") for r in fake([100_000], base=3)]
    arithmetic = appendix.appendix_b_markdown(only_arithmetic, bases=[2, 3])    # no task valid in base 2
    assert "tasks valid in every base" not in arithmetic and "multiplication: base 3 (1/1 solved)" in arithmetic
    assert cells(text)["walk"]["base 10"] == "failed, 0/3 solved (paper 11.1)"


def test_a_stopped_appendix_sweep_resumes_to_the_same_rows(tmp_path, monkeypatch):
    straight = run("appendix-c", tmp_path / "straight", ["binary", "continuous"], budget=6_000)
    with stopped_after_the_first_save(monkeypatch) as saves:
        run("appendix-c", tmp_path / "stopped", ["binary", "continuous"], budget=6_000)
    assert saves and all(chars < 6_000 for chars in saves)
    resumed = run("appendix-c", tmp_path / "stopped", ["binary", "continuous"], budget=6_000)
    logs = sorted(p.name for p in (tmp_path / "stopped" / "runs").glob("*.log"))
    assert logs == ["copy-full-rcontinuous-s0.log", "copy-full-s0.log"]
    assert any("resumed from" in (tmp_path / "stopped" / "runs" / name).read_text() for name in logs)
    rows = summarize_directory(tmp_path / "stopped")
    assert [r["reward"] for r in rows] == ["binary", "continuous"]
    assert without_clock(rows) == without_clock(summarize_directory(tmp_path / "straight"))
    assert cells(resumed)["copy"].keys() == cells(straight)["copy"].keys()


def exit_code(argv) -> int:
    """The exit status of ``tinyalgo argv`` (argparse's errors exit)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_bad_names_are_one_error_before_anything_runs(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"unknown base 11; allowed: 2\.\.10"):
        appendix.appendix_b_jobs(["copy"], [3, 11], [0], 1000)
    with pytest.raises(ValueError, match="unknown reward 'gold'; allowed: binary, discretized, continuous"):
        appendix.appendix_c_jobs(["copy"], ["binary", "gold"], [0], 1000)
    with pytest.raises(ValueError, match="unknown Table 1 column 'standard'; allowed: classic-600"):
        figure5.figure5_jobs(["copy"], [0], 1000, str(tmp_path), columns=("standard", "full"))
    with pytest.raises(ValueError, match="unknown task 'sort'"):
        appendix.appendix_c_jobs(["sort"], ["binary"], [0], 1000)
    with pytest.raises(ValueError, match="the reward is set by each column of this table"):
        appendix.appendix_c_jobs(["copy"], ["binary"], [0], 1000, reward="continuous")
    out = tmp_path / "out"
    for argv, message in [(["appendix-b", "--bases", "3", "11"], "argument --bases: invalid choice: 11"),
                          (["appendix-c", "--rewards", "gold"], "argument --rewards: invalid choice: 'gold'"),
                          (["table1", "--columns", "standard"], "argument --columns: invalid choice: 'standard'"),
                          (["figure5", "--tasks", "sort"], "argument --tasks: invalid choice: 'sort'"),
                          (["figure5", "--columns", "standard"], "argument --columns: invalid choice: 'standard'"),
                          (["appendix-b", "--columns", "classic"], "--columns is not an option of appendix-b")]:
        assert exit_code(["experiment", *argv, "--budget", "100", "--out", str(out)]) == 2
        assert message in capsys.readouterr().err
    assert main(["experiment", "appendix-c", "--reward", "continuous", "--budget", "100", "--out", str(out)]) == 2
    assert "the reward is set by each column of this table (--rewards)" in capsys.readouterr().err
    assert not out.exists()


def test_figure5_tests_each_final_model_and_a_rerun_reuses_runs_and_tests(tmp_path, monkeypatch):
    def figure(complexities=(10, 30)):
        with ThreadPoolExecutor(max_workers=1) as pool:
            return figure5.run_figure5(["copy"], [0], 12_000, str(tmp_path), dict(SMALL, confirm_length=0), "cmd",
                                       complexities=complexities, instances=10, executor=pool, log=lambda s: None)

    text = figure()
    csv = (tmp_path / "figure5.csv").read_text().splitlines()
    assert len(csv) == 1 + 2 * 2 and (tmp_path / "figure5.png").stat().st_size > 10_000
    lines = [line for line in text.splitlines() if line.startswith("| copy")]
    table = {(r[0].split()[0], r[1]): r for r in ([c.strip() for c in line.strip("|").split("|")] for line in lines)}
    assert set(table) == {("copy", "classic"), ("copy", "full")}
    assert table["copy", "full"][2] == "1/1" and float(table["copy", "full"][3]) > 0.5      # solved in training
    assert "Every cell: seed 0, 12,000 chars" in text

    def no_work(*args, **kw):
        raise AssertionError("a finished run was trained or tested again")

    monkeypatch.setattr(QTrainer, "run", no_work)
    monkeypatch.setattr(figure5, "evaluate_complexity", no_work)
    assert figure() == text and (tmp_path / "figure5.csv").read_text().splitlines() == csv
    monkeypatch.undo()
    monkeypatch.setattr(QTrainer, "run", no_work)
    longer = figure((10, 30, 100))                                       # only the new complexity is tested
    assert "@100" in longer and len((tmp_path / "figure5.csv").read_text().splitlines()) == 1 + 2 * 3


def test_figure5_summarize_rebuilds_the_figure_from_logs_and_tests_without_the_models(tmp_path, monkeypatch, capsys):
    with ThreadPoolExecutor(max_workers=1) as pool:
        text = figure5.run_figure5(["copy"], [0, 1], 12_000, str(tmp_path), dict(SMALL, confirm_length=0), "cmd",
                                   complexities=(10, 30), instances=10, executor=pool, log=lambda s: None)
    csv = (tmp_path / "figure5.csv").read_text()
    for model in (tmp_path / "runs").glob("*/checkpoint.npz"):
        model.unlink()                                           # the committed runs have no models
    for name in ("figure5.csv", "figure5.md", "figure5.png"):
        (tmp_path / name).unlink()

    def no_work(*args, **kw):
        raise AssertionError("--summarize trained or tested")

    monkeypatch.setattr(QTrainer, "run", no_work)
    monkeypatch.setattr(figure5, "evaluate_complexity", no_work)
    said = []
    assert figure5.summarize_figure5(str(tmp_path), "cmd", (10, 30), 10, log=said.append) == text
    assert (tmp_path / "figure5.csv").read_text() == csv and (tmp_path / "figure5.png").exists() and not said

    (tmp_path / "runs" / "copy-full-s1" / "figure5.json").unlink()             # a run never tested
    part = figure5.summarize_figure5(str(tmp_path), "cmd", (10, 30), 10, log=said.append)
    assert said == ["left out, not tested at every complexity with 10 instances: copy-full-s1"]
    rows = {line.split("|")[2].strip(): line for line in part.splitlines() if line.startswith("| copy")}
    assert rows["full"].endswith("| seed 0, 12,000 chars |") and "| seeds 0, 1, 12,000 chars |" in rows["classic"]
    assert main(["experiment", "figure5", "--summarize", "--out", str(tmp_path), "--complexities", "10", "100",
                 "--instances", "10"]) == 2
    assert "no run in" in capsys.readouterr().err


def test_each_panel_states_how_many_seeds_its_lines_average(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(figure3, "atomic_savefig", lambda fig, path, **kw: drawn.append(
        ([ax.get_title() for ax in fig.axes if ax.get_visible()], [t.get_text() for t in fig.axes[0].get_legend().texts])))
    rows = [dict(task=task, column=column, seed=s, complexity=c, solved=1.0)
            for task, seeds in (("copy", {"full": 2, "classic": 2}), ("walk", {"full": 3, "classic": 5}))
            for column, n in seeds.items() for s in range(n) for c in (10, 100)]
    figure3.plot_accuracy(rows, str(tmp_path / "f.png"), "column", figure5.series(["classic", "full"]), "title")
    assert drawn == [(["copy (2 seeds per line)", "walk (3-5 seeds per line)"],
                      ["standard Q-learning (classic) (mean)", "enhanced (full) (mean)"])]


def test_figure5_says_where_the_enhanced_version_falls_below_the_standard_one():
    def run(task, column, solved):
        return dict(task=task, column=column, curve=[dict(complexity=k, solved=v) for k, v in zip((10, 100, 1000), solved)])

    groups = {("copy", "full"): [run("copy", "full", (1, 1, 0.9))], ("copy", "classic"): [run("copy", "classic", (1, 0.5, 0.2))],
              ("walk", "full"): [run("walk", "full", (1, 0.5, 0.0)), run("walk", "full", (1, 0.5, 0.2))],
              ("walk", "classic"): [run("walk", "classic", (1, 0.8, 0.0))]}
    text = figure5.comparison_text(groups, ["copy", "walk"], (10, 100, 1000))
    assert "copy: enhanced above standard at 2 of 3 complexities, never below" in text
    assert "walk: enhanced above standard at 1 of 3 complexities, below at 100 (0.500 < 0.800)" in text


def test_figure5_draws_any_table1_columns_and_compares_only_the_papers_two():
    def run(column, seed, solved):
        return dict(task="addition", column=column, seed=seed, budget=10_000_000, solved=True,
                    curve=[dict(complexity=k, instances=50, solved=v) for k, v in zip((10, 1000), solved)])

    rows = [run("full", 0, (1, 0.4)), run("dynamic", 0, (1, 0.9)), run("classic", 0, (1, 0.7))]
    text = figure5.figure5_markdown(rows)
    lines = [line.split("|")[2].strip() for line in text.splitlines() if line.startswith("| addition")]
    assert lines == ["classic", "dynamic", "full"]                    # Table 1's order
    assert "addition: enhanced above standard at 0 of 2 complexities, below at 1,000 (0.400 < 0.700)" in text
    assert "dynamic = units 200, discount dynamic, q one-step, penalty off" in text
    assert "Enhanced against standard" not in figure5.figure5_markdown(rows[:2])    # no classic: no claim
    drawn = figure5.series(["classic", "dynamic", "dynamic-watkins", "full"])
    assert [s[:2] for s in drawn] == [("classic", "tab:blue"), ("dynamic", figure5.OTHER_COLORS[0]),
                                      ("dynamic-watkins", figure5.OTHER_COLORS[1]), ("full", "tab:red")]
    assert drawn[0][3] == "standard Q-learning (classic)"
    every = figure5.series(list(table1_report.TABLE1_COLUMNS))                 # all eight columns
    assert len(every) == 8 and len({s[1] for s in every}) == 8
    lone = figure5.figure5_markdown(rows[1:2])
    assert "\n\n\n" not in lone and "| addition (GRU) | dynamic |" in lone


def test_figure5_defaults_to_the_papers_two_columns_and_a_name_given_twice_is_one_run(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(figure5, "run_figure5", lambda *a, **kw: seen.update(kw) or "table")
    assert main(["experiment", "figure5", "--budget", "100", "--out", str(tmp_path)]) == 0
    assert seen["columns"] == ["classic", "full"]
    assert main(["experiment", "figure5", "--columns", "dynamic", "--budget", "100", "--out", str(tmp_path)]) == 0
    assert seen["columns"] == ["dynamic"]
    jobs = figure5.figure5_jobs(["copy", "copy"], [0, 0], 1000, str(tmp_path), columns=("full", "full", "classic"))
    assert [j.name for j in jobs] == ["copy-full-s0", "copy-classic-s0"]
    assert len(appendix.appendix_b_jobs(["copy"], [3, 3], [1, 1], 1000)) == 1


def row(**kw):
    return dict(dict(task="copy", column="classic", seed=0, budget=10_000_000, solved=True), **kw)


def test_table1_states_the_papers_claims_over_the_runs_every_column_has():
    rows = ([row(column="classic", seed=s, solved=s < 1, chars_to_solve=100 if s < 1 else None) for s in range(3)]
            + [row(column="dynamic", seed=s, solved=s < 2, chars_to_solve=300 + 2 * s) for s in range(3)]
            + [row(task="walk", column="dynamic", seed=0, solved=True, chars_to_solve=7)]
            + [row(column="classic-400", seed=s, solved=False) for s in range(3)])
    claims = table1_report.claims_text(rows)
    assert claims == ["- The paper: each enhancement helps. Runs solved over copy (the task and seed pairs every column"
                      " has; 1 other runs left out): classic 1/3 (solved in a median of 100 chars); dynamic 2/3 (solved"
                      " in a median of 301 chars).",
                      "- The paper: more units hurt plain Q-learning. Runs solved over copy: classic 1/3 (solved in a"
                      " median of 100 chars); classic-400 0/3."]
    assert claims[0] in table1_markdown(rows, 1)
    # a column still running: its missing seeds leave the others' runs of those seeds out too
    running = [r for r in rows if r["column"] != "dynamic"] + [row(task="walk", column=c, seed=0, solved=False)
                                                                 for c in ("classic", "classic-400")]
    running += [row(task="walk", column="classic", seed=s, solved=True, chars_to_solve=50) for s in (1, 2)]
    assert table1_report.claims_text(running) == [
        "- The paper: more units hurt plain Q-learning. Runs solved over copy, walk (the task and seed pairs every"
        " column has; 2 other runs left out): classic 1/4 (solved in a median of 100 chars); classic-400 0/4."]


def test_table1_cells_beside_the_paper_with_seeds_budgets_and_failures():
    uniform = [row(seed=s, solved=s < 3) for s in range(5)] + [row(column="gamma-0.99", seed=s) for s in range(5)]
    text = table1_markdown(uniform, 1)
    copy = cells(text)["copy"]
    assert copy["classic: solved @100"] == "3/5 (paper 9/10)" and copy["gamma-0.99: solved @100"] == "5/5 (paper 5/10)"
    assert "Every cell: seeds 0-4, 10,000,000 chars" in text and "counts as failed" in text
    mixed = uniform + [row(column="classic-600", seed=7, budget=20_000_000, solved=False)]
    copy = cells(table1_markdown(mixed, 1))["copy"]
    assert copy["classic-600: solved @100"] == "0/1 (paper 3/10; seed 7, 20,000,000 chars)"
    assert copy["classic: solved @100"] == "3/5 (paper 9/10; seeds 0-4, 10,000,000 chars)"
    assert list(copy)[1:4] == ["classic-600: solved @100", "classic: solved @100", "gamma-0.99: solved @100"]
    assert [j.name for j in table1_jobs(["copy"], ["classic-400"], [0], 100)] == ["copy-classic-400-s0"]
