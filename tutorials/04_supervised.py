# %% [markdown]
# # Tutorial 4: the supervised setting (paper section 5)
#
# The ground-truth actions are given; the controller learns which action comes
# next and which symbol to write by backpropagation alone.  We train a small
# feed-forward controller on reverse with the +4 curriculum, then test it on
# instances far longer than any it saw.  (With `TINYALGO_FAST=1`, as the tests
# run it, everything is smaller: 32 units, target complexity 100.)  Every
# claim below is checked by an `assert`.  In an assignment's copy, a cell that
# needs a function you have not written yet says so (`with skip_if_stub():`)
# and the tutorial goes on.

# %%
import os

from tinyalgo.host.threads import one_blas_thread

one_blas_thread()       # before NumPy: one BLAS thread, the fastest for small matrices
import tinyalgo  # noqa: E402
import numpy as np

from tinyalgo.environment import ALL_WRITTEN, Environment
from tinyalgo.evaluation import GreedyAgent, evaluate
from tinyalgo.runs.config import SupervisedConfig
from tinyalgo.supervised import train_supervised
from tinyalgo.assignments.tutorial import show, skip_if_stub

FAST = os.environ.get("TINYALGO_FAST") == "1"
print("tinyalgo", tinyalgo.__version__, "- fast mode" if FAST else "")
# Training runs the code the tutorials teach (tinyalgo.layers, cores, controller, bptt).
cfg = SupervisedConfig(task="reverse", controller="ff", units=32 if FAST else 200, seed=0,
                       target=100 if FAST else 1000, budget=200_000 if FAST else 2_000_000,
                       validate_every=5, val_instances=20 if FAST else 50)
with skip_if_stub():
    controller, report = train_supervised(cfg)

# %% [markdown]
# ## The curriculum's history
# Each validation at the current complexity C; a perfect score adds 4.  The
# run stops as soon as the model, after an advance, also solves the target
# complexity: it never trains anywhere near it.  (Fast mode: about 8000
# characters, validations at complexities 6 and 10 only; the second advance,
# 10 -> 14, comes with complexity 100 solved.)

# %%
with skip_if_stub():
    for h in report["history"][-5:]:
        print(h)
    trained_max = max(h["level"] for h in report["history"])
    print("trained up to complexity", trained_max, "- solved the target:", report["solved_target"])
    assert report["solved_target"] and report["chars"] < cfg.budget
    level = cfg.start
    for h in report["history"]:
        assert h["level"] == level and h["advanced"] == (h["solved"] == 1.0)
        level += cfg.increment if h["advanced"] else 0
    assert report["final_level"] == level and report["history"][-1]["target_solved"] == 1.0
    assert report["history"][0]["solved"] < 1.0                    # it had to learn level 6 first
    assert trained_max <= cfg.target // 4                          # trained on short instances only

# %% [markdown]
# ## Generalisation far beyond the training lengths
# A feed-forward controller that reverses short tapes reverses any tape: it
# needs no memory, only the symbol under its head and its previous move.
# Expected: every instance solved at 10, 100 and 1000 (and 10000 in full mode).

# %%
with skip_if_stub():
    complexities = [10, 100, 1000] if FAST else [10, 100, 1000, 10000]
    rows = evaluate(GreedyAgent(controller), "reverse", complexities, instances=10, log=print)
    assert [row["solved"] for row in rows] == [1.0] * len(complexities)

# %% [markdown]
# ## Figure 3 in small: which controller, which task, which length
# The paper's Figure 3 trains FF, GRU and LSTM controllers supervised on the
# six tasks and tests them at complexities far beyond training.  Here two
# tasks: reverse with the FF trained above, and addition with an FF and a
# GRU (fast mode: GRU-64, target complexity 100, 300,000 characters at most).
# Expected: the FF is perfect on reverse at every length but never gets past
# complexity 6 on addition (it has no memory for the carry); the GRU solves
# addition's validation at 100 (20 instances), yet in fast mode its score
# falls with the length (all 10 instances at complexity 10, then 9, 9, 8 and 7
# at 30, 100, 300 and 1000): a solution that fits the lengths trained on is
# not yet the algorithm.  That is the length trap.
# (Full size, 200 units and 10^6 characters: `figures/README.md`, section
# Figure 3, has the GRU at 1.00 up to 1000 and 0.95 at 20000 on addition.)
# The figure: green dashed, FF; blue, GRU (also saved as `figure3_small.png`).

