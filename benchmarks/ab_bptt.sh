#!/bin/bash
# Side by side in ONE process: GRU-200 float32 forward + backward per step of
# the code at git revision REV against the working tree, alternating rounds
# (the machine's speed drifts between minutes; alternation cancels it).
#
#     benchmarks/ab_bptt.sh REV [ROUNDS]        # from the repository's root
#
# REV's package is copied to a temporary directory as `tinyalgo_old`.
set -e
REV=$1; ROUNDS=${2:-40}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$REV" tinyalgo | tar -x -C "$tmp"
mv "$tmp/tinyalgo" "$tmp/tinyalgo_old"
grep -rl "tinyalgo" "$tmp/tinyalgo_old" | xargs sed -i 's/\btinyalgo\b\([.]\| import\)/tinyalgo_old\1/g; s/^import tinyalgo$/import tinyalgo_old/'
PYTHONPATH="$tmp:$PWD" python benchmarks/ab_bptt.py "$ROUNDS"
