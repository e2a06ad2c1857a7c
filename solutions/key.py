"""The teacher's key: every exercise of the series, with its answer and the reasoning to expect.

Kernel exercises are answered by the kernels in `solutions/kernels.py` (EXERCISES). Predictions have
a number the notebook measures; tests/test_exercises.py runs each notebook's own exercise cell with
these answers and checks that it says "Right" (and that a wrong answer is refused).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    value: object  # what `prediction` should be; None for questions answered in words only
    why: str


ANSWERS = {
    "1.1": Answer(None, "Two accumulators per even column; A[row, k] is loaded once into a register and "
                        "used for both. A's loads halve (M·K·⌈N/2⌉), B's stay M·N·K: the first step towards "
                        "register tiling (notebook 7)."),
    "1.2": Answer(120, "Each of the 3·4 threads reads a row of A (5 values) and a column of B (5): "
                       "2·M·N·K = 2·3·4·5 = 120."),
    "2.1": Answer(None, "A's tile in sA, B read from global memory inside the k loop (guarded at the edges)."),
    "2.2": Answer((8, 2), "Naive: b23 sits in column 2 of B, which every thread of column 2 of C reads, "
                          "once each: N = 8 times. Tiled: it enters shared memory once per block that needs "
                          "it, one block per block row: N/T = 2. Tiling turns one fetch per thread into one "
                          "fetch per block."),
    "3.1": Answer(None, "Each thread stores two elements of each tile per phase, then 2T multiply-adds. "
                        "Loads are unchanged (every element still enters shared memory once per block); "
                        "barriers per thread halve: 2·⌈K/2T⌉ = 16 for K = 64, T = 4, against 32."),
    "3.2": Answer((250, 50), "Naive 2T³ = 250, tiled 2T² = 50: ratio T = 5."),
    "4.1": Answer(266, "M·K·⌈N/T⌉ + K·N·⌈M/T⌉ = 10·7·2 + 7·6·3 = 140 + 126 = 266."),
    "4.2": Answer((549.755813888, 274.877906944, 137.438953472),
                  "2N³/T loads of 4 bytes: 8·8192³/T bytes = 550, 275 and 137 GB. Time does not follow: "
                  "T = 16 and T = 32 take about the same time although T = 32 loads half the bytes, "
                  "because the tiled kernel is no longer limited by global loads but by shared-memory "
                  "reads and instruction issue (notebook 4, 'Where the time goes')."),
    "5.1": Answer(None, "Put cuda.syncthreads() after the k loop, inside the t loop: nobody may overwrite "
                        "sA/sB for the next phase while a neighbour still reads the current one."),
    "5.2": Answer((4, 4), "At T = 8 a warp is four rows of 8 threads (ty = 0…3). Each row loads 8 consecutive "
                          "floats (32 bytes, one sector) of A, and likewise of B: 4 sectors each, as many as "
                          "one row of 32 (T = 32) touches: the cooperative load is coalesced at every T."),
    "6.1": Answer(None, "Reordering the loop changes no load: each thread still reads its row of A and "
                        "column of B from global memory, 2N³ in all, so the tiled check fails it."),
    "6.2": Answer(5, "At each k an 8×8 block reads 8 elements of A, one from each of its 8 rows (64-byte "
                     "rows: 4 lines), and 8 neighbouring elements of B (1 line). Those 5 lines stay in use "
                     "for the next k, so 5 lines, 640 bytes, hold the naive kernel's working set; A and B "
                     "are 2 KiB."),
}
# notebook 7
ANSWERS.update({
    "7.1": Answer(None, "TM = 2 rows of one column per thread: each thread loads TM elements of each T×T tile, "
                        "then for every k reads sB[k, tx] once into a register and uses it for its TM results. "
                        "Global loads are the tiled kernel's; shared reads per FMA fall from 2 to (TM + 1)/TM."),
    "7.2": Answer(0.375, "Per k a thread reads TM = 8 values of A and TN = 4 of B and makes 8·4 = 32 "
                         "multiply-adds: (8 + 4)/(8·4) = 12/32 = 0.375 shared reads per FMA, against 2 in the "
                         "tiled kernel and 0.25 for 8×8."),
})
