"""The sweeps of Figure 5 and Appendices B and C, and Table 1's cells: tables
are made from run logs, a run that did not solve is a failed run (never a
missing one), a sweep stopped and run again ends with the rows of one never
stopped, and a bad column, base or reward is one error before anything runs.
The tables' text is checked through the numbers it states, not its wording."""
import re
from csv import DictReader
from concurrent.futures import ThreadPoolExecutor

import pytest

from sweep_helpers import SMALL, run, stopped_after_the_first_save, without_clock
from tinyalgo.cli import main
from tinyalgo.experiments import appendix, figure3, figure5, table1_report
from tinyalgo.experiments.table1 import Job, table1_jobs
from tinyalgo.experiments.table1_report import (TABLE1_ROWS, claims_text, columns_text, common_runs, option_value,
                                                parse_run_name, summarize_directory, table1_markdown)
from tinyalgo.qtraining import QTrainer

pytestmark = pytest.mark.slow


def cells(text):
    """{row label's first word: {column header: cell}} of the Markdown table in ``text``."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]
    return {r[0].split()[0]: dict(zip(rows[0], r)) for r in rows[2:]}


NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def numbers(text) -> list:
    """The numbers ``text`` states, in order ("12,000" is 12000; "0-4" is 0 and 4; "200k" is 200)."""
    return [float(n.replace(",", "")) if "." in n else int(n.replace(",", "")) for n in NUMBER.findall(text)]


def reported(cell) -> tuple:
    """What an appendix cell states: (runs solved, runs) or None (no runs), and the paper's minutes (None: invalid)."""
    solved, paper = re.search(r"(\d+)/(\d+) solved", cell), re.search(r"paper (\d+\.\d)", cell)
    return (tuple(map(int, solved.groups())) if solved else None), (float(paper[1]) if paper else None)


def per_task(text) -> dict:
    """{task: the numbers stated after "task:"} of a sentence that goes through the tasks."""
    parts = re.split(r"\b(" + "|".join(TABLE1_ROWS) + r"): ", text)
    return {task: numbers(part) for task, part in zip(parts[1::2], parts[2::2])}


def cell_rows(rows, task, **option):
    """The rows of one cell of an appendix table: ``task`` and one option's value (base= or reward=)."""
    (name, value), = option.items()
    return [r for r in rows if r["task"] == task and option_value(r, name) == value]


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
    rows = appendix.table_rows("appendix-b", summarize_directory(tmp_path))
    solved, unsolved = cell_rows(rows, "copy", base=10), cell_rows(rows, "copy", base=4)
    numbers_10 = appendix.cell(solved)
    assert numbers_10["runs"] == numbers_10["solved"] == 1 and numbers_10["minutes"] > 0
    assert 5_000 < numbers_10["chars"] < 15_000
    assert appendix.cell(unsolved) == dict(runs=2, solved=0, minutes=None, chars=None)      # failed, not missing
    assert [r["budget"] for r in solved + unsolved] == [15_000, 300, 300]
    assert common_runs([solved, unsolved]) is None                 # so each cell states its own seeds and budget
    table = cells(text)
    assert list(table) == ["copy", "multiplication"]
    assert list(table["copy"]) == list(table["multiplication"]) == ["task", "base 2", "base 4", "base 10"]
    copy, mult = table["copy"], table["multiplication"]
    assert reported(copy["base 10"]) == ((1, 1), 0.6) and numbers(copy["base 10"].split("ours:")[1]) == [0, 15_000]
    assert reported(copy["base 4"]) == ((0, 2), 0.6) and numbers(copy["base 4"].split("ours:")[1]) == [0, 1, 300]
    assert reported(copy["base 2"]) == (None, 1.4) and reported(mult["base 10"]) == (None, 24.7)      # not run
    assert not appendix.valid("multiplication", 2) and reported(mult["base 2"]) == (None, None)     # refused
    with open(tmp_path / "appendix_b.csv", newline="") as f:
        written = list(DictReader(f))
    assert [(r["task"], int(r["base"]), int(r["seed"]), r["solved"]) for r in written] == \
        [("copy", 4, 0, "False"), ("copy", 4, 1, "False"), ("copy", 10, 0, "True")]


def fake(solved_chars, **kw):
    """Rows of one cell: a run per entry, None for a run that did not solve."""
    return [dict(dict(task="copy", column="full", seed=s, budget=10_000_000, solved=c is not None,
                      minutes_to_solve=None if c is None else c / 1e5, chars_to_solve=c), **kw)
            for s, c in enumerate(solved_chars)]


