"""The paper's Table 2 (section 5): three controllers trained supervised on
reverse with short instances, applied to a 20-digit test instance.

    tinyalgo table2 --out figures/table2

For a feed-forward controller, an LSTM-200 and an LSTM-400, ``run_table2``

1. trains supervised (``tinyalgo.supervised.train_supervised``) on reverse
   with the curriculum started at complexity 5 and advanced by 4, so that
   its levels are 5, 9, ..., 21, until a test at complexity 21 (10 digits)
   is solved on 50 fresh instances, then some more on lengths 1..10 drawn
   uniformly: the instances trained on have 10 digits or fewer, as in
   the paper ("trained on sequences of length 10 or shorter"), unless the
   budget runs out before that test passes;
2. steps it along the ground-truth actions of one 20-digit test instance
   (41 steps: 20 moves right, the turn, 20 writes moving left) and records
   at each step the confidence of "move left" and "move right" (the softmax
   of the action head, which supervised training fits by cross-entropy,
   summed over writing and not writing) and the controller's state;
3. computes the state's autocorrelation matrix (``tinyalgo.inspection.autocorrelation``,
   the paper's footnote formula) and its mean within and across the two
   phases of execution (moving right; turning and moving left).

The state is the LSTM's hidden state h; the feed-forward controller has no
recurrent state, so its state is the "extra" layer's output t = tanh(.),
the layer both heads read (``Controller.step``'s ``StepCache.tanh``).

Writes ``table2.png`` (top row: the two confidences over time; bottom row:
the autocorrelation matrices), ``table2.json`` (training, greedy accuracy,
the phase means and the matrices) and ``table2.csv`` (per model and step).
"""
from __future__ import annotations

import csv
import io
import os
from typing import TYPE_CHECKING

import numpy as np

from tinyalgo.curriculum import UniformComplexity
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.inspection.autocorrelation import autocorrelation, phase_means, within_phase_by_lag
from tinyalgo.layers import softmax
from tinyalgo.optim import scale_gradients, sgd_step
from tinyalgo.runs.checkpoint import save_checkpoint
from tinyalgo.runs.config import SupervisedConfig
from tinyalgo.runs.fileio import atomic_savefig, atomic_write_bytes, atomic_write_json
from tinyalgo.supervised import supervised_rollout, train_supervised
from tinyalgo.tasks import LEFT, RIGHT

if TYPE_CHECKING:
    from tinyalgo.inspection.figure import Figure

MODELS = (("ff", 200, "feed-forward"), ("lstm", 200, "LSTM-200"), ("lstm", 400, "LSTM-400"))
LAGS = ((1, 2), (3, 7), (8, None))
TEST_DIGITS = (10, 20, 35, 50, 100)
PHASES = ("right", "left")


def train_short(core: str, units: int, seed: int, budget: int, max_digits: int = 10, settle: int = 500_000,
                log=None):
    """Train a controller supervised on reverse instances of at most
    ``max_digits`` digits (complexity 2 n + 1): the curriculum until that
    length is solved (``train_supervised``), then ``settle`` more characters
    on lengths 1 .. ``max_digits`` drawn uniformly, as a run that may not go
    longer keeps training.  Returns (controller, report)."""
    target = 2 * max_digits + 1
    cfg = SupervisedConfig(task="reverse", controller=core, units=units, seed=seed, budget=budget,
                           start=5 + (target - 5) % 4, increment=4, target=target)
    controller, report = train_supervised(cfg, log=log or (lambda s: None))
    report["curriculum_up_to"] = max([h["level"] for h in report["history"]] + [cfg.start])
    report["settle_chars"] = keep_training(controller, cfg, UniformComplexity(2, target, minimum=2), settle, seed + 1)
    return controller, report


def keep_training(controller, cfg: SupervisedConfig, sampler, chars: int, seed: int) -> int:
    """Supervised SGD on ``cfg.task`` instances drawn from ``sampler`` for
    ``chars`` characters (lane-steps); returns the characters trained."""
    env = Environment(cfg.task, batch_size=cfg.batch, base=cfg.base, complexity=sampler, seed=seed)
    state, obs, reset = controller.initial_state(cfg.batch), env.observe(), np.ones(cfg.batch, dtype=bool)
    T, done = min(cfg.max_rollout, sampler.hi + 5), 0
    while done < chars:
        grads, obs, state, reset = supervised_rollout(controller, env, obs, state, reset, T)
        sgd_step(controller.params, scale_gradients(grads, cfg.batch, T), cfg.lr, cfg.max_norm)
        done += cfg.batch * T
    return done


