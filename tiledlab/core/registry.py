"""Every kernel of the series by name: the lesson's two, the ladder of register tiling, and a search.

`matmul(A, B, kernel="regtile_2d")` runs a kernel here at its default constants; `matmul(A, B,
kernel="regtile_2d", BM=64, TM=4)` changes some of them. `LADDER` lists the rungs in order, each
adding one idea to the one before (`KERNELS[name].idea`); `SEARCH` is a small search over the block
and thread tile of the best rung, and "best" names its winner on the H200.
"""
from dataclasses import dataclass
from functools import cached_property

from . import formulas, regtile
from .kernels import naive, tiled
from .source import constants_for
from .unrolled import unrolled


@dataclass(frozen=True)
class Entry:
    make: object           # () → the kernel; generated kernels are written on first use
    idea: str = ""         # the one idea this kernel adds to the rung before it
    min_blocks: int = None  # launch bounds: ask the compiler to fit this many blocks per SM (caps registers)

    @cached_property
    def kernel(self):
        return self.make()


def _gen(name, tile=(128, 128, 8, 8, 8), **options):
    return lambda: unrolled(name, **dict(zip(("BM", "BN", "BK", "TM", "TN"), tile)), **options)


SIMPLE = dict(transposed=True, edge="zero", loads="spread", uidx=False, prefetch=False)  # regtile_vec, unrolled
KERNELS = {
    "naive": Entry(lambda: naive, "one thread per element of C; every multiply-add loads A and B from global memory"),
    "tiled": Entry(lambda: tiled, "T×T tiles in shared memory: T times fewer global loads, 2 shared reads per FMA"),
    "regtile_1d": Entry(lambda: regtile.regtile_1d, "a thread computes TM = 8 elements of one column: "
                                                    "(TM + 1)/TM shared reads per FMA"),
    "regtile_2d": Entry(lambda: regtile.regtile_2d, "a thread computes an 8×8 block: (TM + TN)/(TM·TN) = 1/4 "
                                                    "shared read per FMA"),
    "regtile_vec": Entry(lambda: regtile.regtile_vec, "A's tile transposed, aligned, padded: every shared read "
                                                      "is one 128-bit load of 4 values"),
    "gen_unrolled_sA_mk": Entry(_gen("gen_unrolled_sA_mk", **{**SIMPLE, "transposed": False}),
                                "fully unrolled, but A's tile not transposed: its 4 rows are no longer adjacent"),
    "gen_unrolled": Entry(_gen("gen_unrolled", **SIMPLE), "regtile_vec fully unrolled by a generator: constant "
                                                          "shared offsets, 128-bit reads every time"),
    "gen_cheap_loads": Entry(_gen("gen_cheap_loads", prefetch=False),
                             "clamped edges, a row of A per thread, unsigned indices: cheaper global loads"),
    "gen_prefetch": Entry(_gen("gen_prefetch"), "the next tile's global loads issued before this tile's "
                                                "multiply-adds"),
    "gen_double": Entry(_gen("gen_double", buffers=2), "two shared buffers, one barrier per step"),
    "gen_double_lb": Entry(_gen("gen_double_lb", buffers=2), "gen_double with launch bounds: at most 128 "
                                                             "registers, 2 blocks per SM", min_blocks=2),
    "gen_warp": Entry(_gen("gen_warp", warp=(4, 8)), "warp tiling: a warp computes a 4×8 patch of thread "
                                                     "tiles (with launch bounds: 2 blocks per SM)", min_blocks=2),
    # the search: block tile and thread tile around the best rung
    "s_128x256x8_8x16": Entry(_gen("s_128x256x8_8x16", (128, 256, 8, 8, 16)), "8×16 thread tile, 128×256 block"),
    "s_128x256x8_8x16_db": Entry(_gen("s_128x256x8_8x16_db", (128, 256, 8, 8, 16), buffers=2),
                                 "the same, double-buffered"),
    "s_128x256x8_8x16_warp": Entry(_gen("s_128x256x8_8x16_warp", (128, 256, 8, 8, 16), warp=(4, 8)),
                                   "the same, warp-tiled 4×8"),
    "s_256x128x8_16x8": Entry(_gen("s_256x128x8_16x8", (256, 128, 8, 16, 8)), "the same, transposed shape"),
    "s_128x128x8_8x16": Entry(_gen("s_128x128x8_8x16", (128, 128, 8, 8, 16)), "8×16 thread tile, 128 threads"),
    "s_128x128x16_8x8": Entry(_gen("s_128x128x16_8x8", (128, 128, 16, 8, 8)), "gen_prefetch with BK = 16"),
    "s_64x128x8_8x8_db": Entry(_gen("s_64x128x8_8x8_db", (64, 128, 8, 8, 8), buffers=2),
                               "smaller block tile, double-buffered: more blocks for small N"),
    "s_64x64x8_4x4": Entry(_gen("s_64x64x8_4x4", (64, 64, 8, 4, 4), buffers=2), "4×4 thread tile, 64×64 block"),
}
BEST = "s_128x256x8_8x16"  # fastest on the H200 at N = 4096 and 8192 (86 % and 87 % of cuBLAS)
KERNELS["best"] = Entry(lambda: KERNELS[BEST].kernel, f"the search's best on the H200: {BEST}")

LADDER = ["naive", "tiled", "regtile_1d", "regtile_2d", "regtile_vec", "gen_unrolled_sA_mk", "gen_unrolled",
          "gen_cheap_loads", "gen_prefetch", "gen_double", "gen_double_lb", "gen_warp", "best"]
SEARCH = [name for name in KERNELS if name.startswith("s_")]


def predicted(name, M, K, N, tile=None, **constants):
    """What kernel `name` should measure at M×K·K×N: global loads {'A', 'B'} and shared-memory
    {'reads', 'stores', 'fmas'} (formulas.block_tile_loads and shared_traffic at its constants)."""
    kernel = KERNELS[name].kernel
    c = constants_for(kernel, **constants, **({} if tile is None else {"T": tile}))
    if name == "naive":
        return {**formulas.naive_loads(M, K, N), "reads": 0, "stores": 0, "fmas": M * N * K}
    if "T" in c:
        c = dict(BM=c["T"], BN=c["T"], BK=c["T"], TM=1, TN=1)
    generator = getattr(kernel, "tiledlab_generator", None)
    loads = formulas.block_tile_loads(M, K, N, c["BM"], c["BN"], clamped=bool(generator and generator.clamped))
    return {**loads, **formulas.shared_traffic(M, K, N, c["BM"], c["BN"], c["BK"], c["TM"], c["TN"])}
