"""The package's layers, lowest first, and who may import whom.

The paper's concepts sit at the top level of ``tinyalgo/`` and import only
each other and ``host`` (the memory this process can get, its threads);
every subpackage above imports only what lies below it; importing
``tinyalgo`` itself imports nothing.  Every ``import`` is counted, also those inside functions, so
a lazy import cannot hide an upward one."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tinyalgo"

# Lowest first (host: what the process gets from the machine, e.g. memory).  A module may import its own
# layer and every layer before it;
# layers on one line (a tuple) are siblings and do not import each other.
LAYERS = ["host", "paper", "runs", "inspection", ("automata", "gym"), "assignments", "experiments", "cli"]
# The package's wiring: ``python -m tinyalgo`` is the command line.
WIRING = {"tinyalgo.__main__": {"cli"}}
SUBPACKAGES = {name for layer in LAYERS for name in (layer if isinstance(layer, tuple) else (layer,))} - {"paper"}


def layer_of(module: str) -> str:
    """The layer of a dotted module name inside tinyalgo: a subpackage's name, or "paper"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else "paper"


def rank(layer: str) -> int:
    return next(i for i, entry in enumerate(LAYERS) if layer == entry or (isinstance(entry, tuple) and layer in entry))


def modules():
    """(dotted name, path) of every module of the package, the grading tests
    and self-check tests of the assignments excepted (they are test files, not modules)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if "grading" in path.parts or "selfcheck" in path.parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imports(path: Path):
    """The tinyalgo modules (dotted) that ``path`` imports, with line numbers."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "tinyalgo" else [f"tinyalgo.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        yield from ((name, node.lineno) for name in names if name.startswith("tinyalgo."))


def violations():
    found = []
    for module, path in modules():
        own = layer_of(module)
        for target, line in imports(path):
            other = layer_of(target)
            if module in WIRING:
                ok = other in WIRING[module] or other == "paper"
            else:
                ok = other == own or rank(other) < rank(own)
            if not ok:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {own} imports {target} ({other})")
    return found


def test_no_module_imports_a_layer_above_its_own():
    assert violations() == []


def test_the_paper_imports_nothing_but_the_paper_and_the_host():
    paper = [(m, t) for m, p in modules() if layer_of(m) == "paper" and m not in WIRING
             for t, _ in imports(p) if layer_of(t) not in ("paper", "host")]
    assert paper == []


def test_the_layering_check_sees_an_upward_import(tmp_path, monkeypatch):
    """A paper module importing a layer above it (even lazily, inside a function) is caught."""
    fake = tmp_path / "tinyalgo"
    (fake / "runs").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "runs" / "__init__.py").write_text("")
    (fake / "environment.py").write_text("def f():\n    from tinyalgo.runs.config import QConfig\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert violations() == ["tinyalgo/environment.py:2: paper imports tinyalgo.runs.config (runs)"]


def test_every_subpackage_has_a_layer():
    on_disk = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()} - {"tasks"}
    assert on_disk == SUBPACKAGES