def probe_reverse(controller, digits: int = 20, seed: int = 0) -> dict:
    """Step ``controller`` along the ground truth of one reverse instance of
    ``digits`` digits.  Returns per step (T = 2 digits + 1): p_left, p_right
    (T,), gold and greedy joint actions (T,), phase (T,) 0 while the ground
    truth moves right, 1 from the turn on, and states (T, H): the core's h,
    or t for a feed-forward controller."""
    env = Environment("reverse", batch_size=1, complexity=2 * digits + 1, seed=seed)
    n = env.n_moves
    state, obs, reset = controller.initial_state(1), env.observe(), np.ones(1, dtype=bool)
    rows = dict(p_left=[], p_right=[], gold=[], greedy=[], states=[])
    while True:
        q, _, state, cache = controller.step(obs, state, reset)
        p = softmax(np.asarray(q, dtype=np.float64))[0]
        gold = int(env.ground_truth()[0])
        rows["p_left"].append(float(p[LEFT] + p[LEFT + n]))
        rows["p_right"].append(float(p[RIGHT] + p[RIGHT + n]))
        rows["gold"].append(gold)
        rows["greedy"].append(int(p.argmax()))
        rows["states"].append(np.array(state[-1][0][0] if state else cache.tanh[0], dtype=np.float64))
        result = env.step(np.array([gold]), env.next_target)
        obs, reset = result.obs, result.done
        if result.done[0]:
            break
    out = {k: np.array(v) for k, v in rows.items()}
    out["phase"] = (out["gold"] % n != RIGHT).astype(np.int64)
    return out


def analyse(name: str, core: str, probe: dict) -> dict:
    """The autocorrelation matrix of a probe and its phase means."""
    A = autocorrelation(probe["states"])
    means = phase_means(A, probe["phase"])
    return dict(name=name, state="h (LSTM hidden state)" if core != "ff" else "t (extra layer, no recurrent state)",
                p_left=probe["p_left"], p_right=probe["p_right"], phase=probe["phase"], A=A,
                gold=probe["gold"], greedy=probe["greedy"],
                within=means["within"], across=means["across"], by_lag=within_phase_by_lag(A, probe["phase"], LAGS),
                within_right=means.get("within_0", float("nan")), within_left=means.get("within_1", float("nan")))


def instance_statistics(controller, digits: int, instances: int, seed: int) -> dict:
    """The autocorrelation's phase means over ``instances`` test instances of
    ``digits`` digits (instance seeds ``seed``, ``seed`` + 1, ...): for each
    of within, across and within at each lag range of ``LAGS``, its mean and
    standard deviation over the instances."""
    values = []
    for i in range(instances):
        probe = probe_reverse(controller, digits, seed + i)
        A = autocorrelation(probe["states"])
        means = phase_means(A, probe["phase"])
        values.append([means["within"], means["across"]] + within_phase_by_lag(A, probe["phase"], LAGS))
    values = np.array(values)
    names = ["within", "across"] + [f"within_lag_{lo}-{hi or ''}" for lo, hi in LAGS]
    return {name: dict(mean=float(values[:, k].mean()), sd=float(values[:, k].std())) for k, name in enumerate(names)}


def write_table2_figure(results, path) -> Figure:
    """``table2_figure`` saved to the PNG ``path``; returns the figure."""
    fig = table2_figure(results)
    atomic_savefig(fig, path, dpi=110)
    return fig


