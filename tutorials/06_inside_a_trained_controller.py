# %% [markdown]
# # Tutorial 6: inside a trained controller (paper section 5, Figure 4; Appendix A)
#
# A controller that has learned reverse is a small program.  We train a
# feed-forward controller with Q-learning, watch it on one instance step by
# step (`tinyalgo.inspection.trace`), then write down the program it runs: the automaton
# it implements (`tinyalgo.automata`), which we draw and run on its own at a
# length the network never saw.  (With `TINYALGO_FAST=1`, as the tests run
# it, the model is trained until it solves length 20; in full mode until it
# solves length 100, as in the paper's Table 1.)  Every claim below is
# checked by an `assert`.  In an assignment's copy, a cell that needs a
# function you have not written yet says so (`with skip_if_stub():`) and the
# tutorial goes on.

# %%
import os

from tinyalgo.host.threads import one_blas_thread

one_blas_thread()       # before NumPy: one BLAS thread, the fastest for small matrices
import tinyalgo  # noqa: E402
import numpy as np

from tinyalgo.qtraining import QTrainer
from tinyalgo.runs.config import QConfig
from tinyalgo.assignments.tutorial import show, skip_if_stub

FAST = os.environ.get("TINYALGO_FAST") == "1"
print("tinyalgo", tinyalgo.__version__, "- fast mode" if FAST else "")
# Training runs the code the tutorials teach (tinyalgo.layers, cores, controller, bptt).
cfg = QConfig(task="reverse", controller="ff", units=200, seed=1, budget=250_000 if FAST else 3_000_000,
              test_length=20 if FAST else 100, report_lengths=(20,) if FAST else (100,), confirm_length=0,
              val_instances=20 if FAST else 50)
with skip_if_stub():
    trainer = QTrainer(cfg, log=lambda line: None)
    run = trainer.run()
    controller = trainer.controller
    print("solved (the paper's protocol) after", run.solved_at)
    assert run.solved_at is not None

# %% [markdown]
# ## One instance, step by step
# `trace_instance` runs the controller greedily on one fresh instance and
# keeps, per step, what it read, the Q-value of every joint action, what it
# did and wrote.  Reverse at complexity 21 has 10 digits and the end marker:
# expected, the reference solution exactly: 10 moves right, one move left at
# the marker, then 10 writes moving left, every output right.  With the
# dynamic discount the Q-value of a right action is the fraction of the
# remaining outputs it leads to getting right (paper section 6.1), so on a
# perfect run the chosen Q-values stay near 1 (measured here: a mean of about
# 0.95, from 0.70 to 1.12).  The figure (also saved as `reverse_trace.png`):
# the head's path, the Q-value of every joint action over time, and the actions.

# %%
from tinyalgo.inspection.render import action_name
from tinyalgo.inspection.trace import trace_instance
from tinyalgo.inspection.trace_plots import write_trace_png

with skip_if_stub():
    trace = trace_instance(controller, "reverse", 21, seed=3)
    print(trace.summary())
    print(trace.steps[0].text, end="\n\n")
    print(trace.steps[10].text)
    names = [action_name(a, trace.n_moves) for a in trace.actions]
    chosen_q = trace.q_values[np.arange(len(trace.steps)), trace.actions]
    print("actions:", " ".join(names))
    print(f"Q of the chosen actions: mean {chosen_q.mean():.2f}, from {chosen_q.min():.2f} to {chosen_q.max():.2f}")
    assert trace.solved and trace.n_correct == trace.n_outputs == 10
    assert names == ["right"] * 10 + ["left"] + ["left+write"] * 10
    assert [s.v_hat for s in trace.steps[11:]] == list(range(10, 0, -1))     # V-hat: outputs still to produce
    assert 0.6 < chosen_q.min() and chosen_q.max() < 1.25 and abs(chosen_q.mean() - 1) < 0.15
    show(write_trace_png(trace, "reverse_trace.png", "FF controller on reverse (Q-learning)"))

# %% [markdown]
# ## The automaton it implements
# A controller reads a symbol and emits a joint action and a symbol, so what
# it computes can be written as a Mealy machine: (state, symbol read) ->
# (action, symbol written, next state).  `extract` records the controller on
# instances of complexity 2 to 100, clusters its recurrent states (the FF has
# none: one cluster) together with what it did last (the feedback fields of
# its observation), builds that machine, minimises it (Moore partition
# refinement) and then merges states that differ only on transitions never
# seen ("don't care").  Expected: 13 raw states, 3 after minimisation (a start
# state that never reads the end marker, since reverse begins on a digit, and
# the two below), and 2 after the don't-care reduction: the paper's Figure 4a,
# "move right reading digits; at the marker, turn; move left writing the digit
# read".  The machine replays every recorded episode exactly.  The drawing
# is also saved as `reverse_machine.png`.

# %%
from tinyalgo.automata import MachineAgent, extract, fidelity
from tinyalgo.automata.draw import draw_machine, drawing_kind

