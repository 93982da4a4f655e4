"""The assignments: which marked functions a student writes, the grading
tests and their points, the tutorial that teaches it and the expected time.

A function is named by its module and qualified name; its body carries a
solution region (``### BEGIN SOLUTION`` / ``### END SOLUTION``) that
``tinyalgo.assignments.stubs`` replaces by ``raise NotImplementedError``.
The grading tests of assignment ``name`` live in
``grading/test_<name>.py`` next to this module (its self-check tests, handed
out with the copy, in ``selfcheck/test_<name>.py``); ``points`` gives each
grading test's worth.  ``uses`` lists the assignments whose functions those tests also run
(made together, the tests pass once all of them are written).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Function:
    """A function with a solution region: ``module`` (dotted), ``qualname``
    (``Class.method`` for a method) and ``what``, the task the stub states."""

    module: str
    qualname: str
    what: str

    @property
    def path(self) -> str:
        """Its file, relative to the directory that holds the ``tinyalgo`` package."""
        return self.module.replace(".", "/") + ".py"


# Off limits in every solution: the numerical gradient and what the grading tests compare with.  Everything
# imported from tinyalgo.gradcheck and tinyalgo.assignments is refused too (screen.py).
OFF_LIMITS = ("numerical_gradient", "rel_error", "check_gradients", "gradient_errors", "assert_gradients",
              "assert_targets")
# What runs a rollout's backward pass another way (the controller's own entry points).
OTHER_BACKWARDS = ("backward", "rollout", "Rollout")


@dataclass(frozen=True)
class Assignment:
    name: str
    title: str
    functions: tuple
    points: dict                    # test function name -> points
    tutorial: str                   # "02": tutorials/02_*.py teaches it
    minutes: int                    # expected time for a student
    uses: tuple = field(default=())
    forbidden: tuple = field(default=())    # names a solution may not call or name (besides OFF_LIMITS)

    @property
    def off_limits(self) -> tuple:
        """Every name this assignment's solutions may not call or name (``screen.py``)."""
        return OFF_LIMITS + tuple(self.forbidden)

    @property
    def total(self) -> int:
        return sum(self.points.values())

    @property
    def test_file(self) -> str:
        return f"test_{self.name}.py"


