"""The manifest of a handed-out copy, and what a submission changed.

``make`` records every file it hands out (``manifest.json`` in the
instructor's tests folder): its SHA-256 and, for the files that hold stubs,
which function each stub belongs to and where.  ``read_submission`` compares
a student's copy with the handed-out one and returns

* the body the student wrote for every stubbed function: the lines that
  replace the one ``raise NotImplementedError(...)`` line, up to the code
  that follows the function as handed out (blank lines, trailing spaces and
  line endings do not count as changes);
* every change outside those bodies, each with the assignments it affects:
  a changed line of a package file that holds stubs affects the assignments
  of that file; a changed, removed or added module anywhere else in the
  package, a changed ``setup.cfg`` or ``pyproject.toml``, and an added file
  that Python or pytest would load (``sitecustomize.py``,
  ``usercustomize.py``, ``conftest.py``, ``*.pth``, pytest configuration, a
  ``.py`` file in the package, in ``tests/`` or at the top) affect every
  assignment;
* notes: files that are ignored (caches, virtual environments, a student's
  edited tests, which are never used: the instructor's tests grade).
"""
from __future__ import annotations

import ast
import hashlib
import pathlib

from tinyalgo.assignments.stubs import find_function
from tinyalgo.runs.schema import Field

FORMAT = 1
# manifest.json: what ``build`` writes
SCHEMA = {"format": Field("int", choices=(FORMAT,)), "assignments": Field("list", items=Field("str")),
          "files": Field("dict", items=Field("str")), "handout": Field("str", required=False),
          "stubs": Field("dict", items=Field("list", items=Field("dict", schema={
              "assignment": Field("str"), "qualname": Field("str"), "line": Field("int", minimum=1)})))}
IGNORED_DIRS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".git", ".hg", ".svn", "build", "dist",
                ".mypy_cache", ".ruff_cache", "__MACOSX", ".idea", ".vscode"}
LOADED_NAMES = {"sitecustomize.py", "usercustomize.py", "conftest.py", "pytest.ini", ".pytest.ini", "tox.ini",
                "setup.cfg", "pyproject.toml", "setup.py"}
LOADED_SUFFIXES = {".pth", ".so", ".pyd", ".pyc", ".pyo", ".egg-link"}
CONFIG_FILES = {"setup.cfg", "pyproject.toml"}