def test_the_median_counts_a_failed_run_as_slower_than_any_solved():
    assert appendix.cell(fake([300_000, None, 100_000])) == dict(runs=3, solved=2, minutes=3.0, chars=300_000)
    assert appendix.cell(fake([100_000, None]))["chars"] is None                # half failed: failed
    binary = fake([100_000, 200_000, None], reward="binary")
    continuous = fake([100_000, None, None], reward="continuous")
    assert appendix.cell(continuous) == dict(runs=3, solved=1, minutes=None, chars=None)
    assert appendix.cell(binary) == dict(runs=3, solved=2, minutes=2.0, chars=200_000)
    table = cells(appendix.appendix_c_markdown(continuous + binary, rewards=["binary", "continuous"]))["copy"]
    assert reported(table["continuous reward"]) == ((1, 3), 0.8)
    assert reported(table["0/1 reward"]) == ((2, 3), 0.6) and numbers(table["0/1 reward"])[:2] == [2.0, 200]
    assert common_runs([continuous, binary]) is not None        # one note for the table: no cell restates its runs
    assert "ours:" not in table["continuous reward"] + table["0/1 reward"]
    # against the 0/1 reward: which side failed, else the ratio of the medians
    assert appendix.ratio_text(continuous, binary, "0/1 reward") == "failed"
    assert appendix.ratio_text(binary, continuous, "0/1 reward") == "0/1 reward failed"
    faster = fake([100_000, 300_000, None], reward="discretized")       # the failed run is the slowest: 300k
    assert appendix.cell(faster)["chars"] == 300_000
    assert appendix.ratio_text(faster, fake([200_000, 200_000], reward="binary"), "0/1 reward") == "1.50x"
    assert appendix.ratio_text([], binary, "0/1 reward") == "-"


def test_appendix_b_compares_the_small_vocabulary_with_base_10_and_counts_solves_per_base():
    rows = (fake([400_000, 400_000, None], base=2) + fake([100_000, 200_000, 300_000], base=4)
            + fake([100_000, 200_000, 300_000], base=10) + fake([None, None, 100_000], base=3)
            + [dict(r, task="walk") for r in fake([None, None, None], base=10) + fake([1_000, 5_000, None], base=4)])
    text = appendix.appendix_b_markdown(rows, bases=[2, 3, 4, 10])
    # the smallest valid base against base 10: copy's median 400k against 200k; walk never ran in base 2
    assert appendix.ratio_text(cell_rows(rows, "copy", base=2), cell_rows(rows, "copy", base=10), "base 10") == "2.00x"
    assert appendix.ratio_text(cell_rows(rows, "walk", base=2), cell_rows(rows, "walk", base=10), "base 10") == "-"

    def solved_per_base(text):
        """{base: (runs solved, runs)} of the count over the tasks valid in every base."""
        return {b: (k, n) for b, k, n in (map(int, m) for m in re.findall(r"base (\d+) (\d+)/(\d+)", text))}

    assert solved_per_base(text) == {2: (2, 3), 3: (1, 3), 4: (5, 6), 10: (3, 6)}        # copy and walk
    mult = [dict(r, task="multiplication") for r in fake([100_000], base=3)]
    assert solved_per_base(appendix.appendix_b_markdown(rows + mult, bases=[2, 3, 4, 10])) == solved_per_base(text)

    def fastest(*args):
        """{base: (runs solved, runs)} of ``appendix.fastest``: the base, or the tied bases, that solved soonest."""
        return {int(b): (int(k), int(n)) for b, k, n in re.findall(r"(\d+) \((\d+)/(\d+) solved\)",
                                                                    appendix.fastest(*args))}

    assert fastest(rows, "copy", [2, 3, 4, 10]) == {4: (3, 3), 10: (3, 3)}               # tied: 200k each
    assert fastest(rows, "walk", [2, 3, 4, 10]) == {4: (2, 3)}
    assert fastest(rows, "copy", [3, 2]) == {2: (2, 3)}                                   # a failed base beside it
    assert appendix.fastest(rows, "walk", [10]) == "every base failed"
    assert appendix.fastest(rows, "walk", [2]) == "not run"
    only_arithmetic = [dict(r, task="multiplication") for r in fake([100_000], base=3)]
    arithmetic = appendix.appendix_b_markdown(only_arithmetic, bases=[2, 3])    # no task valid in base 2
    assert solved_per_base(arithmetic) == {} and fastest(only_arithmetic, "multiplication", [3]) == {3: (1, 1)}
    assert appendix.fastest(only_arithmetic, "multiplication", [3]) in arithmetic
    assert reported(cells(text)["walk"]["base 10"]) == ((0, 3), 11.1)
    assert appendix.cell(cell_rows(rows, "walk", base=10))["chars"] is None               # failed


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
                          (["appendix-b", "--columns", "classic"], "unrecognized arguments: --columns classic")]:
        assert exit_code(["experiment", *argv, "--budget", "100", "--out", str(out)]) == 2
        assert message in capsys.readouterr().err
    assert main(["experiment", "appendix-c", "--reward", "continuous", "--budget", "100", "--out", str(out)]) == 2
    assert "unrecognized arguments: --reward continuous" in capsys.readouterr().err      # each column sets it
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
    with open(tmp_path / "figure5.csv", newline="") as f:
        tested = list(DictReader(f))
    assert {(r["column"], int(r["seed"]), int(r["budget"])) for r in tested} == {("classic", 0, 12_000),
                                                                                ("full", 0, 12_000)}
    assert [int(r["complexity"]) for r in tested] == [10, 30, 10, 30]

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
    assert len(said) == 1 and "copy-full-s1" in said[0] and "copy-classic" not in said[0]
    with open(tmp_path / "figure5.csv", newline="") as f:
        kept = {(r["column"], int(r["seed"])) for r in DictReader(f)}
    assert kept == {("classic", 0), ("classic", 1), ("full", 0)}
    rows = {line.split("|")[2].strip(): line.split("|")[-2] for line in part.splitlines() if line.startswith("| copy")}
    assert numbers(rows["full"]) == [0, 12_000] and numbers(rows["classic"]) == [0, 1, 12_000]    # seeds, budget
    assert main(["experiment", "figure5", "--summarize", "--out", str(tmp_path), "--complexities", "10", "100",
                 "--instances", "10"]) == 2
    assert "no run in" in capsys.readouterr().err