_A = [
    Assignment(
        "layers", "The affine and tanh backward passes",
        (Function("tinyalgo.layers", "affine_backward", "affine_backward: dx, dw, db of out = x @ w + b"),
         Function("tinyalgo.layers", "tanh_backward", "tanh_backward: dx of out = tanh(x), from the cached out")),
        {"test_affine_backward_by_hand": 2, "test_affine_backward_gradient_check": 3,
         "test_tanh_backward_by_hand": 1, "test_tanh_backward_gradient_check": 2},
        "02", 30),
    Assignment(
        "softmax_nll", "The log-softmax backward pass and the NLL loss of the symbol head",
        (Function("tinyalgo.layers", "log_softmax_backward",
                  "log_softmax_backward: dx of logp = log_softmax(x), from the cached logp"),
         Function("tinyalgo.layers", "nll_loss",
                  "nll_loss: the summed -log p[target] over the masked rows and its gradient dlogp")),
        {"test_log_softmax_backward_by_hand": 1, "test_log_softmax_backward_gradient_check": 3,
         "test_nll_loss_by_hand": 2, "test_nll_loss_mask": 1},
        "02", 30),
    Assignment(
        "gru_backward", "The backward pass of one GRU step",
        (Function("tinyalgo.cores", "gru_step_backward",
                  "gru_step_backward: the gradients of one GRU step on x, h and every parameter"),
         Function("tinyalgo.cores", "gru_state_backward",
                  "gru_state_backward: one GRU step back to its gates' pre-activations and the entering state"),
         Function("tinyalgo.cores", "gru_weights_backward",
                  "gru_weights_backward: dx and the parameter gradients dW = X^T dZ from the pre-activations")),
        {"test_gru_step_parameter_gradients": 4, "test_gru_step_input_and_state_gradients": 2,
         "test_gru_three_steps": 2},
        "02", 90),
    Assignment(
        "lstm_backward", "The backward pass of one LSTM step",
        (Function("tinyalgo.cores", "lstm_step_backward",
                  "lstm_step_backward: the gradients of one LSTM step on x, h, c and every parameter"),
         Function("tinyalgo.cores", "lstm_state_backward",
                  "lstm_state_backward: one LSTM step back to its gates' pre-activations and the entering state"),
         Function("tinyalgo.cores", "lstm_weights_backward",
                  "lstm_weights_backward: dx and the parameter gradients dW = X^T dZ from the pre-activations")),
        {"test_lstm_step_parameter_gradients": 4, "test_lstm_step_input_and_state_gradients": 2,
         "test_lstm_three_steps": 2},
        "02", 60),
    Assignment(
        "controller_backward", "The backward pass of one controller step (embedding, cores, extra layer, two heads)",
        (Function("tinyalgo.controller", "Controller.step_backward",
                  "Controller.step_backward: the layer and core backward passes of one step, in reverse order"),
         Function("tinyalgo.controller", "Controller.heads_backward",
                  "Controller.heads_backward: the two heads and tanh, on any number of rows"),
         Function("tinyalgo.controller", "Controller.extra_backward",
                  "Controller.extra_backward: the extra layer above the cores, on any number of rows"),
         Function("tinyalgo.controller", "Controller.cores_state_backward",
                  "Controller.cores_state_backward: one step's core layers back to their pre-activations"),
         Function("tinyalgo.controller", "Controller.cores_weights_backward",
                  "Controller.cores_weights_backward: the core layers' parameter gradients"),
         Function("tinyalgo.controller", "Controller.first_layer_backward",
                  "Controller.first_layer_backward: the embedding and the first matrix after it, composed")),
        {"test_step_backward_gru": 3, "test_step_backward_lstm_two_layers": 2, "test_step_backward_ff": 1},
        "03", 60, uses=("layers", "softmax_nll", "gru_backward", "lstm_backward"),
        forbidden=OTHER_BACKWARDS + ("bptt",)),
    Assignment(
        "bptt", "Backpropagation through time over a list of step caches, with the episode barrier",
        (Function("tinyalgo.bptt", "backward",
                  "bptt.backward: the heads for all steps at once, the sweep from the last step to the first"
                  " cutting the state gradient at the episode barrier, the weight gradients of all steps"),),
        {"test_bptt_gradient_check_gru": 4, "test_bptt_gradient_check_lstm": 2, "test_episode_barrier": 2},
        "03", 45, uses=("controller_backward", "layers", "softmax_nll", "gru_backward", "lstm_backward"),
        forbidden=OTHER_BACKWARDS),
    Assignment(
        "addition_ground_truth", "The ground-truth actions of addition and 3-number addition (the zig-zag)",
        (Function("tinyalgo.tasks.arithmetic", "_ColumnArithmetic._zigzag",
                  "_zigzag: the ground-truth action table of the column arithmetic tasks"),),
        {"test_addition_actions_by_hand": 3, "test_addition3_actions_by_hand": 2,
         "test_ground_truth_solves_addition": 3},
        "01", 45),
    Assignment(
        "curriculum", "The curriculum rule: add 4 after a perfect validation",
        (Function("tinyalgo.curriculum", "Curriculum.record",
                  "Curriculum.record: count perfect validations, advance the level, record the history"),),
        {"test_curriculum_advances_after_a_perfect_validation": 2, "test_curriculum_streak": 2,
         "test_curriculum_threshold": 1, "test_curriculum_history": 1},
        "04", 20),
    Assignment(
        "dynamic_discount", "One-step Q-learning targets with the dynamic discount V-hat'/V-hat",
        (Function("tinyalgo.qlearning", "dynamic_one_step_targets",
                  "dynamic_one_step_targets: r/V + gamma (V'/V) max Qhat', without bootstrap at a terminal step"),),
        {"test_dynamic_targets_by_hand": 3, "test_dynamic_targets_gamma": 1, "test_dynamic_targets_new_episode": 2},
        "05", 20, forbidden=("watkins_targets", "lambda_returns", "targets")),
    Assignment(
        "lambda_returns", "Generic lambda-returns, the form behind Watkins Q(lambda)",
        (Function("tinyalgo.qlearning", "lambda_returns",
                  "lambda_returns: the backward recursion G_t = r_t + d_t ((1 - l_t) boot_t+1 + l_t G_t+1)"),),
        {"test_lambda_one": 2, "test_lambda_zero": 1, "test_lambda_half": 2, "test_lambda_per_step_and_end": 1},
        "05", 30, forbidden=("watkins_targets", "dynamic_one_step_targets", "targets")),
    Assignment(
        "watkins", "Watkins Q(lambda) targets with the dynamic discount, cut at exploratory steps",
        (Function("tinyalgo.qlearning", "watkins_targets",
                  "watkins_targets: the backward recursion on the unnormalised return, cut before"
                  " each exploratory step and at the rollout's end"),),
        {"test_watkins_dynamic_no_exploration": 2, "test_watkins_exploratory_cut": 3,
         "test_watkins_rollout_end_and_new_episode": 2, "test_watkins_constant_discount": 2},
        "05", 60, forbidden=("lambda_returns", "dynamic_one_step_targets", "targets")),
    Assignment(
        "penalty", "The penalty kappa (sum_a Qhat(s, a) - 1)^2 and its gradient",
        (Function("tinyalgo.qlearning", "penalty",
                  "penalty: kappa * sum of (sum_a q - 1)^2 over the (masked) states, and dq"),),
        {"test_penalty_by_hand": 3, "test_penalty_mask": 2, "test_penalty_gradient_check": 2},
        "05", 20, forbidden=("penalty_hinge", "td_gradient")),
    Assignment(
        "machine_extraction", "Extracting a machine: Moore's partition refinement to the minimal machine",
        (Function("tinyalgo.automata.minimise", "minimise",
                  "minimise: refine the blocks of same-output states until none splits, then _renumber"),),
        {"test_figure_4a_padded_with_duplicated_states": 2, "test_refinement_needs_several_rounds": 3,
         "test_never_seen_entries_keep_states_apart": 3, "test_blocks_numbered_breadth_first_from_the_start": 2},
        "06", 45, forbidden=("reduce_dont_care", "merge_alternatives", "_fold", "_merged")),
]

ASSIGNMENTS = {a.name: a for a in _A}


def get(names) -> list:
    """The assignments called ``names`` (in registry order, each once), or a
    ValueError naming the unknown ones and the allowed names."""
    names = list(names)
    if not names:
        raise ValueError(f"name at least one assignment; allowed: {', '.join(ASSIGNMENTS)}")
    unknown = [n for n in names if n not in ASSIGNMENTS]
    if unknown:
        raise ValueError(f"unknown assignment {', '.join(map(repr, unknown))}; allowed: {', '.join(ASSIGNMENTS)}")
    return [a for a in ASSIGNMENTS.values() if a.name in names]