def _lines(text: str) -> list:
    return [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def digest(path: pathlib.Path) -> str:
    data = path.read_bytes()
    if path.suffix in (".py", ".cfg", ".toml", ".md", ".json"):
        data = "\n".join(_lines(data.decode("utf-8", errors="replace"))).rstrip("\n").encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def walk(root: pathlib.Path):
    """The files under ``root`` (relative paths), without caches and virtual environments."""
    out = []
    stack = [root]
    while stack:
        d = stack.pop()
        for p in sorted(d.iterdir()):
            if p.is_symlink():
                out.append(p.relative_to(root))
            elif p.is_dir():
                if p.name in IGNORED_DIRS or p.name.endswith(".egg-info") or (p / "pyvenv.cfg").is_file():
                    continue
                stack.append(p)
            elif p.is_file():
                out.append(p.relative_to(root))
    return sorted(out)


def stub_line(source: str, qualname: str) -> int:
    """The 0-based line of the stub of ``qualname`` (its last statement, a ``raise NotImplementedError``)."""
    node = find_function(ast.parse(source), qualname)
    last = node.body[-1] if node is not None else None
    if not (isinstance(last, ast.Raise) and "NotImplementedError" in ast.unparse(last)) or \
            last.lineno != last.end_lineno:
        raise ValueError(f"{qualname} does not end with a one-line raise NotImplementedError(...)")
    return last.lineno - 1


def build(copy: pathlib.Path, chosen) -> dict:
    """The manifest of the handed-out copy at ``copy`` for the assignments ``chosen``."""
    stubs = {}
    for a in chosen:
        for f in a.functions:
            source = (copy / f.path).read_text(encoding="utf-8")
            stubs.setdefault(f.path, []).append({"assignment": a.name, "qualname": f.qualname,
                                                 "line": stub_line(source, f.qualname)})
    for entries in stubs.values():
        entries.sort(key=lambda e: e["line"])
    return {"format": FORMAT, "assignments": [a.name for a in chosen],
            "files": {str(p.as_posix()): digest(copy / p) for p in walk(copy)}, "stubs": stubs}


def split_bodies(handout: str, student: str, entries: list):
    """The student's body of each stub in a file (``entries``: the manifest's,
    in line order), or (None, line) where the text outside the bodies differs
    from the handed-out file (line: 1-based in the student's file).
    Returns ({qualname: (body text, first line 1-based)}, None) or (None, line)."""
    h, s = _lines(handout), _lines(student)
    cuts = [e["line"] for e in entries]
    segments = [h[a:b] for a, b in zip([0] + [c + 1 for c in cuts], cuts + [len(h)])]

    def trim(seg):
        i, j = 0, len(seg)
        while i < j and not seg[i]:
            i += 1
        while j > i and not seg[j - 1]:
            j -= 1
        return seg[i:j]

    lead, end = 0, len(s)                       # the student's file without blank lines at either end
    while lead < end and not s[lead]:
        lead += 1
    while end > lead and not s[end - 1]:
        end -= 1
    first = trim(segments[0])
    if s[lead:lead + len(first)] != first:
        return None, _first_difference(first, s[lead:]) + lead + 1
    pos, bodies = lead + len(first), {}
    for k, entry in enumerate(entries):
        seg = trim(segments[k + 1])
        if k == len(entries) - 1:               # the last body runs to the handed-out tail of the file
            found = end - len(seg)
            if found < pos or s[found:end] != seg:
                return None, _tail_difference(seg, s, pos, end) + 1
        else:
            found = _find(s, seg, pos)
            if found is None:
                return None, _first_difference(seg, s[pos:]) + pos + 1
        body = trim(s[pos:found])
        start = pos + next((i for i, line in enumerate(s[pos:found]) if line), 0)
        bodies[entry["qualname"]] = ("\n".join(body) + "\n", start + 1)
        pos = found + len(seg)
    return bodies, None


def _find(lines, seg, start):
    if not seg:
        return start
    for i in range(start, len(lines) - len(seg) + 1):
        if lines[i] == seg[0] and lines[i:i + len(seg)] == seg:
            return i
    return None


def _first_difference(expected, got) -> int:
    for i, line in enumerate(expected):
        if i >= len(got) or got[i] != line:
            return i
    return len(expected)


def _tail_difference(seg, s, pos, end) -> int:
    """The line of ``s[:end]`` (0-based) nearest the end where the handed-out tail ``seg`` stops matching."""
    for k in range(1, len(seg) + 1):
        if end - k < pos or s[end - k] != seg[-k]:
            return max(end - k, pos)
    return pos


def loads(rel: pathlib.PurePath) -> bool:
    """Whether Python or pytest would load an added file at ``rel`` (relative to the copy)."""
    top = rel.parts[0]
    return rel.name in LOADED_NAMES or rel.suffix in LOADED_SUFFIXES or \
        (rel.suffix == ".py" and (len(rel.parts) == 1 or top in ("tinyalgo", "tests")))


def read_submission(submission: pathlib.Path, handout: pathlib.Path, manifest: dict) -> dict:
    """Compare the student's copy at ``submission`` with the handed-out copy
    ``handout`` (the instructor's) under ``manifest``.  Returns {"bodies":
    {qualname: (text, line)}, "files": {qualname: path}, "problems":
    [(assignments or None for all, message)], "notes": [message]}."""
    problems, notes, bodies, where = [], [], {}, {}
    files = manifest["files"]
    stubs = manifest["stubs"]
    present = {p.as_posix(): p for p in walk(submission)}
    for rel, sha in files.items():
        path = submission / rel
        top = rel.split("/")[0]
        if rel in stubs:
            owners = sorted({e["assignment"] for e in stubs[rel]})
            if rel not in present:
                problems.append((owners, f"{rel} is missing from the submission"))
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError) as err:
                problems.append((owners, f"{rel} cannot be read as UTF-8 text ({err})"))
                continue
            got, line = split_bodies((handout / rel).read_text(encoding="utf-8"), text, stubs[rel])
            if got is None:
                problems.append((owners, f"{rel}, line {line}: changed outside the solution regions (write only the"
                                         " bodies that replace the stubs)"))
                continue
            for qualname, body in got.items():
                bodies[qualname] = body
                where[qualname] = rel
        elif rel not in present:
            if top == "tinyalgo" and rel.endswith(".py"):
                problems.append((None, f"{rel} is missing from the submission (a module of the package)"))
            else:
                notes.append(f"{rel} is missing (not used by the grader)")
        elif digest(path) != sha:
            if top == "tinyalgo" or rel in CONFIG_FILES:
                problems.append((None, f"{rel} was changed; only the solution regions may be edited"))
            elif rel.endswith("conftest.py"):
                problems.append((None, f"{rel} was changed (pytest loads it)"))
            else:
                notes.append(f"{rel} was changed (not used: the instructor's copy grades)")
    for rel, p in present.items():
        if rel in files:
            continue
        if (submission / p).is_symlink():
            problems.append((None, f"{rel} is a symbolic link; a submission holds plain files"))
        elif loads(pathlib.PurePath(rel)):
            problems.append((None, f"{rel} was added; Python or pytest would load it"))
        elif rel.split("/")[0] == "tinyalgo":
            problems.append((None, f"{rel} was added to the package"))
        else:
            notes.append(f"{rel} was added (ignored)")
    return {"bodies": bodies, "files": where, "problems": problems, "notes": notes}


def find_copy(submission: pathlib.Path, depth: int = 3) -> pathlib.Path:
    """The folder of a submission that holds ``tinyalgo/__init__.py``: the
    submission itself or one folder inside it (a zip of the copy's folder)."""
    submission = pathlib.Path(submission)
    if (submission / "tinyalgo" / "__init__.py").is_file():
        return submission
    if depth > 0 and submission.is_dir():
        inner = [p for p in submission.iterdir() if p.is_dir() and p.name not in IGNORED_DIRS
                 and not p.name.startswith(".")]
        found = [c for c in (find_copy(p, depth - 1) for p in inner) if c is not None]
        if len(found) == 1:
            return found[0]
    return None
