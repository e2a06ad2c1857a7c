"""Every kernel of the series by name, with its `family` ("lesson"; "fair", the lesson's two with unsigned indices;
"ladder", each rung one `idea` more; "search", tiles around its last rung; "async", "waits", "dynamic" and "split",
the rungs after it) and `kind` (how it covers C; PEERS are libraries timed beside them). `LADDER` lists the lesson's
kernels and the rungs in order; "best" is chosen per card and shape by core.best. A new rung is one `_gen` line
below with its family (`_rung`, `_search`, ...); CONTRIBUTING.md says what must follow it.
"""
from functools import partial

from . import formulas, regtile, unrolled
from .fair import naive_unsigned, tiled_unsigned
from .generated import generated
from .kernel import lesson
from .kernels import naive, tiled
from .unrolled import ASYNC, FRAGMENTS, HYBRID
from ..i18n import N_, _


def _gen(family, name, tile=(128, 128, 8, 8, 8), idea="", min_blocks=None, **options):
    """A generated kernel of `family` with block tile and thread tile `tile` = (BM, BN, BK, TM, TN)."""
    return generated(name, **dict(zip(("BM", "BN", "BK", "TM", "TN"), tile)), idea=idea, min_blocks=min_blocks,
                     family=family, **options)


_rung, _search, _async, _waits, _dynamic, _split = (partial(_gen, family) for family in ("ladder", "search", "async",
                                                                                         "waits", "dynamic", "split"))


