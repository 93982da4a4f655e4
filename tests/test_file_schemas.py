"""Files read back are checked against their format's schema (tinyalgo.runs.schema)
before a value is used: a hand-edited checkpoint header, run configuration or
run state, points.json or manifest.json gives one error naming the file, the
field, what was found and what is allowed; on the command line one line, exit
2, no traceback, nothing trained or graded."""
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from tinyalgo.cli import main
from tinyalgo.runs.checkpoint import CheckpointError, load_checkpoint
from tinyalgo.runs.schema import Field, FileFormatError, check, dataclass_schema, options_schema
from tinyalgo.qtraining import RunState
from tinyalgo.runs.config import QConfig


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    assert main(["train", "--task", "copy", "--units", "8", "--budget", "3000", "--confirm-length", "0",
                 "--out", str(out)]) == 0
    return out


def edit_header(src, dst, change):
    """A copy of the checkpoint ``src`` at ``dst`` whose JSON header went through ``change(header)``."""
    arrays = dict(np.load(src, allow_pickle=False))
    header = json.loads(str(arrays["__header__"]))
    change(header)
    arrays["__header__"] = np.array(json.dumps(header))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    dst.write_bytes(buffer.getvalue())


def set_in(path, value):
    def change(header):
        node = header
        for key in path[:-1]:
            node = node[key]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


DELETE = object()
EDITS = [
    (("extra", "run", "chars"), -5, "field extra.run.chars: found -5; allowed: an integer of at least 0"),
    (("extra", "run", "updates"), "12", "field extra.run.updates: found '12'; allowed: an integer of at least 0"),
    (("extra", "run", "wobble"), 1, "field extra.run.wobble is not part of this format"),
    (("extra", "run", "rng"), DELETE, "field extra.run.rng is missing; allowed: an object"),
    (("extra", "config", "task"), 123, "field extra.config.task: found 123; allowed: one of 'copy'"),
    (("extra", "config", "units"), 0, "field extra.config.units: found 0; allowed: an integer of at least 1"),
    (("extra", "config", "discount"), "0.5", "field extra.config.discount: found '0.5'; allowed: one of 'dynamic'"),
    (("extra", "mode"), "sorting", "field extra.mode: found 'sorting'; allowed: one of 'qlearning'"),
    (("extra",), [1, 2], "field extra: found [1, 2]; allowed: an object"),
    (("format",), "zip", "not a tinyalgo checkpoint"),
]


@pytest.mark.parametrize("path,value,message", EDITS, ids=[".".join(p) for p, _, _ in EDITS])
def test_a_hand_edited_checkpoint_names_its_file_and_field(run_dir, tmp_path, path, value, message):
    edited = tmp_path / "checkpoint.npz"
    edit_header(run_dir / "checkpoint.npz", edited, set_in(path, value))
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(edited)
    assert str(err.value).startswith(f"checkpoint {edited}: ") and message in str(err.value)