def table2_figure(results) -> Figure:
    """One column per model: the confidences of move left (green) and move
    right (red) over time above, the autocorrelation matrix below (paper
    Table 2).  ``results``: dicts with name, state, p_left, p_right, A,
    phase, within, across."""
    from tinyalgo.inspection.figure import Figure  # matplotlib loads when a figure is drawn
    k = len(results)
    fig = Figure(figsize=(4.2 * k, 8))
    axes = fig.subplots(2, k, squeeze=False, gridspec_kw=dict(height_ratios=[1, 1.6]))
    for i, r in enumerate(results):
        ax = axes[0, i]
        steps = np.arange(len(r["p_left"]))
        ax.plot(steps, r["p_left"], color="tab:green", label="move left")
        ax.plot(steps, r["p_right"], color="tab:red", label="move right")
        turn = np.flatnonzero(np.asarray(r["phase"]) == 1)
        if len(turn):
            ax.axvline(turn[0], color="0.6", ls=":", lw=1)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("time step")
        ax.set_title(r["name"], fontsize=11)
        if i == 0:
            ax.set_ylabel("confidence")
            ax.legend(fontsize=8, loc="center left")
        ax = axes[1, i]
        im = ax.imshow(r["A"], cmap="viridis", origin="upper")
        ax.set_xlabel("time step")
        ax.set_ylabel("time step")
        lag = r.get("by_lag", [float("nan")] * 3)
        title = (f"state: {r['state']}\nthis instance: mean A within phases {r['within']:.2f}, across {r['across']:.2f}"
                 f"\nwithin, at lag 1-2: {lag[0]:.2f}, at lag >= 8: {lag[-1]:.2f}")
        stats = r.get("stats")
        if stats:
            n = stats["instances"]
            title += (f"\n{n} instances: within {stats['within']['mean']:.2f}, across {stats['across']['mean']:.2f};"
                      f" lag 1-2 {stats['within_lag_1-2']['mean']:.2f}, >= 8 {stats['within_lag_8-']['mean']:.2f}")
        ax.set_title(title, fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.text(0.5, 0.005, "state: the LSTM's hidden state h; the feed-forward controller has no recurrent state,\n"
             "so its state is the extra layer's output t = tanh(.), which both heads read", ha="center", fontsize=8)

    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def table2_csv(results) -> str:
    """model, step, phase, gold and greedy action, p_left, p_right per step."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model", "step", "phase", "gold_action", "greedy_action", "p_left", "p_right"])
    for r in results:
        for t in range(len(r["p_left"])):
            writer.writerow([r["name"], t, PHASES[int(r["phase"][t])], int(r["gold"][t]), int(r["greedy"][t]),
                             f"{r['p_left'][t]:.5f}", f"{r['p_right'][t]:.5f}"])
    return buffer.getvalue()


def run_table2(out: str, seed: int = 0, budget: int = 2_000_000, settle: int = 2_000_000, digits: int = 20,
               max_digits: int = 10, test_seed: int = 20, instances: int = 50, models=MODELS,
               models_dir: str | None = None, log=print) -> list:
    """Train, probe and draw the three models of Table 2 into ``out``
    (table2.png, table2.json, table2.csv); returns the per-model results.
    The figure shows one test instance (seed ``test_seed``); the phase means
    are also averaged over ``instances`` more (``instance_statistics``).
    With ``models_dir`` each model's checkpoint is saved there too, as
    ``reverse-<core><units>-s<seed>-table2/checkpoint.npz``."""
    os.makedirs(out, exist_ok=True)
    results, summary = [], []
    for core, units, name in models:
        controller, report = train_short(core, units, seed, budget, max_digits, settle)
        if models_dir:
            path = os.path.join(models_dir, f"reverse-{core}{units}-s{seed}-table2")
            os.makedirs(path, exist_ok=True)
            save_checkpoint(os.path.join(path, "checkpoint.npz"), controller,
                            dict(mode="supervised", config=report["config"],
                                 table2={k: v for k, v in report.items() if k not in ("config", "history")}))
        agent = GreedyAgent(controller)
        greedy = {str(d): evaluate_complexity(agent, "reverse", 2 * d + 1, 50, seed=1000 + d)["solved"]
                  for d in sorted(set(TEST_DIGITS) | {max_digits, digits})}
        r = analyse(name, core, probe_reverse(controller, digits, test_seed))
        r["stats"] = dict(instances=instances, **instance_statistics(controller, digits, instances, test_seed + 1))
        results.append(r)
        log(f"{name}: curriculum up to complexity {report['curriculum_up_to']} ({report['chars']:,} characters,"
            f" {report['seconds']:.0f} s, solved {2 * max_digits + 1}: {report['solved_target']}),"
            f" then {report['settle_chars']:,} characters on 1..{max_digits} digits;"
            f" greedy solved {greedy}; mean A within phases {r['within']:.3f}, across {r['across']:.3f};"
            f" within phases by lag {LAGS}: {[round(v, 3) for v in r['by_lag']]};"
            f" over {instances} instances: " + ", ".join(f"{k} {v['mean']:.3f} (sd {v['sd']:.3f})"
                                                      for k, v in r["stats"].items() if k != "instances"))
        summary.append(dict(name=name, core=core, units=units, seed=seed, state=r["state"],
                            curriculum_up_to_complexity=report["curriculum_up_to"], train_chars=report["chars"],
                            settle_chars=report["settle_chars"],
                            train_seconds=report["seconds"], solved_training_target=report["solved_target"],
                            greedy_solved_by_digits=greedy, greedy_instances=50,
                            greedy_follows_ground_truth=float(np.mean(r["greedy"] == r["gold"])),
                            mean_A_within=r["within"], mean_A_across=r["across"], mean_A_within_right=r["within_right"],
                            mean_A_within_left=r["within_left"],
                            mean_A_within_by_lag={f"{lo}-{hi or ''}": v for (lo, hi), v in zip(LAGS, r["by_lag"])},
                            over_instances=r["stats"],
                            p_left=[round(float(v), 4) for v in r["p_left"]],
                            p_right=[round(float(v), 4) for v in r["p_right"]],
                            phase=[int(v) for v in r["phase"]], A=np.round(r["A"], 3).tolist()))
    write_table2_figure(results, os.path.join(out, "table2.png"))
    atomic_write_json(os.path.join(out, "table2.json"),
                      dict(task="reverse", test_digits=digits, max_training_digits=max_digits, test_seed=test_seed,
                           budget=budget, settle=settle, models=summary))
    atomic_write_bytes(os.path.join(out, "table2.csv"), table2_csv(results).encode())
    return results