SIMPLE = dict(transposed=True, edge="zero", loads="spread", uidx=False, prefetch=False)  # regtile_vec, unrolled
_ALL = [
    lesson(naive, "one thread per element of C; every multiply-add loads A and B from global memory", "lesson",
           kind="naive"),
    lesson(tiled, "T×T tiles in shared memory: T times fewer global loads, 2 shared reads per FMA", "lesson"),
    # the fair pair: the lesson's two with unsigned indices, so that they differ only in tiling
    lesson(naive_unsigned, "the lesson's naive kernel with unsigned indices: no wrap-around code, the fair "
                           "partner for tiling", "fair", kind="naive"),
    lesson(tiled_unsigned, "the lesson's tiled kernel with unsigned indices: what tiling buys over "
                           "naive_unsigned, index arithmetic alike", "fair"),
    regtile.regtile_1d,
    regtile.regtile_2d,
    regtile.regtile_vec,
    _rung("gen_unrolled_sA_mk", idea="fully unrolled, but A's tile not transposed: its 4 rows are no longer adjacent",
         **{**SIMPLE, "transposed": False}),
    _rung("gen_unrolled", idea="regtile_vec fully unrolled by a generator: constant shared offsets, 128-bit reads "
                              "every time", **SIMPLE),
    _rung("gen_cheap_loads", idea="clamped edges, a row of A per thread, unsigned indices: cheaper global loads",
         prefetch=False),
    _rung("gen_prefetch", idea="the next tile's global loads issued before this tile's multiply-adds"),
    _rung("gen_double", idea="two shared buffers, one barrier per step", buffers=2),
    _rung("gen_double_lb", idea="gen_double with launch bounds: at most 128 registers, 2 blocks per SM", buffers=2,
         min_blocks=2),
    _rung("gen_warp", idea="warp tiling: a warp computes a 4×8 patch of thread tiles (with launch bounds: 2 blocks "
                          "per SM)", warp=(4, 8), min_blocks=2),
    # the search: block tile and thread tile around the best rung
    _search("s_128x256x8_8x16", (128, 256, 8, 8, 16), "8×16 thread tile, 128×256 block"),
    _search("s_128x256x8_8x16_db", (128, 256, 8, 8, 16), "the same, double-buffered", buffers=2),
    _search("s_128x256x8_8x16_warp", (128, 256, 8, 8, 16), "the same, warp-tiled 4×8", warp=(4, 8)),
    _search("s_256x128x8_16x8", (256, 128, 8, 16, 8), "the same, transposed shape"),
    _search("s_128x128x8_8x16", (128, 128, 8, 8, 16), "8×16 thread tile, 128 threads"),
    _search("s_128x128x16_8x8", (128, 128, 16, 8, 8), "gen_prefetch with BK = 16"),
    _search("s_64x128x8_8x8_db", (64, 128, 8, 8, 8), "smaller block tile, double-buffered: more blocks for small N",
         buffers=2),
    _search("s_64x64x8_4x4", (64, 64, 8, 4, 4), "4×4 thread tile, 64×64 block", buffers=2),
    # asynchronous copies (core.ptx): global → shared past the registers, a pipeline of stages
    _async("a_128x256x8_8x16_warp_s2", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with cp.async: 2 stages, "
         "16-byte copies, one barrier per step", warp=(4, 8), stages=2, **ASYNC),
    _async("a_128x256x8_8x16_warp_s3", (128, 256, 8, 8, 16), "the same with 3 stages: two tiles in flight",
         warp=(4, 8), stages=3, **ASYNC),
    _async("a_128x128x8_8x8_warp_s3", (128, 128, 8, 8, 8), "cp.async, 3 stages, 128×128 block, 8×8 thread tile",
         warp=(4, 8), stages=3, **ASYNC),
    _async("a_128x128x8_8x8_warp_s4", (128, 128, 8, 8, 8), "the same with 4 stages", warp=(4, 8), stages=4, **ASYNC),
    _async("a_64x128x8_8x8_s3", (64, 128, 8, 8, 8), "cp.async, 3 stages, 64×128 block: more blocks for small N",
         stages=3, **ASYNC),
    _async("a_64x128x8_8x8_s4", (64, 128, 8, 8, 8), "the same with 4 stages", stages=4, **ASYNC),
    _async("a_64x128x16_8x8_s3", (64, 128, 16, 8, 8), "a_64x128x8_8x8_s3 with BK = 16: half the steps and "
         "barriers, 3 stages (40 KiB of shared memory)", stages=3, **ASYNC),
    # B copied asynchronously, A through registers (transposed on its way, so its reads stay 128-bit ones)
    _async("h_128x256x8_8x16_warp_s2", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with B by cp.async in 2 stages, "
         "A through registers", warp=(4, 8), stages=2, **HYBRID),
    _async("h_128x256x8_8x16_warp_s3", (128, 256, 8, 8, 16), "the same with 3 stages", warp=(4, 8), stages=3, **HYBRID),
    _async("h_128x128x8_8x8_warp_s3", (128, 128, 8, 8, 8), "B by cp.async in 3 stages, A through registers, 128×128 "
         "block", warp=(4, 8), stages=3, **HYBRID),
    _async("h_128x128x8_8x8_warp_s4", (128, 128, 8, 8, 8), "the same with 4 stages", warp=(4, 8), stages=4, **HYBRID),
    _async("h_64x128x8_8x8_s3", (64, 128, 8, 8, 8), "B by cp.async in 3 stages, A through registers, 64×128 block",
         stages=3, **HYBRID),
    _async("h_64x128x8_8x8_s4", (64, 128, 8, 8, 8), "the same with 4 stages", stages=4, **HYBRID),
    # aimed at what Nsight Compute says the fastest rung waits for (short_scoreboard: shared-memory data)
    _waits("f_128x256x8_8x16_warp", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with register fragments: each k's "
         "shared reads issued one k ahead, two shared tiles, one barrier per tile", warp=(4, 8), fragments=2,
         **FRAGMENTS),
    _waits("w_128x256x8_8x16_warp16x2", (128, 256, 8, 8, 16), "s_128x256x8_8x16_warp with each warp a 16×2 patch of "
         "thread tiles instead of 4×8: 2 distinct 16-byte reads of B per warp instead of 8", warp=(16, 2)),
    # beyond 48 KiB, in dynamic shared memory: Triton's own choices on the H200 (explore.csv: neither beat `best`)
    _dynamic("d_64x128x16_8x8_s5", (64, 128, 16, 8, 8), "a_64x128x16_8x8_s3 with 5 stages (66 KiB): Triton's tile at "
         "N = 1024", stages=5, **ASYNC),
    _dynamic("d_128x256x16_8x16_s3_w16x2", (128, 256, 16, 8, 16), "w_128x256x8_8x16_warp16x2 with BK = 16 and B by "
         "cp.async in 3 stages (74 KiB): Triton's tile at N = 4096, 256 threads like its 8 warps", warp=(16, 2),
         stages=3, **HYBRID),
    # split-K, where M×N makes too few blocks for the card (1024×8192×1024, a few dozen rows, small cubes)
    _split("k_64x128x16_8x8_s3_split2", (64, 128, 16, 8, 8), "a_64x128x16_8x8_s3 with K split in 2: twice the blocks, "
         "each adding its part into C", stages=3, splits=2, **ASYNC),
    _split("k_64x128x16_8x8_s3_split4", (64, 128, 16, 8, 8), "the same, K split in 4", stages=3, splits=4, **ASYNC),
    _split("k_64x128x16_8x8_s3_split8", (64, 128, 16, 8, 8), "the same, K split in 8", stages=3, splits=8, **ASYNC),
    _split("k_64x128x8_8x8_db_split4", (64, 128, 8, 8, 8), "s_64x128x8_8x8_db with K split in 4: no cp.async, for "
         "every card", buffers=2, splits=4),
]
KERNELS = {k.name: k for k in _ALL}  # every kernel of the series, by name
LADDER = [k.name for k in _ALL if k.family in ("lesson", "ladder")]  # the lesson's two, then each rung in order
# The search's pick when the ladder was profiled (ladder_profile.csv's "best"), not the fastest in the data
LADDER_TOP = "s_128x256x8_8x16"  # H200: 84 % of cuBLAS at N = 4096, 87 % of cuBLAS at N = 8192


