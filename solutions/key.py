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
    # notebook 0: the prerequisites (the class report's "prerequisites" column)
    "0.1": Answer(13, "Row-major: row i starts after i whole rows of K elements, so A[i, k] lies at i·K + k: "
                      "2·5 + 3 = 13. Column-major order (Fortran's) would put it at k·M + i = 11, and i·M + k = 9 "
                      "takes the wrong size for a row. Notebooks 5 and 6 turn such positions into bytes (4 per "
                      "float32), sectors and cache lines."),
    "0.2": Answer((3, 4), "C takes its rows from A and its columns from B: M×N = 3×4. The inner sizes, A's K columns "
                          "and B's K rows, must agree: each element of C pairs the K values of a row of A with the K "
                          "values of a column of B. One thread per element of C is 3·4 = 12 threads."),
    "0.3": Answer((5, 5), "C[1, 2] is the sum over k = 0 … K − 1 of A[1, k]·B[k, 2]: all K = 5 elements of row 1 of A "
                          "and all 5 of column 2 of B, 2K = 10 loads for one element of C. Notebook 1 counts the same "
                          "for N×N (2N per thread), then asks the converse (exercise 1.2): how often all the threads "
                          "together fetch each element."),
    "1.1": Answer(None, "Thread coarsening: T/2 × T threads per T×T tile of C, thread x computing columns 2x and "
                        "2x + 1 with two accumulators; A[row, k] is loaded once into a register and used for both. "
                        "A's loads halve (M·K·⌈N/2⌉), B's stay M·N·K, and no thread idles (the old version let odd "
                        "columns do nothing, half of every warp). The first step towards register tiling (notebook 7)."),
    "1.2": Answer((4, 3), "Each element A[i, k] is read by every thread of row i of C, one per column: N = 4 "
                          "times; each B[k, j] by every thread of column j, one per row: M = 3 times. The columns "
                          "of C set A's count, the rows set B's (for a square product both are N)."),
    "2.1": Answer(None, "A's tile in sA, B read from global memory inside the k loop (guarded at the edges)."),
    "2.2": Answer((8, 2), "Naive: b23 sits in column 2 of B, which every thread of column 2 of C reads, "
                          "once each: N = 8 times. Tiled: it enters shared memory once per block that needs "
                          "it, one block per block row: N/T = 2. Tiling turns one fetch per thread into one "
                          "fetch per block."),
    "2.3": Answer((128, 1), "Each of the N² = 64 threads loads one element of A and one of B: 2N² = 128 loads, each "
                            "element fetched once. A tile brings a value into shared memory so that other threads can "
                            "read it again; here nobody reads a value twice, so a tile would only add the store into "
                            "shared memory and a barrier. The matrix product reuses each value N times (2N³ loads of "
                            "2N² values): that reuse is what tiling turns into fewer global loads."),
    "3.1": Answer(None, "Each thread stores two elements of each tile per phase, then 2T multiply-adds. "
                        "Loads are unchanged (every element still enters shared memory once per block); "
                        "barriers per thread halve: 2·⌈K/2T⌉ = 16 for K = 64, T = 4, against 32."),
    "3.2": Answer((256, 48), "Naive: every one of the 4·8 outputs reads BK = 4 values of A and 4 of B: "
                             "2·BM·BN·BK = 256. Staged: BM·BK + BK·BN = 16 + 32 = 48. The ratio 2·BM·BN/(BM + BN) "
                             "= 5.33, the harmonic mean of 4 and 8: closer to 4, because the short side "
                             "(4 rows, so each value of B is reused only 4 times) limits the reuse."),
    "3.3": Answer(None, "Each thread loads sA[ty, tx] and two elements of sB (columns col and col + T), then for "
                        "each k reads a = sA[ty, k] once and uses it for both accumulators. A's tile now serves 2T "
                        "columns: A's loads halve to M·K·⌈N/2T⌉, B's stay K·N·⌈M/T⌉."),
    "3.4": Answer((32, 8, 2), "Per SM: 2048 threads, 32 blocks, 65,536 registers, 228 KiB of shared memory. A block "
                              "of T² threads at 32 registers a thread: T = 8, 64 threads, 2048/64 = 32 by threads, "
                              "65,536/(64·32) = 32 by registers, and the cap of 32 blocks: all three bind at once. "
                              "T = 16, 256 threads: 8 by threads and 8 by registers. T = 32, 1024 threads: 2 by threads "
                              "and 2 by registers. Shared memory (2·T²·4 bytes a block, at most 8 KiB) never binds. "
                              "Every width fills the SM with 64 warps: the tile width changes the blocks, not the warps "
                              "(Nsight Compute's 'limited by' column in notebook 6 names the same limits)."),
    "4.1": Answer(6, "Naive: 2·10·7·6 = 840, a quarter is 210. Tiled: 70·⌈6/T⌉ + 42·⌈10/T⌉: T = 4 gives "
                     "140 + 126 = 266, T = 5 gives 140 + 84 = 224, both above 210; T = 6 covers all 6 columns of "
                     "C with one block column: 70 + 84 = 154. (T = 6 … 9 all load 154: the ceilings, not T, set "
                     "the count.)"),
    "4.2": Answer(13, "Loads per FMA = 2·⌈N/T⌉/N for square N: N = 12 and 16 give the ideal 0.5; N = 13 pays a "
                      "whole fourth block column for one extra column, 2·4/13 = 0.615, the most; 17 pays a fifth for "
                      "one column too, but 2·5/17 = 0.588 spreads it over more. One row or column past a multiple "
                      "of T costs a whole block of loads, and most at small N."),
    "4.3": Answer(None, "sA of 2T×T and sB of T×2T, each thread loading two elements of each per step (rows row and "
                        "row + T of A, columns col and col + T of B) and accumulating a 2×2 group of results. The "
                        "block tile, not the thread count, sets the loads: M·K·⌈N/2T⌉ + K·N·⌈M/2T⌉, what the "
                        "tiled kernel loads at 2T, with a quarter of its threads."),
    "5.1": Answer(None, "Two buffers: sA and sB of 2T×T, step t filling rows (t mod 2)·T … of each, then one barrier "
                        "and the multiply-adds. The second barrier kept step t + 1's stores off the tile step t still "
                        "reads; now step t + 1 writes the other half. The half step t reads is written again by step "
                        "t + 2, and a thread reaches that store only past step t + 1's barrier, which no thread "
                        "passes before all have finished step t's reads."),
    "5.2": Answer((8, 8), "Swapped, threadIdx.x walks rows: the first warp (linear index tx + 8·ty < 32) is tx = 0…7, "
                          "ty = 0…3, i.e. 8 rows of the tile × 4 of its columns. Its load of A reads rows 0…7, 4 "
                          "consecutive floats each: 8 sectors (a row of a 32×32 A is 128 bytes, so no two rows share "
                          "one); its load of B likewise 8 rows of B × 4 columns: 8 sectors. The lesson's mapping "
                          "touches 4 of each. At T = 4 the whole block is 16 threads, 4 × 4 floats: 16 bytes of a "
                          "row fit in one sector either way, so both mappings touch 4 sectors of each."),
    "6.1": Answer(None, "Reordering the loop changes no load: each thread still reads its row of A and "
                        "column of B from global memory, 2N³ in all, so the tiled check fails it."),
    "6.2": Answer(5, "At each k an 8×8 block reads 8 elements of A, one from each of its 8 rows (64-byte "
                     "rows: 4 lines), and 8 neighbouring elements of B (1 line). Those 5 lines stay in use "
                     "for the next k, so 5 lines, 640 bytes, hold the naive kernel's working set; A and B "
                     "are 2 KiB."),
    "6.3": Answer(1.54, "Warp-FMAs: N³/32 = 2048³/32 ≈ 2.68·10⁸; at 1.5 load wavefronts each, 4.03·10⁸ wavefronts; at "
                        "one per clock on each of 132 SMs at 1.98 GHz, 4.03·10⁸ / (132 · 1.98·10⁹) s ≈ 1.54 ms. "
                        "The cell prints the measured 2.02 ms: the loads' wavefronts alone are about three "
                        "quarters of the time, as at N = 4096 (the stores and the load/store unit add to the same "
                        "path), so the L1/shared-memory path binds here too."),
    "6.4": Answer(8590, "A row of blocks is T rows of C; it streams all of B (N² floats, 4N² bytes) through DRAM once, "
                        "and there are N/T rows of blocks: 4N²·N/T = 4N³/T bytes = 4·4096³/32 ≈ 8,590 MB; Nsight "
                        "Compute measures 8,392 MB (within 3 %). Doubling T halves the rows of blocks, so the "
                        "streams: DRAM bytes fall as 1/T, as the global loads do, while the naive kernel's stayed low "
                        "because its reuse was caught in the caches."),
}
# notebook 7
ANSWERS.update({
    "7.1": Answer(None, "TM = 2 rows of one column per thread: each thread loads TM elements of each T×T tile, "
                        "then for every k reads sB[k, tx] once into a register and uses it for its TM results. "
                        "Global loads are the tiled kernel's; shared reads per FMA fall from 2 to (TM + 1)/TM."),
    "7.2": Answer(0.375, "(TM + TN)/(TM·TN) with TM·TN = 32 is (TM + TN)/32, smallest when TM + TN is, i.e. when the "
                         "tile is as square as possible: 8×4 or 4×8, 12/32 = 0.375 (16×2 gives 0.5625, 32×1 "
                         "1.03). For a fixed number of results, a square tile shares each value with the most others."),
    "7.3": Answer(None, "TM×TN = 2×2 per thread, (T/TN)×(T/TM) = 2×2 threads: each thread loads TM·TN = 4 elements of "
                        "each tile, then per k reads a[i] = sA[ty·TM + i, k] (TM values) and b[j] = sB[k, tx·TN + j] "
                        "(TN values) into registers and does the TM·TN outer product: 4 reads for 4 FMAs, exactly 1 "
                        "per multiply-add. No column reaches it at T = 4: (TM + 1)/TM ≥ 5/4."),
})
