"""A Table 1 sweep on a real distributed engine: the runs go to the worker
processes of a Dask ``LocalCluster`` through its client's executor and give
the rows a local process pool gives.  Needs the ``dask`` extra
(``pip install -e ".[dask]"``); skipped without it, run by CI.  ``distributed`` is
imported by that test, not when pytest collects the file (every xdist worker
collects every file); tinyalgo itself never imports it, with or without the extra."""
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

from tinyalgo.experiments.table1 import run_sweep, table1_jobs

SMALL = dict(confirm_length=0, validate_every=3, val_instances=10, test_length=20, report_lengths=(20,))


def without_clock(rows):
    return [{k: v for k, v in r.items() if not k.startswith("minutes")} for r in rows]


@pytest.mark.slow
def test_a_sweep_on_a_dask_cluster_gives_the_process_pool_rows(tmp_path):
    distributed = pytest.importorskip("distributed")
    jobs = table1_jobs(["copy", "reverse"], ["full"], (0,), 3_000, str(tmp_path / "pool"), **SMALL)
    with ProcessPoolExecutor(max_workers=2) as pool:
        local = run_sweep(jobs, executor=pool, log=lambda s: None)
    jobs = table1_jobs(["copy", "reverse"], ["full"], (0,), 3_000, str(tmp_path / "dask"), **SMALL)
    workers = set()
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        remote = run_sweep(jobs, executor=client.get_executor(), log=lambda s: None)
        workers = set(client.run(os.getpid).values())
    assert len(workers) == 2 and os.getpid() not in workers     # separate worker processes
    assert [(r["task"], r["seed"]) for r in remote] == [("copy", 0), ("reverse", 0)]
    assert all(r["chars"] >= 3_000 for r in remote)
    assert without_clock(remote) == without_clock(local)
    for task in ("copy", "reverse"):                        # each worker wrote its run where the sweep said
        assert (tmp_path / "dask" / "runs" / f"{task}-full-s0.json").exists()


def test_tinyalgo_itself_never_imports_dask():
    code = ("import sys, tinyalgo.experiments.table1, tinyalgo.cli.main; "
            "print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
