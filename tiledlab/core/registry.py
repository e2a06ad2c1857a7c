"""Every kernel of the series by name: the lesson's two, the ladder of register tiling, and a search.

`matmul(A, B, kernel="regtile_2d")` runs a kernel here at its default constants; `matmul(A, B,
kernel="regtile_2d", BM=64, TM=4)` changes some of them. `LADDER` lists the rungs in order, each
adding one idea to the one before (`KERNELS[name].idea`); `SEARCH` is a small search over the block
and thread tile of the best rung, and "best" names its winner on the H200.
"""
import numbers

from . import formulas, regtile, unrolled
from .generated import generated
from .fair import naive_unsigned, tiled_unsigned
from .kernel import lesson
from .kernels import naive, tiled


def _gen(name, tile=(128, 128, 8, 8, 8), idea="", min_blocks=None, **options):
    return generated(name, **dict(zip(("BM", "BN", "BK", "TM", "TN"), tile)), idea=idea, min_blocks=min_blocks,
                     **options)


SIMPLE = dict(transposed=True, edge="zero", loads="spread", uidx=False, prefetch=False)  # regtile_vec, unrolled
_ALL = [
    lesson(naive, "one thread per element of C; every multiply-add loads A and B from global memory"),
    lesson(tiled, "T×T tiles in shared memory: T times fewer global loads, 2 shared reads per FMA"),
    # the fair pair: the lesson's two with unsigned indices, so that they differ only in tiling
    lesson(naive_unsigned, "the lesson's naive kernel with unsigned indices: no wrap-around code, the fair "
                           "partner for tiling"),
    lesson(tiled_unsigned, "the lesson's tiled kernel with unsigned indices: what tiling buys over "
                           "naive_unsigned, index arithmetic alike"),
    regtile.regtile_1d,
    regtile.regtile_2d,
    regtile.regtile_vec,
    _gen("gen_unrolled_sA_mk", idea="fully unrolled, but A's tile not transposed: its 4 rows are no longer adjacent",
         **{**SIMPLE, "transposed": False}),
    _gen("gen_unrolled", idea="regtile_vec fully unrolled by a generator: constant shared offsets, 128-bit reads "
                              "every time", **SIMPLE),
    _gen("gen_cheap_loads", idea="clamped edges, a row of A per thread, unsigned indices: cheaper global loads",
         prefetch=False),
    _gen("gen_prefetch", idea="the next tile's global loads issued before this tile's multiply-adds"),
    _gen("gen_double", idea="two shared buffers, one barrier per step", buffers=2),
    _gen("gen_double_lb", idea="gen_double with launch bounds: at most 128 registers, 2 blocks per SM", buffers=2,
         min_blocks=2),
    _gen("gen_warp", idea="warp tiling: a warp computes a 4×8 patch of thread tiles (with launch bounds: 2 blocks "
                          "per SM)", warp=(4, 8), min_blocks=2),
    # the search: block tile and thread tile around the best rung
    _gen("s_128x256x8_8x16", (128, 256, 8, 8, 16), "8×16 thread tile, 128×256 block"),
    _gen("s_128x256x8_8x16_db", (128, 256, 8, 8, 16), "the same, double-buffered", buffers=2),
    _gen("s_128x256x8_8x16_warp", (128, 256, 8, 8, 16), "the same, warp-tiled 4×8", warp=(4, 8)),
    _gen("s_256x128x8_16x8", (256, 128, 8, 16, 8), "the same, transposed shape"),
    _gen("s_128x128x8_8x16", (128, 128, 8, 8, 16), "8×16 thread tile, 128 threads"),
    _gen("s_128x128x16_8x8", (128, 128, 16, 8, 8), "gen_prefetch with BK = 16"),
    _gen("s_64x128x8_8x8_db", (64, 128, 8, 8, 8), "smaller block tile, double-buffered: more blocks for small N",
         buffers=2),
    _gen("s_64x64x8_4x4", (64, 64, 8, 4, 4), "4×4 thread tile, 64×64 block", buffers=2),
    # asynchronous copies (core.ptx): global → shared past the registers, a pipeline of stages
    _gen("a_128x256x8_8x16_warp_s2", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with cp.async: 2 stages, "
         "16-byte copies, one barrier per step", warp=(4, 8), stages=2, **unrolled.ASYNC),
    _gen("a_128x256x8_8x16_warp_s3", (128, 256, 8, 8, 16), "the same with 3 stages: two tiles in flight",
         warp=(4, 8), stages=3, **unrolled.ASYNC),
    _gen("a_128x128x8_8x8_warp_s3", (128, 128, 8, 8, 8), "cp.async, 3 stages, 128×128 block, 8×8 thread tile",
         warp=(4, 8), stages=3, **unrolled.ASYNC),
    _gen("a_128x128x8_8x8_warp_s4", (128, 128, 8, 8, 8), "the same with 4 stages", warp=(4, 8), stages=4,
         **unrolled.ASYNC),
    _gen("a_64x128x8_8x8_s3", (64, 128, 8, 8, 8), "cp.async, 3 stages, 64×128 block: more blocks for small N",
         stages=3, **unrolled.ASYNC),
    _gen("a_64x128x8_8x8_s4", (64, 128, 8, 8, 8), "the same with 4 stages", stages=4, **unrolled.ASYNC),
    _gen("a_64x128x16_8x8_s3", (64, 128, 16, 8, 8), "a_64x128x8_8x8_s3 with BK = 16: half the steps and "
         "barriers, 3 stages (40 KiB of shared memory)", stages=3, **unrolled.ASYNC),
    # B copied asynchronously, A through registers (transposed on its way into shared memory, so its reads
    # stay conflict-free 128-bit ones): one barrier per step
    _gen("h_128x256x8_8x16_warp_s2", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with B by cp.async in 2 stages, "
         "A through registers", warp=(4, 8), stages=2, **unrolled.HYBRID),
    _gen("h_128x256x8_8x16_warp_s3", (128, 256, 8, 8, 16), "the same with 3 stages", warp=(4, 8), stages=3,
         **unrolled.HYBRID),
    _gen("h_128x128x8_8x8_warp_s3", (128, 128, 8, 8, 8), "B by cp.async in 3 stages, A through registers, 128×128 "
         "block", warp=(4, 8), stages=3, **unrolled.HYBRID),
    _gen("h_128x128x8_8x8_warp_s4", (128, 128, 8, 8, 8), "the same with 4 stages", warp=(4, 8), stages=4,
         **unrolled.HYBRID),
    _gen("h_64x128x8_8x8_s3", (64, 128, 8, 8, 8), "B by cp.async in 3 stages, A through registers, 64×128 block",
         stages=3, **unrolled.HYBRID),
    _gen("h_64x128x8_8x8_s4", (64, 128, 8, 8, 8), "the same with 4 stages", stages=4, **unrolled.HYBRID),
    # two rungs aimed at what Nsight Compute says the fastest one waits for (short_scoreboard: shared-memory
    # data), each one idea away from s_128x256x8_8x16_warp
    _gen("f_128x256x8_8x16_warp", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with register fragments: each k's "
         "shared reads issued one k ahead, two shared tiles, one barrier per tile", warp=(4, 8), fragments=2,
         **unrolled.FRAGMENTS),
    _gen("w_128x256x8_8x16_warp16x2", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with each warp a 16×2 patch of "
         "thread tiles instead of 4×8: 2 distinct 16-byte reads of B per warp instead of 8", warp=(16, 2)),
    # more stages than 48 KiB hold: tiles in dynamic shared memory (core.ptx.shared_view), each Triton's own choice
    # on the H200 at one size, stages included; explore.csv (one run): neither beat the rungs of `best` anywhere
    _gen("d_64x128x16_8x8_s5", (64, 128, 16, 8, 8), "a_64x128x16_8x8_s3 with 5 stages (66 KiB): Triton's tile at "
         "N = 1024", stages=5, **unrolled.ASYNC),
    _gen("d_128x256x16_8x16_s3_w16x2", (128, 256, 16, 8, 16), "w_128x256x8_8x16_warp16x2 with BK = 16 and B by "
         "cp.async in 3 stages (74 KiB): Triton's tile at N = 4096, 256 threads like its 8 warps", warp=(16, 2),
         stages=3, **unrolled.HYBRID),
]
KERNELS = {k.name: k for k in _ALL}  # every kernel of the series, by name
# The ladder's last rung, profiled as "best" (ladder_profile.csv); not the fastest in the committed data: its
# warp-tiled twin is faster at N >= 2048, s_64x128x8_8x8_db at N = 1024 (notebook 7 computes the fastest per N).
BEST = "s_128x256x8_8x16"  # H200: 84 % of cuBLAS at N = 4096, 87 % of cuBLAS at N = 8192
KERNELS["best"] = KERNELS[BEST]  # the ladder's last rung; matmul(A, B, "best") chooses by shape (best_for)

