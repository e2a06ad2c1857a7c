#!/usr/bin/env bash
# The H200 data of the dynamic-shared-memory rungs, inside 8 minutes of GPU time (a maintainer's script; the
# steps' limits add up to 7.75 minutes).
#   1. `tune` at issue 26's twelve shapes: the choices go to $OUT/cache, where `best` reads them (TILEDLAB_CACHE_DIR);
#   2. the same-run table over those shapes (cuBLAS, Triton, `best`, the rungs of tools/same_run.py's TABLE), three
#      times, each a separate process; the first also checks every registry kernel on two odd shapes; then
#      $OUT/shapes.csv: every run's rows with the median, min, max and spread of each point's % of cuBLAS;
#   3. Nsight Compute counters of RUNG (the fastest new rung; first argument) and cuBLAS at N = 4096 and 8192.
# Run it from the project root on the GPU machine, after the wheels of /work/shared/tools/device-wheels.sh:
#   bash tools/final_h200.sh d_128x64x32_8x8_s4 "d_128x64x32_8x8_s4 a_64x128x16_8x8_s3 w_128x256x8_8x16_warp16x2"
# (second argument: tune's candidates). Each step has its own limit; one stopped there keeps what it had measured
# (rows and choices are written as they come) and the next begins.
set -u
RUNG=${1:-d_128x64x32_8x8_s4}
CANDIDATES=${2:-"d_128x64x32_8x8_s4 d_64x128x16_8x8_s5 w_128x256x8_8x16_warp16x2 a_64x128x16_8x8_s3"}
OUT=${OUT:-final-out}
SHAPES=${SHAPES:-"1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 16384x4096x256 4097x4097x4097 1000x1000x1000
        3000x3000x3000 6000x6000x6000 4096x1024x4096 8192x1024x8192 1024x8192x1024"}
export TILEDLAB_CACHE_DIR=$OUT/cache NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0
mkdir -p "$OUT"
start=$(date +%s)
step() {  # step NAME LIMIT_S COMMAND...: run it with a time limit, log it, say how long it took
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s (total $(( $(date +%s) - start )) s)"
  tail -n 25 "$OUT/$name.log"
}
step tune 120 python3 -m tiledlab tune --shape $SHAPES --kernels $CANDIDATES --out "$OUT/tune"
step run1 115 python3 tools/same_run.py --set table --shapes $SHAPES --label 1 --check-all --deadline 90 --out "$OUT"
step run2 75 python3 tools/same_run.py --set table --shapes $SHAPES --label 2 --deadline 60 --out "$OUT"
step run3 75 python3 tools/same_run.py --set table --shapes $SHAPES --label 3 --deadline 60 --out "$OUT"
python3 tools/same_run.py --summary "$OUT" > "$OUT/summary.log" 2>&1
for n in 4096 8192; do
  step "profile$n" 40 python3 -m tiledlab profile --n 1024 --tile 32 --kernels-n $n --kernels "$RUNG" --cublas-n $n \
    --out "$OUT/profile$n"
done
echo "== done in $(( $(date +%s) - start )) s; summary:"
cat "$OUT/summary.log"
