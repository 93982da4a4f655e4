"""GRU-200 float32 forward + backward per step, the package at an older
revision (imported as ``tinyalgo_old``) against the current one, alternating
in one process.  Run through ``benchmarks/ab_bptt.sh REV [ROUNDS]``."""
import sys
import time
import tinyalgo, tinyalgo_old   # noqa  (before numpy: one BLAS thread)
import numpy as np
from tinyalgo.controller import Controller as New, ControllerConfig as NewCfg
from tinyalgo_old.controller import Controller as Old, ControllerConfig as OldCfg
from tinyalgo.fast.memory import keep_freed_memory
keep_freed_memory()
SIZES, A, V, B, T = (17, 17, 2, 5, 3), 8, 17, 20, 50
rng = np.random.default_rng(1)
obs = np.stack([np.stack([rng.integers(0, s, size=B) for s in SIZES], axis=1) for _ in range(T)])
resets = rng.random((T, B)) < 0.05
dq = rng.normal(size=(T, B, A)).astype("float32")
dl = rng.normal(size=(T, B, V)).astype("float32")

def make(C, Cfg):
    c = C(Cfg(SIZES, A, V, core="gru", units=200, dtype="float32"), rng=np.random.default_rng(0))
    if hasattr(c, "rollout"):                    # revisions with Controller.rollout
        def run():
            state, rollout = c.initial_state(B), c.rollout(T, B)
            for t in range(T):
                _, _, state = rollout.step(obs[t], state, resets[t])
            rollout.backward(dq, dl)
        return run
    has_buf = hasattr(c, "step_buffers")
    def run():
        state, caches, fold = c.initial_state(B), [], c.frozen()
        kw = {"buffers": c.step_buffers(T, B)} if has_buf else {}
        for t in range(T):
            _, _, state, cache = c.step(obs[t], state, resets[t], fold=fold, logits=True, **kw)
            caches.append(cache)
        c.backward(caches, dq, dl)
    return run

runs = {"old": make(Old, OldCfg), "new": make(New, NewCfg)}
res = {k: [] for k in runs}
for k in runs:
    runs[k]()
for r in range(int(sys.argv[1])):
    for k in (("old", "new") if r % 2 == 0 else ("new", "old")):
        t0 = time.perf_counter()
        for _ in range(3):
            runs[k]()
        res[k].append((time.perf_counter() - t0) / 3 / T * 1e6)
for k in runs:
    v = np.array(res[k])
    print(f"{k}: median {np.median(v):6.1f}  p25 {np.percentile(v,25):6.1f}"
          f"  p75 {np.percentile(v,75):6.1f} us/step")
d = np.array(res["new"]) - np.array(res["old"])
print(f"new - old per round: median {np.median(d):+.1f} us")
