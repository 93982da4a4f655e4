"""Automata extracted from trained controllers (paper section 5, Figure 4;
section 6.4: "discretization of state").

A controller reads discrete observations and emits discrete joint actions and
symbols, so what it computes on the instances it meets can be written as a
Mealy machine: (state, symbol read) -> (joint action, symbol written, next
state).  The pipeline:

* ``record``: run the controller greedily and keep, per step, the recurrent
  state entering the step, the observation, the joint action, the symbol
  written and which row is the next step of the same episode;
* ``discretise``: k-means (k-means++ initialisation, seeded) of the recurrent
  states, the number of clusters chosen as the smallest that makes the
  recording deterministic;
* ``machine``: the machine whose states are (cluster, the observation's
  feedback fields 1..4), built from the recording, and its JSON form;
* ``minimise``: partition refinement to the minimal machine, the reduction
  with the transitions never seen as "don't care", the merges determinism
  forces;
* ``agent``: ``MachineAgent``, the machine acting through the evaluation
  protocol of ``tinyalgo.evaluation`` (one state id per lane);
* ``draw``: matplotlib drawings (a state diagram, or a transition-table heatmap);
* ``extract``: the whole extraction from a controller and its fidelity report.
"""
from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.extract import extract, fidelity
from tinyalgo.automata.machine import Machine, MachineError, build_machine
from tinyalgo.automata.minimise import minimise, reduce_dont_care
from tinyalgo.automata.record import Recording, record

__all__ = ["MachineAgent", "Machine", "MachineError", "Recording", "build_machine", "extract", "fidelity", "minimise",
           "reduce_dont_care", "record"]