with skip_if_stub():
    extraction = extract(controller, "reverse")
    raw, minimal, machine = extraction["raw"], extraction["minimal"], extraction["reduced"]
    print(f"states: {raw.n_states} raw, {minimal.n_states} minimal, {machine.n_states} after the don't-care reduction;"
          f" the recorded episodes replayed exactly: {extraction['tried'][extraction['k']]:.0%}")
    assert extraction["k"] == 1 and extraction["tried"][1] == 1.0
    assert minimal.n_states == 3 and machine.n_states == 2                   # paper Figure 4a
    digits = list(range(10))
    start, marker = machine.start, machine.base + 2                          # symbols: digits, then blank, then marker
    assert (machine.action[start, digits] == 1).all() and (machine.next[start, digits] == start).all()   # right
    turned = machine.next[start, marker]
    assert machine.action[start, marker] == 0 and turned != start           # at the marker: left, a new state
    assert (machine.action[turned, digits] == 2).all() and (machine.symbol[turned, digits] == digits).all()
    print("drawn as a", drawing_kind(machine))
    assert drawing_kind(machine) == "diagram"
    show(draw_machine(machine, "reverse_machine.png", "reverse: the FF controller's machine"))

# %% [markdown]
# ### Minimising: Moore's partition refinement (`tinyalgo.automata.minimise`)
# Two states are *equivalent* when no sequence of inputs tells them apart:
# from either one, every input sequence gives the same outputs (action and
# symbol written).  `minimise` finds them by splitting, not merging.  Round 0
# puts states in one block when they give the same output on every input
# ("never seen", -1, is an output like any other: the start state, which
# never read the marker, stays apart from the moving-right state that did).
# Each later round gives every state a signature: its block, then the block
# it goes to on each input (an unknown next state, -1, is a block of its
# own); states whose signatures differ go to separate blocks.  When a round
# splits nothing, each block is one state of the minimal machine.  A
# difference that shows k steps ahead takes k rounds to separate.  The blocks
# are then numbered canonically: the start state's block is 0, the others in
# the order a breadth-first walk from it meets them, unreachable ones last.
# Here the 13 raw states become 3: the ten "just wrote digit d" states and the
# "just turned at the marker" state act the same on every input and merge.
# Merging states that differ only where one of them was never seen is
# another operation (the don't-care reduction, `reduce_dont_care`), which
# takes the 3 states to 2.  `tinyalgo assignment make machine_extraction`
# asks you to write `minimise`.  Expected: `minimise(raw)` again gives the 3
# states, the start state in block 0.

# %%
from tinyalgo.automata.minimise import minimise

with skip_if_stub():
    again, block = minimise(raw)
    print("block of each raw state:", block.tolist())
    assert again.n_states == 3 and block[raw.start] == 0 and again.start == 0

# %% [markdown]
# ## The machine alone, at a length the network never saw
# `MachineAgent` runs the machine through the same protocol as the network's
# `GreedyAgent` (`tinyalgo.evaluation`): one integer of state per lane, table
# look-ups, no network.  `fidelity` compares it with the network step by step
# on fresh instances.  Expected: at complexity 1001 the machine agrees with
# the network at every step of 20 instances; at 10001 (fast mode; 100001 in
# full mode) the network and the machine each solve every instance, and the
# machine never had to ask the network about a transition it did not know.

# %%
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity

with skip_if_stub():
    agreement = fidelity(machine, controller, 1001, instances=20)
    print("agreement with the network at 1001:", {k: agreement[k] for k in ("step", "instance", "network_solved")})
    assert agreement["step"] == 1.0 and agreement["instance"] == 1.0
    long = 10_001 if FAST else 100_001
    agent = MachineAgent(machine)
    by_machine = evaluate_complexity(agent, "reverse", long, instances=10, seed=5)
    by_network = evaluate_complexity(GreedyAgent(controller), "reverse", long, instances=10, seed=5)
    print(f"complexity {long}: the machine solves {by_machine['solved']:.0%}, the network {by_network['solved']:.0%};"
          f" unknown transitions met: {agent.fallbacks}")
    assert by_network["solved"] == 1.0 and by_machine["solved"] == 1.0 and agent.fallbacks == 0

# %% [markdown]
# ## Exercises
# * The Q-values of the trace are the dynamic discount's targets learned:
#   `tinyalgo assignment make dynamic_discount watkins --out hw` stubs the
#   targets (tutorial 05 works them by hand); `tinyalgo assignment grade hw`
#   scores them.  Then trace the model with `epsilon=0.05` (a training lane)
#   and find the steps where Watkins cuts the return.
# * Extract the machine of a GRU trained on addition (`tinyalgo train --task
#   addition`, then `tinyalgo automaton`): how many states does it need, and
#   where do they differ from the ground-truth actions you write in the
#   `addition_ground_truth` assignment?
