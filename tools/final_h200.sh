#!/usr/bin/env bash
# The H200 data of notebook 7's table over shapes, inside a budget of GPU time (a maintainer's script):
#   0. env.txt: the card, its driver and clocks, and the version of everything that computes;
#   1. `tune` at the twelve shapes (its choices in cache/tune.json, where `best` reads them), while every registry
#      kernel is compiled and checked on two odd shapes against float64 beside it (same_run --set check: many
#      compilations, launches too small to disturb tune's timing much);
#   2. the same-run table over those shapes, three times, each a process of its own: cuBLAS, Triton (autotuned in
#      each run), `best` and same_run's TABLE; after each, shapes.csv: every run's rows with each point's median,
#      min, max and spread of % of cuBLAS;
#   3. Nsight Compute: PROFILE_KERNELS (the fastest rung; Triton's N = 1024 tile) and cuBLAS and Triton at PROFILE_N.
# Each step has its own limit and all of them BUDGET seconds: a step gets no more than is left, and one stopped
# keeps what it had written (rows are written as they come). After each step the work folder is packed into
# $OUT/final.tar.gz; with $OUT/final.log these are the only files in $OUT. Then, on your own machine,
#   python tools/install_final.py final.tar.gz      # into tiledlab/data/h200/, with provenance
# Expected on the H200 (compile times as in explore.csv, Triton's 14 configurations at every shape of every run):
# tune ≈ 70 s, run 1 ≈ 105 s (Triton's compile cache cold), runs 2 and 3 ≈ 70 s, profile > 100 s: 7.5 minutes.
# Run it from the project root on the GPU machine, after the wheels of /work/shared/tools/device-wheels.sh:
#   bash tools/final_h200.sh
# Every name below can be given in the environment; tests/test_final_chain.py runs the chain on the simulator with
# tiny SHAPES, ODD, TABLE, CHECK and TUNE.
# A card's same-run table alone (any card, the shapes outside the table too, `best`'s every candidate, three
# interleaved rounds and issue 38's verdicts) is one call of its own: python3 tools/same_run.py --set card.
set -u
OUT=${OUT:-final-out}
WORK=${WORK:-$(mktemp -d)}
BUDGET=${BUDGET:-540}  # seconds for every step together (the device call: timeout_s 600, with the wheels' install)
SHAPES=${SHAPES:-"1024x1024x1024 4096x4096x4096 8192x8192x8192 1000x1000x1000 1024x8192x1024 2048x2048x2048
  16384x4096x256 4097x4097x4097 3000x3000x3000 6000x6000x6000 4096x1024x4096 8192x1024x8192"}  # explore.csv's first
ODD=${ODD:-}  # MxKxN shapes of the checks; empty: same_run's own
TABLE=${TABLE:-}  # kernels of the table; empty: same_run's TABLE
CHECK=${CHECK:-}  # kernels checked on the odd shapes; empty: every registry kernel
TUNE=${TUNE:-}  # tune's candidates; empty: tune.CANDIDATES
WORKERS=${WORKERS:-6}  # compile processes of a table run (TABLE has five kernels)
PROFILE_KERNELS=${PROFILE_KERNELS:-"w_128x256x8_8x16_warp16x2 d_64x128x16_8x8_s5"}
PROFILE_N=${PROFILE_N:-"4096 8192 1024"}
PROFILE_S=${PROFILE_S:-160}  # the profile step's limit: on 2026-12-02 100 s ended it before Triton at N = 1024
export TILEDLAB_CACHE_DIR=$WORK/cache NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0 PYTHONUNBUFFERED=1
mkdir -p "$OUT" "$WORK"
start=$(date +%s)
odd=${ODD:+--odd $ODD}

log() { echo "$*" | tee -a "$OUT/final.log"; }
pack() { tar czf "$OUT/final.tar.gz" -C "$WORK" . ; }
within() {  # within LIMIT: LIMIT, or the seconds left of the budget when fewer
  local left=$(( BUDGET - ($(date +%s) - start) ))
  echo $(( left < $1 ? left : $1 ))
}
step() {  # step NAME LIMIT COMMAND...: at most LIMIT seconds (timeout ends the whole process group); logged, packed
  local name=$1 limit=$2 t0=$(date +%s); shift 2
  if (( limit < 10 )); then log "== $name: not run, $limit s of the budget left"; return; fi
  timeout -k 5 "$limit" "$@" > "$WORK/$name.log" 2>&1; local rc=$?
  log "== $name: exit $rc after $(( $(date +%s) - t0 )) s of $limit (total $(( $(date +%s) - start )) s)"
  tail -n 20 "$WORK/$name.log" | tee -a "$OUT/final.log"
  pack
}

{ date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>/dev/null
  python3 - <<'EOF'
import importlib.metadata as md, platform
print("python", platform.python_version())
for name in ("numba", "numba-cuda", "numpy", "llvmlite", "torch", "triton", "cupy-cuda13x", "cupy-cuda12x"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        pass
EOF
  ncu --version 2>/dev/null | tail -n 1; } > "$WORK/env.txt" 2>&1

limit=$(within 95)
if (( limit >= 10 )); then  # beside tune, with tune's limit; a worker begins no compilation in the last 40 s
  ( timeout -k 5 "$limit" python3 tools/same_run.py --set check --label check --workers 12 --compile-s $(( limit - 40 )) \
      $odd ${CHECK:+--kernels $CHECK} --out "$WORK" > "$WORK/check.log" 2>&1; echo "exit $?" >> "$WORK/check.log" ) &
  check=$!
fi
step tune "$limit" python3 -m tiledlab tune --shape $SHAPES ${TUNE:+--kernels $TUNE} --out "$WORK/tune"
if (( limit >= 10 )); then
  wait $check
  log "== check (beside tune): $(tail -n 1 "$WORK/check.log"); $(grep -c FAILED "$WORK/check.log") kernels FAILED"
  grep FAILED "$WORK/check.log" | tee -a "$OUT/final.log"
fi
for run in 1 2 3; do
  limit=$(within $(( run == 1 ? 120 : 85 )))  # the first run autotunes Triton with a cold compile cache
  step "run$run" "$limit" python3 tools/same_run.py --set table --shapes $SHAPES --label $run --workers "$WORKERS" \
    --deadline $(( limit - 15 )) $odd ${TABLE:+--kernels $TABLE} --out "$WORK"
  python3 tools/same_run.py --summary "$WORK" > "$WORK/summary.log" 2>&1
  pack
done
step profile "$(within $PROFILE_S)" python3 -m tools profile --n 1024 --tile 32 --kernels $PROFILE_KERNELS \
  --kernels-n $PROFILE_N --cublas-n $PROFILE_N --triton-n $PROFILE_N --out "$WORK/profile"
log "== done in $(( $(date +%s) - start )) s"
log "the median and spread of % of cuBLAS over the runs:"
cat "$WORK/summary.log" 2>/dev/null | tee -a "$OUT/final.log"
pack
