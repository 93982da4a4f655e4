"""Speed paths.  Nothing here is needed to understand the paper: each module
replaces a taught piece of ``tinyalgo`` with a faster one that computes the
same numbers (up to float rounding), and each has a test that says so.

========================  =====================================================
module                    replaces
========================  =====================================================
``fast.frozen``           the embedding and heads of ``Controller`` at inference
``fast.buffers``          the per-step caches of backprop through time
``fast.memory``           (no taught twin) glibc's allocator kept from trimming
``fast.lanes``            the per-lane arrays of the interfaces, packed in two
========================  =====================================================
"""
