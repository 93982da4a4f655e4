"""A sweep's runs packed into one file (tinyalgo.experiments.runlogs): the
tables rebuilt from the packed file are those of the loose logs, without the
models; a sweep skips the packed runs; a loose log replaces its packed copy;
the same runs pack to the same bytes; earlier sweep logs (tests/fixtures)
pack and load; a damaged packed file is one clear error; and the CSVs
committed under figures/ are what their folders' packed logs (or, where no
log is kept, their own rows) give."""
import gzip
import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sweep_helpers import SMALL
from tinyalgo.experiments import appendix, figure5
from tinyalgo.experiments.runlogs import ARCHIVE, final_models, pack, run_file, run_log, run_logs
from tinyalgo.experiments.table1 import run_sweep, table1_jobs
from tinyalgo.experiments.table1_report import read_results_csv, results_csv, row_key, summarize_directory
from tinyalgo.qtraining import QTrainer

FIXTURES = Path(__file__).parent / "fixtures"
FIGURES = Path(__file__).resolve().parent.parent / "figures"      # not in the sdist: those tests skip


def figure(out, seeds=(0,)):
    """A tiny Figure 5 sweep (copy, classic and full) tested at complexities 10 and 30; its table."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return figure5.run_figure5(["copy"], list(seeds), 12_000, str(out), dict(SMALL, confirm_length=0), "cmd",
                                   complexities=(10, 30), instances=10, executor=pool, log=lambda s: None)


def table1_sweep(out, seeds=(0, 1)):
    jobs = table1_jobs(["copy"], ["full"], seeds, 2_000, str(out), **dict(SMALL, confirm_length=0))
    with ThreadPoolExecutor(max_workers=1) as pool:
        return run_sweep(jobs, executor=pool, log=lambda s: None)


def no_work(*args, **kw):
    raise AssertionError("a packed run was trained or tested again")


@pytest.mark.slow
def test_the_packed_runs_rebuild_the_figure_and_the_sweep_does_nothing_again(tmp_path, monkeypatch):
    text = figure(tmp_path)
    made = {name: (tmp_path / name).read_bytes() for name in ("figure5.csv", "figure5.md")}
    rows = summarize_directory(tmp_path)
    assert pack(tmp_path) == ["copy-classic-s0", "copy-full-s0"]
    packed = (tmp_path / ARCHIVE).read_bytes()
    assert pack(tmp_path) == ["copy-classic-s0", "copy-full-s0"] and (tmp_path / ARCHIVE).read_bytes() == packed
    shutil.rmtree(tmp_path / "runs")                          # logs, tests and models gone: the packed file stays
    assert summarize_directory(tmp_path) == rows

    monkeypatch.setattr(QTrainer, "run", no_work)
    monkeypatch.setattr(figure5, "evaluate_complexity", no_work)
    for name in made:
        (tmp_path / name).unlink()
    assert figure5.summarize_figure5(str(tmp_path), "cmd", (10, 30), 10, log=no_work) == text
    assert {name: (tmp_path / name).read_bytes() for name in made} == made
    assert figure(tmp_path) == text                           # the same sweep again: every run is finished
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").glob("*.json"))


def test_a_sweep_that_grows_trains_only_its_new_runs_and_packs_them_beside_the_old(tmp_path, monkeypatch):
    first = table1_sweep(tmp_path, seeds=(0,))
    pack(tmp_path)
    shutil.rmtree(tmp_path / "runs")
    trained = []
    real_run = QTrainer.run

    def counted(self, *args, **kw):
        trained.append(self.cfg.seed)
        return real_run(self, *args, **kw)

    monkeypatch.setattr(QTrainer, "run", counted)
    rows = table1_sweep(tmp_path, seeds=(0, 1))
    assert trained == [1] and rows[0] == first[0]
    assert pack(tmp_path) == ["copy-full-s0", "copy-full-s1"]
    shutil.rmtree(tmp_path / "runs")
    assert summarize_directory(tmp_path) == rows


@pytest.mark.slow
def test_a_loose_log_replaces_its_packed_copy_and_the_files_packed_with_it(tmp_path):
    figure(tmp_path)
    pack(tmp_path)
    folder = tmp_path / "runs" / "copy-full-s0"
    tests = json.loads((folder / "figure5.json").read_text())
    (folder / "figure5.json").unlink()
    assert run_file(str(folder), "figure5.json") == tests                    # the packed copy
    log = json.loads((tmp_path / "runs" / "copy-full-s0.json").read_text())
    log["run"]["chars"] += 1                                                   # another run under the same name
    (tmp_path / "runs" / "copy-full-s0.json").write_text(json.dumps(log))
    assert run_log(str(folder)) == log and run_logs(tmp_path)["copy-full-s0"] == log
    assert run_file(str(folder), "figure5.json") is None                      # the packed tests were another run's
    assert [r["chars"] for r in summarize_directory(tmp_path) if r["column"] == "full"] == [log["run"]["chars"]]
    pack(tmp_path)
    with gzip.open(tmp_path / ARCHIVE, "rt") as f:
        lines = {e["name"]: e for e in map(json.loads, f)}
    assert lines["copy-full-s0"]["log"] == log and "files" not in lines["copy-full-s0"]
    assert lines["copy-classic-s0"]["files"]["figure5.json"] == json.loads(
        (tmp_path / "runs" / "copy-classic-s0" / "figure5.json").read_text())


def test_earlier_sweep_logs_pack_and_give_their_rows(tmp_path):
    shutil.copytree(FIXTURES / "table1", tmp_path / "table1")
    rows = summarize_directory(tmp_path / "table1")
    assert pack(tmp_path / "table1") == ["copy-full-s0", "copy-full-s1"]
    shutil.rmtree(tmp_path / "table1" / "runs")
    assert summarize_directory(tmp_path / "table1") == rows


def test_nothing_to_pack_and_a_damaged_packed_file_are_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"no run logs in .* to pack"):
        pack(tmp_path)
    (tmp_path / ARCHIVE).write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="cannot be read as gzip JSON Lines"):
        summarize_directory(tmp_path)
    (tmp_path / ARCHIVE).write_bytes(gzip.compress(b'{"name": "copy-full-s0", "log": {}}\n[1, 2]\n'))
    with pytest.raises(ValueError, match="line 2: not a packed run"):
        run_logs(tmp_path)


def test_final_models_are_all_found_before_any_is_used(tmp_path):
    table1_sweep(tmp_path, seeds=(0,))
    assert list(final_models(tmp_path, ["copy-full-s0"])) == ["copy-full-s0"]
    with pytest.raises(ValueError, match=re.escape("copy-full-s1/checkpoint.npz is missing: give as --out the sweep")):
        final_models(tmp_path, ["copy-full-s0", "copy-full-s1"])


def committed(folder):
    """A folder of figures/ with its packed logs; the test skips where figures/ has no such file (an sdist)."""
    if not (FIGURES / folder / ARCHIVE).is_file():
        pytest.skip(f"no {ARCHIVE} in figures/{folder}")
    return FIGURES / folder


def test_the_committed_tables_rows_are_those_of_their_packed_logs():
    ablations = committed("ablations_1e7")
    assert results_csv(summarize_directory(ablations)).encode() == (ablations / "table1.csv").read_bytes()
    folder = committed("appendix")
    rows = summarize_directory(folder)
    for name, csv_name in (("appendix-b", "appendix_b.csv"), ("appendix-c", "appendix_c.csv")):
        made = results_csv(sorted(appendix.table_rows(name, rows), key=row_key))
        assert made.encode() == (folder / csv_name).read_bytes(), name


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["figure5", "figure5_ablations"])
def test_the_committed_figure5_is_rebuilt_from_its_packed_logs_and_tests(folder, tmp_path, monkeypatch):
    source = committed(folder)
    shutil.copy(source / ARCHIVE, tmp_path / ARCHIVE)
    monkeypatch.setattr(figure5, "evaluate_complexity", no_work)
    figure5.summarize_figure5(str(tmp_path), "cmd", log=no_work)
    assert (tmp_path / "figure5.csv").read_bytes() == (source / "figure5.csv").read_bytes()


def test_the_committed_tables_without_logs_read_back_as_their_rows():
    folders = [f for f in FIGURES.glob("**/table1.csv") if not (f.parent / ARCHIVE).exists()]
    if not folders:
        pytest.skip("no table1.csv without packed logs under figures/")
    for path in folders:
        assert results_csv(read_results_csv(path)).encode() == path.read_bytes(), path
