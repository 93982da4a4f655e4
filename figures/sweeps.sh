#!/usr/bin/env bash
# The long sweeps behind figures/README.md, in the order they are run.  Each
# command is resumable: run this script again after a stop and every sweep
# skips its finished runs and continues its interrupted ones from their last
# save.  Run it from a frozen copy of the package (the README says how):
#
#     nohup nice -n 19 bash figures/sweeps.sh > sweeps.log 2>&1 &
#
set -eu
# OpenBLAS picks its own kernels (AVX-512 on the AMD machine of benchmarks/README.md, where the environment pins
# the Haswell ones): GRU products about 1.45 x faster.  Ablations, Figure 5, Appendix C and Appendix B's
# runs of seed 0 and of seed 1 to base 6 ran with the pin (the sweep restarted without it on 2026-11-24).
unset OPENBLAS_CORETYPE
ablations="classic gamma-0.99 gamma-0.95 dynamic dynamic-watkins"
run() { echo "== $(date -u +%FT%TZ) tinyalgo $*"; python -m tinyalgo "$@"; }

# First pass, 5 seeds in every cell (the issue's minimum): Table 1's ablation columns, Figure 5,
# Appendix C (reward types), Appendix B (bases 2-10), the 400- and 600-unit columns (a failed run of
# these takes much longer; copy and the additions first, where plain Q-learning solves anything), then the
# summaries
run experiment table1 --columns $ablations --seeds 5 --budget 10000000 --confirm-length 0 --workers 2 --out figures/ablations_1e7
run experiment figure5 --seeds 5 --budget 10000000 --confirm-length 0 --workers 2 --out figures/figure5
run experiment appendix-c --seeds 5 --budget 10000000 --workers 2 --out figures/appendix
run experiment appendix-b --seeds 5 --budget 10000000 --workers 2 --out figures/appendix
units() { run experiment table1 --columns classic-400 classic-600 --seeds 5 --budget 10000000 --confirm-length 0 \
    --workers 2 --out figures/ablations_1e7 "$@"; }
units --tasks copy addition addition3
units
summaries() {
    run experiment table1 --summarize --out figures/ablations_1e7
    run experiment appendix-b --summarize --out figures/appendix
    run experiment appendix-c --summarize --out figures/appendix
    run experiment figure5 --summarize --out figures/figure5
}
summaries
# Second pass, seeds 5-9 where the cores allow (finished runs are skipped): Figure 5, the ablation columns
# (addition first: Figure 5 over the ablation columns tests its runs), Appendix C, Appendix B.  Sweeps may
# run side by side (e.g. two lanes of --workers 1 over other tasks): a run being trained is held by its sweep.
run experiment figure5 --seeds 10 --budget 10000000 --confirm-length 0 --workers 2 --out figures/figure5
for tasks in addition "copy reverse walk" "addition3 multiplication"; do
    run experiment table1 --columns $ablations --tasks $tasks --seeds 5 --first-seed 5 --budget 10000000 \
        --confirm-length 0 --workers 2 --out figures/ablations_1e7
done
run experiment appendix-c --seeds 10 --budget 10000000 --workers 2 --out figures/appendix
run experiment appendix-b --seeds 10 --budget 10000000 --workers 2 --out figures/appendix
summaries