def test_resuming_a_hand_edited_run_is_one_line_and_trains_nothing(run_dir, tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    for name in ("checkpoint.npz",):
        edit_header(run_dir / name, out / name, set_in(("extra", "run", "chars"), -5))
    before = sorted(p.name for p in out.iterdir())
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "train", "--resume", "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "field extra.run.chars: found -5; allowed: an integer of at least 0" in lines[0]
    assert sorted(p.name for p in out.iterdir()) == before


def test_the_schemas_follow_the_declarations():
    """A new option or RunState field is checked without being listed: the schemas are derived."""
    schema = options_schema(QConfig)
    assert schema["greedy_lanes"] == Field("int", minimum=0, required=False)      # its maximum depends on batch
    assert schema["gamma"].minimum == 0.0 and schema["gamma"].maximum == 1.0
    assert schema["discount"].choices == ("dynamic", "1", "0.99", "0.95")
    assert set(dataclass_schema(RunState)) == set(RunState.__dataclass_fields__)
    check({"rng": {}, "curriculum": {}}, dataclass_schema(RunState), "x")           # the rest has defaults
    with pytest.raises(FileFormatError, match="x: field seconds: found nan; allowed: a finite number of at least 0"):
        check({"rng": {}, "curriculum": {}, "seconds": float("nan")}, dataclass_schema(RunState), "x")


@pytest.fixture(scope="module")
def instructor(tmp_path_factory):
    out = tmp_path_factory.mktemp("hw") / "hw"
    assert main(["assignment", "make", "layers", "--out", str(out)]) == 0
    return out, out.parent / "hw-instructor"


@pytest.mark.parametrize("name,change,message", [
    ("points.json", lambda d: d["layers"].update(test_affine=-1),
     "points.json: field layers.test_affine: found -1; allowed: a finite number of at least 0"),
    ("points.json", lambda d: d.update(layers=[1]), "points.json: field layers: found [1]; allowed: an object"),
    ("manifest.json", lambda d: d.update(format=7), "manifest.json: field format: found 7; allowed: one of 1"),
    ("manifest.json", lambda d: next(iter(d["stubs"].values()))[0].update(line=0),
     "allowed: an integer of at least 1"),
    ("manifest.json", lambda d: d.pop("files"), "manifest.json: field files is missing; allowed: an object"),
])
def test_a_hand_edited_grading_file_is_one_line_before_grading(instructor, tmp_path, name, change, message):
    import shutil
    copy, tests = instructor
    edited = tmp_path / "tests"
    shutil.copytree(tests / "tests", edited)
    data = json.loads((edited / name).read_text(encoding="utf-8"))
    change(data)
    (edited / name).write_text(json.dumps(data), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "assignment", "grade", str(copy), "--tests", str(edited)],
                         capture_output=True, text=True, timeout=120)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and message in lines[0], run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_a_long_valid_file_name_is_written_and_leaves_no_temporary(tmp_path):
    from tinyalgo.runs.fileio import atomic_write_json
    name = "r" * 230 + ".json"                     # valid: under 255 bytes, but not with 30 more
    atomic_write_json(tmp_path / name, {"ok": 1})
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.parametrize("argv,message", [
    (["--png", "t.xyz"], "--png t.xyz: the file name must end in .png"),
    (["--png", "tracepic"], "--png tracepic: the file name must end in .png"),
    (["--json", "j" * 300], "--json: the file name is 300 bytes long, more than the 255 this file system takes"),
])
def test_trace_checks_its_outputs_before_tracing(run_dir, tmp_path, argv, message):
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "trace", str(run_dir / "checkpoint.npz")] + argv,
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and lines == [f"tinyalgo: error: {message}"] and run.stdout == "", run.stderr
    assert list(tmp_path.iterdir()) == []


MACHINE_EDITS = [
    (lambda d: d.update(base=11), "field base: found 11; allowed: an integer in [2, 10]"),
    (lambda d: d.update(task=3), "field task: found 3; allowed: one of 'copy'"),
    (lambda d: d["visits"].__setitem__(0, -1), "field visits[0]: found -1; allowed: an integer of at least 0"),
    (lambda d: d.pop("start"), "field start is missing; allowed: an integer of at least 0"),
    (lambda d: d.update(action="x"), "field action: found 'x'; allowed: a list"),
    (lambda d: d["action"][0].__setitem__(0, 2 ** 63), "field action[0][0]: found an integer of 64 bits"),
    (lambda d: d["centroids"][0].__setitem__(0, 10 ** 400), "field centroids[0][0]: found 1000"),
    (lambda d: d.update(states=10 ** 30), "field states: found an integer of 100 bits; allowed: an integer of at"),
    (lambda d: d.update(states=3), "field action is not 3 rows of 17 (states = 3, inputs = 17)"),
    (lambda d: d["next"][1].append(0), "field next is not 2 rows of 17"),
    (lambda d: d["next"][1].__setitem__(4, 2), "field next[1][4]: found 2; allowed: -1..1"),
    (lambda d: d["action"][0].__setitem__(3, 4), "field action[0][3]: found 4; allowed: -1..3"),
    (lambda d: d.update(start=2), "field start: found 2; allowed: 0..1 (a state)"),
]


