#!/usr/bin/env bash
# Run several `fpt reproduce` tables at once into ONE run store, within a wall-clock limit.
#
# Why: on one GPU a quick-scale run is seconds of compute but several seconds of Python start-up, so one table at a
# time leaves the GPU idle; six lanes of two runs each kept an H200 busy (docs/results/quick-gpu/README.md). The
# store's run locks let lanes share cells (a table's FPT row is another table's row too): a run another lane is
# writing is left to it. Every run is resumable: run the script again with the same STORE to go on.
#
#   LIMIT=515 STORE=results/gpu/runs RESULTS=results/gpu bash bench/reproduce_lanes.sh
#
# LIMIT: seconds from the start after which no table starts and running ones are stopped (default 3600).
# Each lane: its table with --tuned-lr (the critics' protocol), then the same table at the paper's fixed lr;
# the last lane runs the fixed-lr tables in turn. Afterwards write the reports with --report-only (README above).
set -u
T0=$(date +%s); LIMIT=${LIMIT:-3600}
STORE=${STORE:-results/lanes/runs}; RESULTS=${RESULTS:-results/lanes}; LOGS=$RESULTS/lane-logs
SEEDS=${SEEDS:-0,1,2}; SCALE=${SCALE:-quick}
# --tuned-lr chooses the lr on seed 0 and reports the others (claims.md reads seeds 1-3), so tuned tables take one more
TUNED_SEEDS=${TUNED_SEEDS:-0,1,2,3}
mkdir -p "$STORE" "$LOGS"

lane() {  # lane NAME MODE TABLE...   (MODE: tuned | fixed; PAR: runs at once in this lane)
  local name=$1 mode=$2 par=${PAR:-2} left extra out t seeds; shift 2
  for t in "$@"; do
    left=$((LIMIT - ($(date +%s) - T0))); [ "$left" -gt 20 ] || break
    if [ "$mode" = tuned ]; then extra="--tuned-lr"; out=$RESULTS/$t-tuned; seeds=$TUNED_SEEDS
    else extra=""; out=$RESULTS/$t; seeds=$SEEDS; fi
    echo "$(date +%T) $name start $t $mode (${left}s left)" | tee -a "$LOGS/lanes.log"
    timeout "$left" python -m fpt reproduce "$t" --scale "$SCALE" --seeds "$seeds" $extra --store "$STORE" \
      --out "$out" --parallel "$par" --threads-per-trial 1 --quiet >> "$LOGS/$name.log" 2>&1
    echo "$(date +%T) $name end $t $mode rc=$?" | tee -a "$LOGS/lanes.log"
  done
}

( while sleep 45; do
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader \
      >> "$LOGS/gpu.log"
    echo "$(date +%T) finished runs: $(ls "$STORE"/*/summary.json 2>/dev/null | wc -l)" | tee -a "$LOGS/lanes.log"
  done ) &
WATCH=$!
lane L1 tuned table13 && lane L1 fixed table13 & P1=$!
lane L2 tuned table1 && lane L2 fixed table1 & P2=$!
lane L3 tuned table2 && lane L3 fixed table2 & P3=$!
lane L4 tuned table3 && lane L4 fixed table3 & P4=$!
lane L5 tuned table14 && lane L5 fixed table14 & P5=$!
PAR=4 lane L6 fixed table13 table1 table3 table14 table2 & P6=$!
while kill -0 $P1 $P2 $P3 $P4 $P5 $P6 2>/dev/null; do
  sleep 5; [ $(($(date +%s) - T0)) -gt $((LIMIT + 15)) ] && break
done
kill $WATCH 2>/dev/null
echo "$(date +%T) lanes over: $(ls "$STORE"/*/summary.json 2>/dev/null | wc -l) finished runs in $STORE"
