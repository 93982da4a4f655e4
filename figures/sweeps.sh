#!/usr/bin/env bash
# The long sweeps behind figures/README.md, in the order they are run.  Each
# command is resumable: run this script again after a stop and every sweep
# skips its finished runs and continues its interrupted ones from their last
# save.  Run it from a frozen copy of the package (the README says how):
#
#     nohup nice -n 19 bash figures/sweeps.sh > sweeps.log 2>&1 &
#
set -eu
ablations="classic gamma-0.99 gamma-0.95 dynamic dynamic-watkins"
run() { echo "== $(date -u +%FT%TZ) tinyalgo $*"; python -m tinyalgo "$@"; }

# Table 1's ablation columns at 10^7 characters: seeds 0-4, then Figure 5 (10 seeds), then seeds 5-9
run experiment table1 --columns $ablations --seeds 5 --budget 10000000 --confirm-length 0 --workers 2 --out figures/ablations_1e7
run experiment figure5 --seeds 10 --budget 10000000 --confirm-length 0 --workers 2 --out figures/figure5
run experiment table1 --columns $ablations --seeds 5 --first-seed 5 --budget 10000000 --confirm-length 0 --workers 2 --out figures/ablations_1e7
# Appendix C (reward types) and B (bases 2-10); 3-number addition with 5 seeds
run experiment appendix-c --tasks copy reverse walk addition multiplication --seeds 10 --budget 10000000 --workers 2 --out figures/appendix
run experiment appendix-c --tasks addition3 --seeds 5 --budget 10000000 --workers 2 --out figures/appendix
run experiment appendix-b --tasks copy reverse walk addition multiplication --seeds 10 --budget 10000000 --workers 2 --out figures/appendix
run experiment appendix-b --tasks addition3 --seeds 5 --budget 10000000 --workers 2 --out figures/appendix
# the 400- and 600-unit columns (a failed run takes about an hour here)
run experiment table1 --columns classic-400 classic-600 --seeds 5 --budget 10000000 --confirm-length 0 --workers 2 --out figures/ablations_1e7
run experiment table1 --summarize --out figures/ablations_1e7
run experiment appendix-b --summarize --out figures/appendix
run experiment appendix-c --summarize --out figures/appendix
