"""Every citation in the package, the tests, the tutorials, the docs and the
README resolves inside the repository: a cited path (``docs/...``,
``figures/...``, ``benchmarks/...``, ``tinyalgo/...``, ``tests/...``,
``tutorials/...``) exists, a ``#anchor`` after a cited Markdown page is a
heading or an ``<a id>`` of that page, and nothing cites the workspace's
reference file, which a clone does not have (cite the paper's section or
equation, or an anchor of docs/original-release.md, instead)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED_DIRS = ("tinyalgo", "tests", "tutorials", "docs")
SCANNED_FILES = ("README.md",)

# A repository path: one of the top-level folders, then a slash and at least one
# more character; trailing punctuation is left out.  Not preceded by a path
# character, so "github.com/owner/tests/x" or "a_tests/x" is no citation.
PATH = re.compile(r"(?<![\w./-])((?:docs|figures|benchmarks|tinyalgo|tests|tutorials)/[\w.*/-]*[\w*])(#[\w-]+)?")
# Citations of the workspace's reference file (written so that this file does
# not match itself).
WORKSPACE = re.compile(r"REFERENCE\s+\d|REFERENCE\.md|\.\./shared|checklist \d")
ANCHOR_ID = re.compile(r"""<a\s+(?:name|id)=["']([^"']+)["']""")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
TAG = re.compile(r"<[^>]+>")
# What a build writes (git ignores it): Python's caches, and the documentation site's output and the pages it
# generates, as docs/.gitignore lists them.
GENERATED = {"__pycache__", "_build", "jupyter_execute"}
# An issue number ("issue" and a number): a clone cannot resolve it.  History goes to CHANGELOG.md.
ISSUE = re.compile(r"\bissues?\s*#?\s*\d+", re.I)
ISSUE_DIRS = ("tinyalgo", "tests", "tutorials", "benchmarks")
# Gymnasium environment ids (tinyalgo/gym/__init__.py) look like paths but are none.
GYM_ID = re.compile(r"tinyalgo/[A-Z]\w*-v\d+")


def generated(root: Path, path: Path) -> bool:
    """True for a file a build writes: under a folder of GENERATED, or matched by docs/.gitignore."""
    if GENERATED.intersection(path.parts):
        return True
    ignore = root / "docs" / ".gitignore"
    if not ignore.is_file() or root / "docs" not in path.parents:
        return False
    rel = path.relative_to(root / "docs").as_posix()
    patterns = [line.strip() for line in ignore.read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.startswith("#")]
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in patterns)


def scanned_files(root: Path) -> list:
    """The .py and .md files whose citations must resolve, sorted."""
    files = [root / name for name in SCANNED_FILES if (root / name).is_file()]
    for folder in SCANNED_DIRS:
        for path in (root / folder).rglob("*"):
            if path.suffix in (".py", ".md") and path.is_file() and not generated(root, path):
                files.append(path)
    return sorted(files)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = TAG.sub("", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set:
    """The anchors of a Markdown page: explicit ``<a id>`` and heading slugs."""
    text = page.read_text(encoding="utf-8")
    return set(ANCHOR_ID.findall(text)) | {github_slug(h) for h in HEADING.findall(text)}


def _exists(root: Path, cited: str) -> bool:
    if "*" in cited:
        return any(root.glob(cited))
    return (root / cited).exists()


def citation_problems(root: Path, files) -> list:
    """'file:line: what is wrong' for every citation that does not resolve."""
    problems, page_anchors = [], {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix()

        def where(match):
            return f"{name}:{text.count(chr(10), 0, match.start()) + 1}"

        for m in WORKSPACE.finditer(text):
            problems.append(f"{where(m)}: cites the workspace's reference file ({m.group(0)!r}); "
                            "cite the paper's section or an anchor of docs/original-release.md")
        for m in PATH.finditer(text):
            cited, anchor = m.group(1), m.group(2)
            if GYM_ID.fullmatch(cited):
                continue
            if not _exists(root, cited):
                problems.append(f"{where(m)}: cites {cited}, which does not exist")
            elif anchor and cited.endswith(".md"):
                if cited not in page_anchors:
                    page_anchors[cited] = anchors(root / cited)
                if anchor[1:] not in page_anchors[cited]:
                    problems.append(f"{where(m)}: cites {cited}{anchor}, but {cited} has no anchor {anchor[1:]!r}")
    return problems


def test_citations_resolve_in_the_repository():
    files = scanned_files(ROOT)
    assert len(files) > 50, f"the scan found only {len(files)} files under {ROOT}"
    problems = citation_problems(ROOT, files)
    assert not problems, f"{len(problems)} citations do not resolve:\n" + "\n".join(problems)


def issue_citations(root: Path) -> list:
    """'file:line: text' for every issue number in the code, tests, tutorials and benchmarks."""
    found = []
    for folder in ISSUE_DIRS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".py", ".md") or not path.is_file() or generated(root, path):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if ISSUE.search(line):
                    found.append(f"{path.relative_to(root).as_posix()}:{number}: {line.strip()}")
    return found


def test_no_code_cites_an_issue_number():
    found = issue_citations(ROOT)
    assert not found, (f"{len(found)} lines cite an issue number, which a clone cannot resolve; say what the "
                       "code does (history goes to CHANGELOG.md):\n" + "\n".join(found))


def test_the_issue_scan_catches_a_citation(tmp_path):
    (tmp_path / "tinyalgo").mkdir()
    word, mod = "issue", "/".join(("tinyalgo", "mod.py"))
    (tmp_path / mod).write_text(
        f'"""Does x ({word} 27, item 2)."""\n# fine: an issue of the paper\n# {word.title()} #28\n# {word}s 3 and 4\n')
    assert [f.split(": ")[0] for f in issue_citations(tmp_path)] == [f"{mod}:{line}" for line in (1, 3, 4)]


def test_the_release_page_has_the_anchors_the_code_cites():
    page = anchors(ROOT / "docs" / "original-release.md")
    for anchor in ("board", "interfaces", "observation", "tasks", "ground-truth", "timeout", "controller",
                   "initialisation", "bptt", "v-hat", "watkins", "penalty", "exploration", "digit-zero",
                   "rewards", "curriculum", "bugs"):
        assert anchor in page, f"docs/original-release.md has no anchor {anchor!r}"


def test_the_scan_catches_bad_citations(tmp_path):
    """On a small fake repository: a missing path, a missing anchor and a
    workspace citation are reported, with their lines; good ones are not."""
    page = "/".join(("docs", "page.md"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "tinyalgo").mkdir()
    (tmp_path / page).write_text("# Title\n\n## <a id=\"kept\"></a>Kept rules\n\n## Plain heading, too\n")
    mod = "/".join(("tinyalgo", "mod.py"))
    bad = tmp_path / mod
    ref = "REFERENCE"
    bad.write_text("\n".join([
        f'"""Good: {page}#kept, {page}#plain-heading-too, {page}, {mod}."""',
        f"# missing page: {'/'.join(('docs', 'nowhere.md'))}",
        f"# missing anchor: {page}#gone",
        f"# workspace: ({ref} 2.6), split ({ref}",
        "4.5), and ../" + "shared/x, check" + "list 19",
        f"# missing figure: {'/'.join(('figures', 'none.png'))}.",
    ]) + "\n")
    files = scanned_files(tmp_path)
    assert [f.name for f in files] == ["page.md", "mod.py"]
    problems = citation_problems(tmp_path, files)
    lines = sorted(p.split(": ")[0] for p in problems)
    assert lines == [f"{mod}:{line}" for line in (2, 3, 4, 4, 5, 5, 6)], problems
    assert github_slug("<a id=\"x\"></a>Interfaces and joint actions (no \"stay\")") == \
        "interfaces-and-joint-actions-no-stay"
