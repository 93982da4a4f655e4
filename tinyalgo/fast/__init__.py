"""Speed paths.  Nothing here is needed to understand the paper: each module
replaces a taught piece of ``tinyalgo`` with a faster one that computes the
same numbers (up to float rounding), and each has a test that says so.

========================  =====================================================
module                    replaces
========================  =====================================================
``fast.frozen``           the embedding and heads of ``Controller`` at inference
``fast.buffers``          the per-step caches of backprop through time
``fast.memory``           (no taught twin) glibc's allocator kept from trimming
``fast.controller``       the controller's steps and BPTT in training (``Controller.rollout``)
========================  =====================================================

Importing this package (``tinyalgo/__init__.py`` does) puts the fast rollout
and the folded inference view into ``tinyalgo.controller.SPEED``, where a
``Controller`` that is not on the reference path finds them.
"""
from tinyalgo import controller as _controller
from tinyalgo.fast.controller import FastRollout
from tinyalgo.fast.frozen import FrozenController

_controller.SPEED.update(rollout=FastRollout, frozen=FrozenController)