LADDER = ["naive", "tiled", "regtile_1d", "regtile_2d", "regtile_vec", "gen_unrolled_sA_mk", "gen_unrolled",
          "gen_cheap_loads", "gen_prefetch", "gen_double", "gen_double_lb", "gen_warp", "best"]
SEARCH = [name for name in KERNELS if name.startswith("s_")]
ASYNC = [name for name in KERNELS if name[:2] in ("a_", "h_")]  # the rungs with asynchronous copies
WAITS = [name for name in KERNELS if name[:2] in ("f_", "w_")]  # the rungs against the wait for shared data
DYNAMIC = [name for name in KERNELS if name[:2] == "d_"]  # tiles in dynamic shared memory, beyond 48 KiB


# What matmul(A, B, "best") runs, largest block tile first: the fastest kernel with that block tile in the
# committed H200 data (waits.csv: the 16×2 warp patch; async.csv: the BK = 16 pipeline), so that each size gets
# the largest tile that still fills the card.
BY_SIZE = ["w_128x256x8_8x16_warp16x2", "a_64x128x16_8x8_s3"]
FILL = 0.9  # blocks per SM a grid must give (one block per SM fits at these registers: a wave, nearly full)


def blocks(name, M, N):
    """Blocks in the grid of kernel `name` for an M×N product C: one per BM×BN tile of C."""
    c = KERNELS[name].constants
    return -(-M // c["BM"]) * -(-N // c["BN"])


def _whole(name, value):
    """`value` as an int of at least 1, or a ValueError that names `name`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    return int(value)


def best_for(M, N, sms):
    """The kernel of BY_SIZE that `best` runs for an M×N product on a card with `sms` SMs: the largest block
    tile whose grid gives every SM a block (FILL of them at least); the smallest tile when none does.
    A 128×256 tile at N = 1024 makes 32 blocks, so 100 of the H200's 132 SMs would idle."""
    M, N, sms = _whole("M (rows of C)", M), _whole("N (columns of C)", N), _whole("sms (the card's SMs)", sms)
    return next((name for name in BY_SIZE if blocks(name, M, N) >= FILL * sms), BY_SIZE[-1])


def predicted(name, M, K, N, tile=None, **constants):
    """What kernel `name` (a name here, or a Kernel of the lesson's or block-tile kind) should measure at
    M×K·K×N: global loads {'A', 'B'} and shared-memory {'reads', 'stores', 'fmas'}
    (formulas.block_tile_loads and shared_traffic at its constants)."""
    kernel = KERNELS[name] if isinstance(name, str) else name
    c = kernel.bind({**constants, **({} if tile is None else {"T": tile})})
    if kernel in (KERNELS["naive"], KERNELS["naive_unsigned"]):  # one thread per element, no tiles
        return {**formulas.naive_loads(M, K, N), "reads": 0, "stores": 0, "fmas": M * N * K}
    if "T" in c:
        c = dict(BM=c["T"], BN=c["T"], BK=c["T"], TM=1, TN=1)
    loads = formulas.block_tile_loads(M, K, N, c["BM"], c["BN"], clamped=kernel.clamped)
    return {**loads, **formulas.shared_traffic(M, K, N, c["BM"], c["BN"], c["BK"], c["TM"], c["TN"])}
