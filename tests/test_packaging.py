"""The package as people install it: the sdist (MANIFEST.in) carries every file
the tests read and every page the code and docs cite, and none of the sweeps'
run logs; the oldest Python is the same in setup.cfg's python_requires, its
classifiers and ruff's target; the license file is the license the metadata
names.  CI builds the sdist and runs its own pytest (.ci/run); these checks say
the same sooner, without a build."""
import configparser
import re
from pathlib import Path

import pytest

from test_citations import GYM_ID, PATH, generated, scanned_files

ROOT = Path(__file__).resolve().parents[1]
# The folders MANIFEST.in reaches into besides the package (which setuptools adds from setup.cfg's packages).
TOP = ("tests", "tutorials", "docs", "benchmarks", "figures")


def sdist_files(root: Path, monkeypatch) -> set:
    """The files MANIFEST.in puts in the sdist besides the package, as setuptools reads the template."""
    egg_info = pytest.importorskip("setuptools.command.egg_info", reason="reading MANIFEST.in needs setuptools")
    files = egg_info.FileList()
    files.allfiles = sorted([p.relative_to(root).as_posix() for top in TOP if (root / top).is_dir()
                             for p in (root / top).rglob("*") if p.is_file()]
                            + [p.name for p in root.iterdir() if p.is_file()])
    monkeypatch.chdir(root)
    for line in (root / "MANIFEST.in").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            files.process_template_line(line)
    return set(files.files)


def test_the_sdist_carries_what_its_tests_read_and_what_is_cited(monkeypatch):
    shipped = sdist_files(ROOT, monkeypatch)
    needed = [p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    needed += [p.relative_to(ROOT).as_posix() for p in (ROOT / "tutorials").glob("[0-9]*")
               if p.suffix in (".py", ".ipynb")]
    needed += [p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*")
               if p.is_file() and not generated(ROOT, p)]
    needed += ["LICENSE", "README.md", "benchmarks/README.md", "figures/README.md"]
    assert sorted(set(needed) - shipped) == []
    cited = {m.group(1) for path in scanned_files(ROOT) for m in PATH.finditer(path.read_text(encoding="utf-8"))
             if not GYM_ID.fullmatch(m.group(1)) and not m.group(1).startswith("tinyalgo/")}
    cited = {c for c in cited if any(ROOT.glob(c))}          # one that does not exist: test_citations says so
    assert cited, "no citation found outside the package"
    # a cited folder needs one of its files in the sdist, a cited file itself, a cited pattern one match
    pattern = {c: re.compile(re.escape(c).replace(r"\*", "[^/]*") + "(/.*)?$") for c in cited}
    missing = sorted(c for c in cited if not any(pattern[c].match(f) for f in shipped))
    assert missing == [], f"cited but left out of the sdist (MANIFEST.in): {missing}"
    runs = sorted(f for f in shipped if "/runs/" in f and f.startswith("figures/"))
    assert runs == [], f"run logs in the sdist: {runs[:5]}"
    size = sum((ROOT / f).stat().st_size for f in shipped)
    # the largest parts: the committed machines the tests verify (addition, 3-number addition, multiplication:
    # 3.4 MB) and the fresh seeds' kept proofs with their certificates (2.7 MB with the retrained and faithful ones)
    assert size < 8_000_000, f"the sdist's files outside the package are {size:,} bytes"


def test_the_scan_sees_a_file_left_out(tmp_path, monkeypatch):
    """On a fake project: a file the template does not reach is not in the set."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "kept.py").write_text("")
    (tmp_path / "figures" / "a" / "runs").mkdir(parents=True)
    (tmp_path / "figures" / "a" / "page.md").write_text("")
    (tmp_path / "figures" / "a" / "picture.png").write_bytes(b"")
    (tmp_path / "figures" / "a" / "runs" / "x.md").write_text("")
    (tmp_path / "MANIFEST.in").write_text((ROOT / "MANIFEST.in").read_text(encoding="utf-8"))
    kept = {"/".join(("tests", "kept.py")), "/".join(("figures", "a", "page.md"))}     # not citations
    assert sdist_files(tmp_path, monkeypatch) == kept


def test_the_oldest_python_is_declared_alike_everywhere():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    oldest = re.fullmatch(r">=\s*3\.(\d+)", cfg["options"]["python_requires"].strip())
    assert oldest, cfg["options"]["python_requires"]
    versions = sorted(int(v) for v in re.findall(r"Programming Language :: Python :: 3\.(\d+)",
                                                 cfg["metadata"]["classifiers"]))
    assert versions[0] == int(oldest[1]) and versions == list(range(versions[0], versions[-1] + 1))
    target = re.search(r'^target-version\s*=\s*"py3(\d+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"),
                       re.M)
    assert target and int(target[1]) == int(oldest[1])


def test_the_license_file_is_the_license_the_metadata_names():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    assert cfg["metadata"]["license_expression"].strip() == "MIT"
    assert cfg["metadata"]["license_files"].split() == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text