@pytest.mark.parametrize("change,message", MACHINE_EDITS, ids=[m.split(":")[0] for _, m in MACHINE_EDITS])
def test_a_hand_edited_machine_names_its_file_and_field(tmp_path, change, message):
    from tinyalgo.automata.machine import Machine, MachineError, load_machine
    V = 17                                          # base 10: ten digits, the markers, none
    two = np.zeros((2, V), dtype=np.int64)
    machine = Machine("reverse", 10, 2, two + 1, two - 1, np.ones((2, V), dtype=np.int64), 0, np.zeros((1, 1)),
                      np.zeros(2, dtype=np.int64), np.zeros((2, 4), dtype=np.int64),
                      np.array([[0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 1]]), np.array([5, 5]))
    path = tmp_path / "m.json"
    machine.save(path)
    load_machine(path)                              # as saved: loads
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MachineError) as err:
        load_machine(path)
    assert str(err.value) == f"machine {path}: {message}" or (str(err.value).startswith(f"machine {path}: ")
                                                             and message in str(err.value))


def test_a_machine_with_a_number_of_thousands_of_digits_names_its_file(tmp_path):
    from tinyalgo.automata.machine import MachineError, load_machine
    path = tmp_path / "m.json"
    path.write_text('{"format": "tinyalgo-automaton", "states": ' + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(MachineError, match=r"m.json: not readable JSON \(a number of thousands of digits\)$"):
        load_machine(path)


def a_run_log():
    """A finished run's log as the committed sweeps hold it (figures/ablations_1e7, packed), or one made here."""
    from tinyalgo.experiments.runlogs import packed
    from pathlib import Path
    folder = Path(__file__).resolve().parents[1] / "figures" / "ablations_1e7"
    entries = packed(folder) if folder.is_dir() else {}
    if not entries:
        pytest.skip("no committed sweep (an sdist)")
    name = sorted(entries)[0]
    return name, entries[name]["log"]


LOG_EDITS = [
    (lambda log: log["run"].update(chars=-5), "field run.chars: found -5; allowed: an integer of at least 0"),
    (lambda log: log["config"].update(task=123), "field config.task: found 123; allowed: one of 'copy'"),
    (lambda log: log["evaluations"][0].update(solved=1.5),
     "field evaluations[0].solved: found 1.5; allowed: a finite number in [0, 1]"),
    (lambda log: log["history"][0].pop("level"), "field history[0].level is missing"),
    (lambda log: log.update(evaluations={"a": 1}), "field evaluations: found {'a': 1}; allowed: a list"),
]


@pytest.mark.parametrize("change,message", LOG_EDITS, ids=[m.split(":")[0] for _, m in LOG_EDITS])
def test_a_hand_edited_run_log_names_its_file_and_field(tmp_path, change, message):
    from tinyalgo.experiments.runlogs import run_logs
    name, log = a_run_log()
    (tmp_path / "runs").mkdir()
    path = tmp_path / "runs" / f"{name}.json"
    change(log)
    path.write_text(json.dumps(log), encoding="utf-8")
    with pytest.raises(FileFormatError) as err:
        run_logs(tmp_path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)
    run = subprocess.run([sys.executable, "-m", "tinyalgo", "experiment", "table1", "--summarize", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=60)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and message in lines[0], run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]          # no table written


def test_a_hand_edited_figure5_file_names_its_file_and_field(tmp_path):
    from tinyalgo.experiments.runlogs import run_file
    name, log = a_run_log()
    folder = tmp_path / "runs" / name
    folder.mkdir(parents=True)
    (tmp_path / "runs" / f"{name}.json").write_text(json.dumps(log), encoding="utf-8")
    tests = [{"complexity": 10, "instances": 50, "solved": 1.0, "char_accuracy": 1.0, "tested": True}]
    (folder / "figure5.json").write_text(json.dumps(tests), encoding="utf-8")
    assert run_file(str(folder), "figure5.json") == tests
    tests[0]["complexity"] = "ten"
    (folder / "figure5.json").write_text(json.dumps(tests), encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"figure5.json: field figure5.json\[0\].complexity: found 'ten';"
                                              " allowed: an integer of at least 1"):
        run_file(str(folder), "figure5.json")