# %%
from tinyalgo.experiments.figure3 import plot_accuracy

with skip_if_stub():
    tests = [10, 30, 100, 300, 1000] if FAST else [10, 100, 1000, 3000, 10000]
    rows = [dict(row, task="reverse", controller="ff", seed=0)
            for row in evaluate(GreedyAgent(controller), "reverse", tests, instances=10)]
    adders = {}
    for core, units, budget in [("ff", 32, 30_000), ("gru", 64, 300_000)] if FAST else [("ff", 200, 1_000_000),
                                                                                          ("gru", 200, 1_000_000)]:
        add_cfg = SupervisedConfig(task="addition", controller=core, units=units, seed=0,
                                   target=100 if FAST else 1000, budget=budget, validate_every=5,
                                   val_instances=20 if FAST else 50)
        adders[core] = train_supervised(add_cfg, log=lambda line: None)
        got = evaluate(GreedyAgent(adders[core][0]), "addition", tests, instances=10)
        rows += [dict(row, task="addition", controller=core, seed=0) for row in got]
        print(f"addition, {core.upper()}-{units}: trained up to complexity {adders[core][1]['final_level']},"
              f" solved the target: {adders[core][1]['solved_target']};",
              "solved at", {row["complexity"]: row["solved"] for row in got})
    figure3_small = plot_accuracy(rows, "figure3_small.png", "controller",
                                  [("ff", "tab:green", dict(ls="--", lw=3), "FF"),
                                   ("gru", "tab:blue", dict(ls="-", lw=2), "GRU")],
                                  "Figure 3 in small: instances solved against test complexity")
    show(figure3_small)
    solved = {(r["task"], r["controller"], r["complexity"]): r["solved"] for r in rows}
    assert all(solved["reverse", "ff", c] == 1.0 for c in tests)
    assert adders["ff"][1]["final_level"] == 6 and all(solved["addition", "ff", c] == 0.0 for c in tests)
    assert adders["gru"][1]["solved_target"] and solved["addition", "gru", 10] == 1.0
    if FAST:
        assert solved["addition", "gru", 1000] < 1.0                                            # the length trap

# %% [markdown]
# ## Looking inside: the autocorrelation of Table 2
# The paper's footnote to Table 2: with h_i the state at step i (T steps),
# E = mean_k h_k, sigma^2 = mean_k <h_k - E, h_k - E> and
# A_ij = <h_i - E, h_j - E> / sigma^2.
# A feed-forward controller has no state, so here we look at its hidden layer
# t, the tanh layer both heads read (`StepCache.tanh`).  Reverse at complexity
# 35 has n = 17 digits: the ground truth moves right 17 times, turns left once,
# then writes 17 times moving left.  The greedy controller does exactly that.
# We compute A by the formula, check it against `tinyalgo.inspection.autocorrelation`,
# and measure its two blocks with `phase_means`: steps of the same phase
# correlate (positive mean), steps of different phases anti-correlate
# (negative mean).  Expected in fast mode: within about 0.4, across about -0.4.

# %%
from tinyalgo.inspection.autocorrelation import autocorrelation, phase_means

with skip_if_stub():
    env = Environment("reverse", batch_size=1, complexity=35, seed=1)
    obs, reset, hidden, taken = env.observe(), np.ones(1, bool), [], []
    state = controller.initial_state(1)
    truth = env.gt_actions[0, :35].tolist()
    assert state == []                                             # no recurrent state
    for _ in range(int(env.complexity[0])):
        q, logp, state, cache = controller.step(obs, state, reset)
        hidden.append(cache.tanh[0])
        taken.append(int(q[0].argmax()))
        r = env.step(q.argmax(1), logp.argmax(1))
        obs, reset = r.obs, r.done
    assert taken == truth and r.reason[0] == ALL_WRITTEN          # the reference path, to the last digit
    Hs = np.array(hidden, dtype=np.float64)
    E = Hs.mean(0)
    A = (Hs - E) @ (Hs - E).T / np.mean(np.sum((Hs - E) ** 2, axis=1))
    assert np.allclose(A, autocorrelation(Hs)) and abs(np.trace(A) / len(A) - 1) < 1e-9   # mean of the diagonal: 1
    phase = np.array([0] * 17 + [1] * 18)                          # moving right; the turn and writing left
    means = phase_means(A, phase)
    print("autocorrelation matrix", A.shape, "- mean within moving right, within writing left, across:",
          [round(means[k], 2) for k in ("within_0", "within_1", "across")])
    assert means["within_0"] > 0 and means["within_1"] > 0 and means["across"] < 0