def test_each_panel_states_how_many_seeds_its_lines_average(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(figure3, "atomic_savefig", lambda fig, path, **kw: drawn.append(
        ([ax.get_title() for ax in fig.axes if ax.get_visible()],
         [t.get_text() for t in fig.axes[0].get_legend().texts])))
    rows = [dict(task=task, column=column, seed=s, complexity=c, solved=1.0)
            for task, seeds in (("copy", {"full": 2, "classic": 2}), ("walk", {"full": 3, "classic": 5}))
            for column, n in seeds.items() for s in range(n) for c in (10, 100)]
    series = figure5.series(["classic", "full"])
    figure3.plot_accuracy(rows, str(tmp_path / "f.png"), "column", series, "title")
    (titles, legend), = drawn
    assert [(title.split()[0], numbers(title)) for title in titles] == [("copy", [2]), ("walk", [3, 5])]
    assert len(legend) == len(series) and all(label in entry for (*_, label), entry in zip(series, legend))


def test_figure5_says_where_the_enhanced_version_falls_below_the_standard_one():
    def run(task, column, solved):
        return dict(task=task, column=column,
                    curve=[dict(complexity=k, solved=v) for k, v in zip((10, 100, 1000), solved)])

    groups = {("copy", "full"): [run("copy", "full", (1, 1, 0.9))],
              ("copy", "classic"): [run("copy", "classic", (1, 0.5, 0.2))],
              ("walk", "full"): [run("walk", "full", (1, 0.5, 0.0)), run("walk", "full", (1, 0.5, 0.2))],
              ("walk", "classic"): [run("walk", "classic", (1, 0.8, 0.0))]}
    assert [figure5.mean_solved(groups["walk", column], 100) for column in ("full", "classic")] == [0.5, 0.8]
    text = figure5.comparison_text(groups, ["copy", "walk"], (10, 100, 1000))
    # per task: complexities where enhanced is above, of how many; then each complexity where it is below,
    # with both means (walk at 1000: 0.1 against 0.0, above)
    assert per_task(text) == {"copy": [2, 3], "walk": [1, 3, 100, 0.5, 0.8]}
    assert figure5.comparison_text({k: v for k, v in groups.items() if k[1] == "full"}, ["copy", "walk"],
                                   (10, 100, 1000)) == ""                                # no standard runs: no claim


def test_figure5_draws_any_table1_columns_and_compares_only_the_papers_two():
    def run(column, seed, solved):
        return dict(task="addition", column=column, seed=seed, budget=10_000_000, solved=True,
                    curve=[dict(complexity=k, instances=50, solved=v) for k, v in zip((10, 1000), solved)])

    rows = [run("full", 0, (1, 0.4)), run("dynamic", 0, (1, 0.9)), run("classic", 0, (1, 0.7))]
    text = figure5.figure5_markdown(rows)
    lines = [line.split("|")[2].strip() for line in text.splitlines() if line.startswith("| addition")]
    assert lines == ["classic", "dynamic", "full"]                    # Table 1's order
    groups = {("addition", r["column"]): [r] for r in rows}
    comparison = figure5.comparison_text(groups, ["addition"], (10, 1000))
    assert per_task(comparison) == {"addition": [0, 2, 1000, 0.4, 0.7]} and comparison in text
    assert columns_text(["classic", "dynamic", "full"]) in text                # what each column is
    no_classic = {k: v for k, v in groups.items() if k[1] != "classic"}
    assert figure5.comparison_text(no_classic, ["addition"], (10, 1000)) == ""          # no classic: no claim
    assert figure5.figure5_markdown(rows[:2]).count("\n") < text.count("\n")
    drawn = figure5.series(["classic", "dynamic", "dynamic-watkins", "full"])
    assert [s[:2] for s in drawn] == [("classic", "tab:blue"), ("dynamic", figure5.OTHER_COLORS[0]),
                                      ("dynamic-watkins", figure5.OTHER_COLORS[1]), ("full", "tab:red")]
    assert drawn[0][3] == figure5.LABELS[figure5.STANDARD] and drawn[-1][3] == figure5.LABELS[figure5.ENHANCED]
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


def claim_numbers(line) -> tuple:
    """A line of ``claims_text``: (the claim, as ``table1_report.CLAIMS`` words it, the tasks it is checked over,
    the numbers before the columns (the runs left out), {column: the numbers of its cell})."""
    claim = next(words for _, words in table1_report.CLAIMS if words in line)
    head, _, body = line.partition(claim)[2].rpartition(": ")
    tasks = [t for t in TABLE1_ROWS if re.search(rf"\b{t}\b", head)]
    return claim, tasks, numbers(head), {part.split()[0]: numbers(part.split(" ", 1)[1]) for part in body.split("; ")}


def test_table1_states_the_papers_claims_over_the_runs_every_column_has():
    rows = ([row(column="classic", seed=s, solved=s < 1, chars_to_solve=100 if s < 1 else None) for s in range(3)]
            + [row(column="dynamic", seed=s, solved=s < 2, chars_to_solve=300 + 2 * s) for s in range(3)]
            + [row(task="walk", column="dynamic", seed=0, solved=True, chars_to_solve=7)]
            + [row(column="classic-400", seed=s, solved=False) for s in range(3)])
    claims = claims_text(rows)
    # each claim: the paper's words, the tasks compared, the runs left out, then per column the runs solved,
    # the runs and (if any solved) the median characters to solve
    assert [claim_numbers(line) for line in claims] == [
        ("each enhancement helps", ["copy"], [1], {"classic": [1, 3, 100], "dynamic": [2, 3, 301]}),
        ("more units hurt plain Q-learning", ["copy"], [], {"classic": [1, 3, 100], "classic-400": [0, 3]})]
    assert claims[0] in table1_markdown(rows, 1)
    # a column still running: its missing seeds leave the others' runs of those seeds out too
    running = [r for r in rows if r["column"] != "dynamic"] + [row(task="walk", column=c, seed=0, solved=False)
                                                                 for c in ("classic", "classic-400")]
    running += [row(task="walk", column="classic", seed=s, solved=True, chars_to_solve=50) for s in (1, 2)]
    assert [claim_numbers(line) for line in claims_text(running)] == [
        ("more units hurt plain Q-learning", ["copy", "walk"], [2], {"classic": [1, 4, 100], "classic-400": [0, 4]})]


def test_table1_cells_beside_the_paper_with_seeds_budgets_and_failures():
    uniform = [row(seed=s, solved=s < 3) for s in range(5)] + [row(column="gamma-0.99", seed=s) for s in range(5)]
    text = table1_markdown(uniform, 1)
    copy = cells(text)["copy"]
    # solved, runs (an unsolved run counts: 3/5), then the paper's solved of 10
    assert numbers(copy["classic: solved @100"]) == [3, 5, 9, 10]
    assert numbers(copy["gamma-0.99: solved @100"]) == [5, 5, 5, 10]
    assert common_runs([[r for r in uniform if r["column"] == c] for c in ("classic", "gamma-0.99")]) in text
    mixed = uniform + [row(column="classic-600", seed=7, budget=20_000_000, solved=False)]
    copy = cells(table1_markdown(mixed, 1))["copy"]
    # runs of different seeds or budgets: each cell adds its seeds and budget
    assert numbers(copy["classic-600: solved @100"]) == [0, 1, 3, 10, 7, 20_000_000]
    assert numbers(copy["classic: solved @100"]) == [3, 5, 9, 10, 0, 4, 10_000_000]
    assert list(copy)[1:4] == ["classic-600: solved @100", "classic: solved @100", "gamma-0.99: solved @100"]
    assert [j.name for j in table1_jobs(["copy"], ["classic-400"], [0], 100)] == ["copy-classic-400-s0"]
