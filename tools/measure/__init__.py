"""The GPU measurements behind the committed data (tiledlab/data/h200/), which only maintainers run:

  ladder      every rung of register tiling, a search and cuBLAS, timed in one run (`python -m tools ladder`)
  sass        what the compiler made of a kernel: its main loop's instructions (`python -m tools sass`)
  profile     Nsight Compute's counters for every launch (`python -m tools profile`)
  reference   the reference data, one CSV each (`python -m tools measure`): device, latency, peaks,
              effects, races, racecheck
  effects     coalescing, bank conflicts, the write-back of C, on variants of the lesson's kernels
  latency     one dependent load per memory level (a pointer chase)
  peaks       the roofs: FP32 FMA rate, DRAM, L2 and shared bandwidth
  racecheck   compute-sanitizer's race report on the tiled kernel without each barrier
  facts       the card's few facts that latency and peaks judge their numbers by
  triton_peer Triton's FP32 matmul, autotuned: the peer that ladder, profile and same_run time beside ours

What the notebooks read of it stays in the package (tiledlab.experiments.profile: the stall reasons and
what binds a kernel, from the committed counters).
"""