# %% [markdown]
# ### The FF against an LSTM, as in Table 2
# Now an LSTM trained the same way (its state: the hidden state h), and both
# stepped along the ground truth of 20-digit instances (41 steps), twice the
# longest they trained on in fast mode (`tinyalgo.experiments.table2`:
# `probe_reverse`, and `instance_statistics` for the means over 10 instances).
# Expected: both show the two blocks; the FF's mean within the phases is
# above its mean across them by more than 0.5 (measured in fast mode over 4
# training seeds and 5 instances each: 0.73 to 1.09); the LSTM's within-phase
# correlation falls with the time lag |i - j| (about 0.5 at lags 1-2, 0.25 at
# lags of 8 and more), the FF's far less, because the FF's t depends on the
# current symbol and last move only, while the LSTM's h also carries time.
# (Full size, `figures/table2/`: FF-200 within 0.29, across -0.32; LSTM-200
# 0.47 at lags 1-2 falling to 0.23.)  The figure (also saved as
# `table2_small.png`): the confidences of "move left" and "move right" over
# the 41 steps above, the matrix A below.

# %%
from tinyalgo.experiments.table2 import analyse, instance_statistics, probe_reverse, write_table2_figure

with skip_if_stub():
    lstm_cfg = SupervisedConfig(task="reverse", controller="lstm", units=cfg.units, seed=0,
                                target=cfg.target, budget=cfg.budget, validate_every=5, val_instances=cfg.val_instances)
    lstm, lstm_report = train_supervised(lstm_cfg, log=lambda line: None)
    results, stats = [], {}
    for name, core, model in [("FF", "ff", controller), ("LSTM", "lstm", lstm)]:
        results.append(analyse(name, core, probe_reverse(model, 20, seed=20)))
        stats[name] = instance_statistics(model, 20, instances=10, seed=21)
        results[-1]["stats"] = dict(instances=10, **stats[name])
        follows = np.mean(results[-1]["greedy"] == results[-1]["gold"])
        print(f"{name}: follows the ground truth greedily at {follows:.0%} of the steps; over 10 instances: "
              + ", ".join(f"{k} {v['mean']:.2f}" for k, v in stats[name].items()))
    show(write_table2_figure(results, "table2_small.png"))
    ff, ls = stats["FF"], stats["LSTM"]
    assert all(np.all(r["greedy"] == r["gold"]) for r in results)      # both reverse 20 digits
    assert ff["within"]["mean"] - ff["across"]["mean"] > 0.5           # the FF's two blocks
    assert ls["within"]["mean"] > 0 > ls["across"]["mean"]
    drop = {k: s["within_lag_1-2"]["mean"] - s["within_lag_8-"]["mean"] for k, s in stats.items()}
    print("within-phase correlation, lag 1-2 minus lag >= 8:", {k: round(v, 2) for k, v in drop.items()})
    assert drop["LSTM"] > drop["FF"] + 0.05

# %% [markdown]
# ## Exercises
# * `tinyalgo assignment make curriculum --out hw` stubs `Curriculum.record`
#   (`tinyalgo/curriculum.py`), the rule this run followed: count the perfect
#   validations in a row, add `increment` (4) to the level once `streak` of
#   them are reached, and record each validation in `history`.  The grading
#   tests (6 points) replay short score sequences whose levels are worked by
#   hand, e.g. 0.9 then 1.0 then 1.0 gives levels 6, 10, 14.
# * `tinyalgo assignment grade hw` scores it.
# * Train the GRU on addition with a larger budget or more units and draw
#   Figure 3 again: does the fall at 1000 go away?  Then compute A for the
#   GRU's h (`probe_reverse` takes any controller) and compare with the LSTM.
