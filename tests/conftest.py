import pathlib
import sys

import pytest

from tinyalgo.host.threads import one_blas_thread

one_blas_thread()                   # before NumPy loads, as the command line does

sys.path.insert(0, str(pathlib.Path(__file__).parent))     # tests' shared helpers

# The README's command runs the tests on every core: pytest -n auto --dist loadgroup (pytest-xdist).
# Tests that share an expensive fixture stay on one worker, so it is built once; the longest tests start
# first, so that the workers end together.  Serially (plain pytest) nothing here applies.
SHARED = ("module", "package", "session")
LONGEST_FIRST = (             # nodeid prefixes, the longest first (seconds of one core, measured)
    "tests/test_tutorials.py::test_on_a_stub_copy_each_cell_says_which_stub_it_needs",   # 20, two threads: copies
    "tests/test_tutorials.py::test_every_assignment_is_named_by_its_tutorial",           # 2
    "tests/test_tutorials.py::test_on_a_solution_copy_every_cell_runs",
    "tests/test_grader.py::test_grade_all_a_class_of_six",                                # 4
    "tests/test_appendix_sweeps.py",
    "tests/test_qtraining.py",
    "tests/test_q_loop.py",
    "tests/test_grader.py",
)


def _rank(item) -> int:
    return next((k for k, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)), len(LONGEST_FIRST))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if not hasattr(config, "workerinput"):      # not an xdist worker
        return
    items.sort(key=_rank)                       # stable: otherwise in the order collected
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        shared = info and [d for defs in info.name2fixturedefs.values() for d in defs[-1:]
                           if d.scope in SHARED and d.baseid]              # ours: pytest's own have no baseid
        if shared:                              # a module's tests that use its module-scoped fixture: one group
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