def family(name):
    """Names of the kernels of family `name`, in the registry's order."""
    return [k.name for k in _ALL if k.family == name]


PEERS = {"cublas": "cuBLAS (CuPy)", "triton": "triton"}  # libraries timed beside ours: a row's kernel → its label


def kind(name):
    """The kind of the kernel a measured row names: a registry kernel's, "peer" (PEERS), or None ("best")."""
    return "peer" if name in PEERS else KERNELS[name].kind if name in KERNELS else None


def label(name, tile=None, text=_, by_name=False):
    """Kernel `name` on a page, with its tile (the fair pair as its lesson twin unless `by_name`); `text` translates."""
    if name in PEERS or f"{tile}" in ("None", "", "0", "nan", "<NA>"):  # no tile, or a table's missing value
        return PEERS.get(name, name)
    twin = not by_name and name in family("fair") and next(k for k in family("lesson") if KERNELS[k].kind == kind(name))
    named = text(N_("{kernel} ({tile}×{tile} blocks)")) if kind(name) == "naive" else "{kernel} T={tile}"
    return named.format(kernel=twin or name, tile=tile) + (text(N_(", unsigned indices")) if twin else "")


def predicted(name, M, K, N, tile=None, **constants):
    """What kernel `name` (or a Kernel) should measure at M×K·K×N: global loads {'A', 'B', 'C'} (C: split-K's adds)
    and shared {'reads', 'stores', 'fmas'}, from core.formulas at its constants."""
    kernel = KERNELS[name] if isinstance(name, str) else name
    c = kernel.bind(constants, tile)  # tile: the lesson's T, as matmul and count_loads take it
    if kernel.kind == "naive":  # one thread per element, no tiles
        return {**formulas.naive_loads(M, K, N), "C": 0, "reads": 0, "stores": 0, "fmas": M * N * K}
    c = dict(BM=c["T"], BN=c["T"], BK=c["T"], TM=1, TN=1) if "T" in c else c  # the lesson's T×T tiles
    loads = formulas.block_tile_loads(M, K, N, c["BM"], c["BN"], clamped=kernel.clamped)
    traffic = formulas.shared_traffic(M, K, N, c["BM"], c["BN"], c["BK"], c["TM"], c["TN"])
    options = {**unrolled.OPTIONS, **kernel.code.base.options}
    if options["stages"] and options["transposed"]:  # A through registers, one tile ahead: the last step stores
        traffic["stores"] += -(-M // c["BM"]) * -(-N // c["BN"]) * c["BM"] * c["BK"]  # a tile past K (zeros)
    adds = formulas.split_k_adds(M, N, c["BN"], options["splits"]) if options["splits"] > 1 else 0
    return {**loads, "C": adds, **traffic}
