"""Register tiling unrolled by a program: the upper rungs of the ladder. numba makes 128-bit shared reads of
`regtile_vec`'s loops only sometimes; `generate_source(...)` writes the kernel with every loop of a tile step unrolled,
each shared index a base plus a constant: every group of 4 is one 128-bit read. Each option adds:
  transposed   A's tile stored as sA[k, m], so a thread's 4 rows are adjacent (False: sA[m, k])
  edge         "clamp": rows of A past M read from row M-1 (columns of B past N from N-1): they feed only elements
               of C never stored, so only the K edge needs zeros; "zero": every load checks its bounds
  loads        "rows": a thread loads consecutive k of one row of A; "spread": the lesson's cooperative load
  uidx         global indices written uint64(...): numba adds no wrap-around code for negative values
  prefetch     the next tile's global loads go to registers before this tile's multiply-adds
  buffers      1: one shared tile and two barriers per step; 2: two tiles, one barrier per step
  warp         (WY, WX): a warp's 32 threads compute a WY×WX patch of thread tiles (None: whole rows)
  pad          floats added to each shared row (a multiple of 4 keeps rows 16-byte aligned)
  stages       0: tiles reach shared memory through registers; 2 to 5: a pipeline of cp.async copies (core.ptx),
               A stored as it lies; unaligned shapes and K's last partial tile take scalar loads; tiles over 48 KiB
               are views of dynamic shared memory
  fragments    2: each k's values of A and B are read one k ahead into a second set of registers
  splits       S > 1 (split-K): S blocks share each BM×BN tile of C, each adding its part of K with cuda.atomic.add
A thread's TM×TN results are TM tuples `acc0` … updated by the generated `row_fma`: numba compiles them several
times faster than TM·TN variables, to the same machine code. `Plan` computes the sizes once; one function per part
of the kernel returns its lines.
"""
from .card import DYNAMIC_SHARED_BYTES, MAX_THREADS_PER_BLOCK, STATIC_SHARED_BYTES, VEC, Shared
from .formulas import thread_tiles, threads_per_block as _threads
from .rules import Rule, enforce_all, is_whole
from ..i18n import N_, _

OPTIONS = dict(transposed=True, edge="clamp", loads="rows", uidx=True, prefetch=True, buffers=1, warp=None, pad=4,
               stages=0, fragments=1, splits=1)
ASYNC = dict(transposed=False, prefetch=False, buffers=1, edge="clamp")  # stages: A and B copied asynchronously
HYBRID = dict(transposed=True, prefetch=True, buffers=1, edge="clamp")  # stages: B copied, A through registers
FRAGMENTS = dict(transposed=True, prefetch=True, buffers=2, stages=0)  # fragments=2: shared reads one k ahead


def _a_k(BM, BN, BK, TM, TN, loads):
    """Consecutive k of one row of A that a thread loads at a time."""
    return min(BM * BK // _threads(BM, BN, TM, TN), BK) if loads == "rows" else 1


def _a_load_fits(BM, BN, BK, TM, TN, loads):
    """A's BM×BK tile splits into whole passes of rows, a_k consecutive k per thread."""
    per, a_k = BM * BK // _threads(BM, BN, TM, TN), _a_k(BM, BN, BK, TM, TN, loads)
    rows = _threads(BM, BN, TM, TN) // (BK // a_k)
    return BK % a_k == 0 and per % a_k == 0 and rows * (per // a_k) == BM


def _async_fits(BM, BN, BK, NT, copies_a=True):
    """Each pass of the NT threads copies whole rows of 16-byte pieces, the passes covering each tile exactly."""
    a_row, b_row = BK // VEC, BN // VEC
    a_fits = NT % a_row == 0 and (BM * a_row) % NT == 0
    return (a_fits or not copies_a) and NT % b_row == 0 and (BK * b_row) % NT == 0


def tile_shapes(BM, BN, BK, transposed, buffers, pad, stages):
    """(rows, cols) of the block's shared tiles sA and sB, every buffer or stage stacked along the rows."""
    copies = stages or buffers
    # A as it lies: copied rows padded to stay 16-byte aligned, else by one float
    a_shape = (copies * BK, BM + pad) if transposed else (copies * BM, BK + (VEC if stages else 1))
    return a_shape, (copies * BK, BN + pad)


def shared_memory(BM, BN, BK, transposed, buffers, pad, stages):
    """card.Shared of one block's two float32 tiles: dynamic beyond the 48 KiB a kernel may declare (`stages`)."""
    (am, ak), (bk, bn) = tile_shapes(BM, BN, BK, transposed, buffers, pad, stages)
    used = 4 * (am * ak + bk * bn)
    return Shared(used, used > STATIC_SHARED_BYTES)


def _warp_fits(warp, TYN, TXN):
    """warp = (WY, WX): 32 threads in a WY×WX patch, whole patches across the block's TYN×TXN thread tiles."""
    pair = isinstance(warp, (tuple, list)) and len(warp) == 2 and is_whole(*warp) and min(warp) >= 1
    return pair and warp[0] * warp[1] == 32 and TYN % warp[0] == 0 and TXN % warp[1] == 0


RULES = [  # what generate_source needs of the constants, in order
    Rule(lambda BM, BN, BK, TM, TN: is_whole(BM, BN, BK, TM, TN) and min(BM, BN, BK, TM, TN) > 0,
         N_("BM, BN, BK, TM and TN are positive whole numbers")),
    Rule(lambda BM, BN, TM, TN: BM % TM == 0 and BN % TN == 0, N_("a thread computes TM×TN of the block's BM×BN")),
    Rule(lambda TM, TN: TM % VEC == 0 and TN % VEC == 0,
         N_("a thread's rows and columns come in groups of 4, one 128-bit shared read each")),
    Rule(lambda BM, BN, TM, TN: _threads(BM, BN, TM, TN) % 32 == 0, N_("threads come in whole warps")),
    Rule(lambda BM, BN, TM, TN: _threads(BM, BN, TM, TN) <= MAX_THREADS_PER_BLOCK,
         N_("CUDA allows at most {most} threads per block, (BN/TN)×(BM/TM)"), (("most", MAX_THREADS_PER_BLOCK),)),
    Rule(lambda BN: BN % 32 == 0, N_("a warp loads 32 neighbouring floats of a row of B, so BN is a multiple of 32")),
    Rule(lambda BM, BN, BK, TM, TN: BK % (_threads(BM, BN, TM, TN) // 32) == 0,
         N_("a pass loads one row of B per warp, so BK is a multiple of the block's warps, (BN/TN)×(BM/TM)/32")),
    Rule(lambda BM, BN, BK, TM, TN: BM * BK % _threads(BM, BN, TM, TN) == 0,
         N_("A's BM×BK tile splits evenly over the threads")),
]
OPTION_RULES = [  # ... and of the options (with the constants), checked after RULES
    Rule(lambda transposed: isinstance(transposed, bool), N_("transposed is True or False")),
    Rule(lambda edge: edge in ("clamp", "zero"), N_("edge is 'clamp' or 'zero'")),
    Rule(lambda loads: loads in ("rows", "spread"), N_("loads is 'rows' or 'spread'")),
    Rule(lambda uidx: isinstance(uidx, bool), N_("uidx is True or False")),
    Rule(lambda prefetch: isinstance(prefetch, bool), N_("prefetch is True or False")),
    Rule(lambda buffers: buffers in (1, 2) and is_whole(buffers), N_("buffers is 1 or 2")),
    Rule(lambda pad: is_whole(pad) and pad >= 0 and pad % VEC == 0,
         N_("pad is a whole number of floats ≥ 0, a multiple of 4 to keep shared rows 16-byte aligned")),
    Rule(lambda warp, BM, BN, TM, TN: warp is None or _warp_fits(warp, BM // TM, BN // TN),
         N_("warp is None or (WY, WX) with WY·WX = 32, dividing the block's (BM/TM)×(BN/TN) thread tiles")),
    Rule(lambda fragments: fragments in (1, 2) and is_whole(fragments), N_("fragments is 1 or 2")),
    Rule(lambda fragments, transposed, prefetch, buffers, stages: fragments == 1 or (transposed, prefetch, buffers,
         stages) == (True, True, 2, 0), N_("with fragments=2, transposed=True, prefetch=True, buffers=2 and "
         "stages=0: the next tile waits in registers and goes to the other shared tile while this one is read")),
    Rule(lambda fragments, BK: fragments == 1 or BK % 2 == 0, N_("with fragments=2, BK is even: k uses register "
         "set k % 2, so every tile starts in set 0")),
    Rule(lambda stages: stages in (0, 2, 3, 4, 5) and is_whole(stages),
         N_("stages is 0 (no asynchronous copies), 2, 3, 4 or 5")),
    Rule(lambda stages, transposed, prefetch, buffers, edge: not stages or (prefetch, buffers, edge) ==
         (transposed, 1, "clamp"), N_("with stages, buffers=1 and edge='clamp' (stages replace the buffers), and "
         "prefetch=transposed: A's tile is either copied as it lies (transposed=False: the copies are the "
         "prefetch) or goes through registers to be transposed (transposed=True: prefetched there)")),
    Rule(lambda stages, BK: not stages or BK % VEC == 0, N_("with stages, BK is a multiple of 4: A's rows are "
         "copied 4 floats at a time")),
    Rule(lambda stages, transposed, BM, BN, BK, TM, TN: not stages or _async_fits(BM, BN, BK, _threads(BM, BN, TM, TN),
                                                                          copies_a=not transposed),
         N_("with stages, the 16-byte pieces of A's BM×BK and B's BK×BN tiles split evenly over the threads, "
            "whole rows of pieces per pass")),
    Rule(lambda loads, BM, BN, BK, TM, TN: _a_load_fits(BM, BN, BK, TM, TN, loads),
         N_("the threads load A's BM×BK tile in whole passes (loads='rows': min(BM·BK/threads, BK) "
            "consecutive k each, dividing BK)")),
    Rule(lambda splits, BN: is_whole(splits) and 1 <= splits <= 16 and BN % splits == 0,
         N_("splits is a whole number from 1 to 16 that divides BN (S blocks share a tile: a block's share is BN/S)")),
    Rule(lambda splits, fragments, stages, transposed: splits == 1 or (fragments == 1 and not (stages and transposed)),
         N_("with splits, fragments=1, and with stages transposed=False: those loops take a part of K")),
    Rule(lambda BM, BN, BK, transposed, buffers, pad, stages: shared_memory(BM, BN, BK, transposed, buffers, pad,
                                                                        stages).bytes <= DYNAMIC_SHARED_BYTES,
         N_("a block's shared tiles fit the {kib} KiB the largest GPUs give a block (fewer stages or buffers, a "
            "smaller BK or a smaller block tile)"), (("kib", DYNAMIC_SHARED_BYTES // 1024),)),
]


def _plus(e, c):
    """'e + c' with zeros left out, for readable generated code."""
    return str(c) if e in ("0", "") else f"{e} + {c}" if c else e


class Plan:
    """A kernel's name, constants and options (checked), and the sizes they give: all its text depends on."""

    def __init__(self, name, BM, BN, BK, TM, TN, **options):
        self.name, self.BM, self.BN, self.BK, self.TM, self.TN = name, BM, BN, BK, TM, TN
        vars(self).update(options)  # transposed, edge, loads, ...: every one of OPTIONS
        self.TXN, self.TYN = thread_tiles(BM, BN, TM, TN)  # threads along x (columns of thread tiles), along y
        self.NT = _threads(BM, BN, TM, TN)  # threads per block
        self.gm, self.gn = TM // VEC, TN // VEC  # groups of 4 rows (columns) per thread, sm rows (sn columns) apart
        self.sm, self.sn = BM // self.gm, BN // self.gn
        self.a_k = _a_k(BM, BN, BK, TM, TN, self.loads)  # A's tile: consecutive k of a row per load
        self.a_tpr = BK // self.a_k  # threads per row of A's tile; then rows per pass, passes
        self.a_rows, self.a_passes = self.NT // self.a_tpr, BM * BK // self.NT // self.a_k
        self.b_rows, self.b_cq = self.NT // 32, BN // 32  # B's: a warp loads 32 floats of a row; passes along it
        self.b_passes = BK // self.b_rows
        # (pass, k offset) of each element of A's tile a thread loads; (pass, column pass) of each of B's
        self.a_regs = [(i, q) for i in range(self.a_passes) for q in range(self.a_k)]
        self.b_regs = [(i, q) for i in range(self.b_passes) for q in range(self.b_cq)]
        self.a_shape, self.b_shape = tile_shapes(BM, BN, BK, self.transposed, self.buffers, self.pad, self.stages)
        self.kend, self.klen = ("kend", "kend - kbase") if self.splits > 1 else ("K", "K")  # the block's part of K

    def index(self, e):
        """A global index as written: uint64(e) with uidx."""
        return f"uint64({e})" if self.uidx else e

    def k(self, e):
        """k = e steps into the block's part of K: kbase + e with splits, else e."""
        return e if self.splits == 1 else "kbase" if e == "0" else _plus("kbase", e)


def declarations(p):
    """The kernel's signature, what it is, and its shared tiles."""
    L = [f"def {p.name}(A, B, C):",
         f"    # Block tile {p.BM}x{p.BN}, steps of BK={p.BK}, thread tile {p.TM}x{p.TN}, blockDim = ({p.TXN}, "
         f"{p.TYN}) = {p.NT} threads."]
    L.append("    # sA[k, m] is A's tile transposed: a thread's 4 rows of a step are adjacent, one float4."
             if p.transposed else "    # sA[m, k]: A's tile as it lies in A.")
    if p.buffers == 2:
        L.append("    # Two buffers stacked along the first axis: one is filled while the other is read.")
    if p.stages:
        L.append(f"    # {p.stages} stages stacked along the first axis: tiles copied asynchronously, {p.stages - 1} in flight.")
    L += [f"    # Rows padded by {p.pad} floats: a row length that is not a power of two lets NVVM see that the",
          "    # 4 loads of a group are adjacent (with 128-float rows it fuses fewer of them)."]
    used, dynamic = shared_memory(p.BM, p.BN, p.BK, p.transposed, p.buffers, p.pad, p.stages)
    if not dynamic:
        return L + [f"    sA = cuda.shared.array({p.a_shape}, float32, alignment=16)",
                    f"    sB = cuda.shared.array({p.b_shape}, float32, alignment=16)"]
    return L + [f"    # {used:,} bytes of tiles, more than the {STATIC_SHARED_BYTES // 1024} KiB a kernel may declare: "
                "dynamic shared memory, reserved by each", "    # launch; sA and sB are 2-D views of it, one after the other.",
                "    smem = cuda.shared.array(0, float32, alignment=16)",
                f"    sA = shared_view(smem, 0, {p.a_shape[0]}, {p.a_shape[1]})",
                f"    sB = shared_view(smem, {p.a_shape[0] * p.a_shape[1]}, {p.b_shape[0]}, {p.b_shape[1]})"]


def thread_indices(p):
    """threadIdx, the thread's linear id, and which thread tile of the block it computes."""
    L = ["    tx = cuda.threadIdx.x", "    ty = cuda.threadIdx.y", f"    tid = ty * {p.TXN} + tx"]
    if not p.warp:
        return L + ["    ty_c = ty  # this thread's tile row", "    tx_c = tx  # this thread's tile column"]
    wy, wx = p.warp
    return L + [f"    # Warp tiling: warp w computes a {wy}x{wx} patch of thread tiles instead of "
                f"{max(32 // p.TXN, 1)} whole row(s) of them,",
                "    # so each warp-wide shared load touches fewer distinct addresses.",
                "    lane = tid % 32",
                "    wid = tid // 32",
                f"    ty_c = (wid // {p.TXN // wx}) * {wy} + lane // {wx}  # this thread's tile row",
                f"    tx_c = (wid % {p.TXN // wx}) * {wx} + lane % {wx}  # this thread's tile column"]


def block_origin(p):
    """The sizes, the block tile's first row and column of C, and the thread's rows and columns in it."""
    rows = f", then the same {p.sm} further" if p.gm > 1 else ""
    cols = f", then the same {p.sn} further" if p.gn > 1 else ""
    return ["    M, K = A.shape", "    N = B.shape[1]", f"    row0 = cuda.blockIdx.y * {p.BM}",
            *(split_part(p) if p.splits > 1 else [f"    col0 = cuda.blockIdx.x * {p.BN}"]),
            f"    ra = ty_c * {VEC}  # this thread's rows: ra + 0..3" + rows,
            f"    cb = tx_c * {VEC}  # this thread's columns: cb + 0..3" + cols]


def split_part(p):
    """With splits: the block's tile of C and its part of K's steps."""
    S = p.splits
    return [f"    # Split-K: {S} neighbouring blocks share each {p.BM}x{p.BN} tile of C, each adding its part of K.",
            f"    tile_x = cuda.blockIdx.x // {S}", f"    col0 = tile_x * {p.BN}",
            f"    parts = min({S}, cuda.gridDim.x - tile_x * {S})  # the last column of tiles may have fewer",
            f"    part = cuda.blockIdx.x % {S}",
            f"    steps = (K + {p.BK - 1}) // {p.BK}  # steps of BK along all of K",
            f"    kbase = (part * steps // parts) * {p.BK}  # this block's part of K: from kbase ...",
            f"    kend = min(K, ((part + 1) * steps // parts) * {p.BK})  # ... to kend"]


def load_indices(p):
    """Where in A's and B's tiles the thread's cooperative loads start."""
    if p.a_tpr > 1:
        more = f" (+{p.a_rows} per pass)" if p.a_passes > 1 else ""
        L = [f"    am = tid // {p.a_tpr}  # A's tile: row am{more}, columns ak .. ak+{p.a_k - 1}",
             f"    ak = (tid % {p.a_tpr}) * {p.a_k}" if p.a_k > 1 else f"    ak = tid % {p.a_tpr}"]
    else:
        L = [f"    am = tid  # A's tile: row am (+{p.a_rows} per pass), all {p.BK} columns", "    ak = 0"]
    more = f" (+{p.b_rows} per pass)" if p.b_passes > 1 else ""
    return L + [f"    bk = tid // 32  # B's tile: row bk{more}, columns bn + 32q (q < {p.b_cq}): "
                "a warp reads 128 bytes", "    bn = tid % 32"]


def clamped_edges(p):
    """With edge='clamp': the rows of A and columns of B the thread loads, clamped to the last one."""
    if p.edge != "clamp":
        return []
    return (["    # Rows of A past M only feed rows of C past M, which are never stored: read row M-1 instead.",
             "    # Likewise columns of B past N. Only the K edge must read as zero."]
            + [f"    ar_{i} = min({_plus('row0 + am', i * p.a_rows)}, M - 1)" for i in range(p.a_passes)]
            + [f"    bc_{q} = min({_plus('col0 + bn', 32 * q)}, N - 1)" for q in range(p.b_cq)])


def accumulators(p):
    """The thread's TM×TN results, zero: one tuple per row."""
    return (["    zero = float32(0.0)", f"    # acc<i> holds the thread's results of row i: a tuple of {p.TN} floats "
             "in registers."] + [f"    acc{i} = (" + ", ".join(["zero"] * p.TN) + ")" for i in range(p.TM)])


def _guarded(load, conds):
    """`load`, or zero where a bounds check fails."""
    return f"{load} if {' and '.join(conds)} else float32(0.0)" if conds else load


def global_load_a(p, i, q, kx, guard):
    """A's element of pass i, k offset q, in the tile at k = kx (guard: check the K edge)."""
    r = f"ar_{i}" if p.edge == "clamp" else _plus("row0 + am", i * p.a_rows)
    k = _plus(_plus(kx, "ak"), q)
    conds = ([] if p.edge == "clamp" else [f"{r} < M"]) + ([f"{k} < {p.kend}"] if guard else [])
    return _guarded(f"A[{p.index(r)}, {p.index(k)}]", conds)


def global_load_b(p, i, q, kx, guard):
    """B's element of pass i, column pass q, in the tile at k = kx (guard: check the K edge)."""
    r = _plus(_plus(kx, "bk"), i * p.b_rows)
    c = f"bc_{q}" if p.edge == "clamp" else _plus("col0 + bn", 32 * q)
    conds = ([f"{r} < {p.kend}"] if guard else []) + ([] if p.edge == "clamp" else [f"{c} < N"])
    return _guarded(f"B[{p.index(r)}, {p.index(c)}]", conds)


def shared_store_a(p, i, q, value, h):
    """Store `value` as A's element of pass i, k offset q, in shared buffer h."""
    m = _plus("am", i * p.a_rows)
    if p.transposed:
        return f"sA[{_plus(_plus('ak', q), h * p.BK)}, {m}] = {value}"
    return f"sA[{_plus(m, h * p.BM)}, {_plus('ak', q)}] = {value}"


def shared_store_b(p, i, q, value, h):
    """Store `value` as B's element of pass i, column pass q, in shared buffer h."""
    return f"sB[{_plus('bk', i * p.b_rows + h * p.BK)}, {_plus('bn', 32 * q)}] = {value}"


def _tile_loads(p, ind, kx, to_registers, h, guard, b_too=True):
    """One global load per element the thread brings of the tile at k = kx, into pa_*/pb_* or shared."""
    a = [f"pa_{i}_{q} = {global_load_a(p, i, q, kx, guard)}" if to_registers
         else shared_store_a(p, i, q, global_load_a(p, i, q, kx, guard), h) for i, q in p.a_regs]
    b = [f"pb_{i}_{q} = {global_load_b(p, i, q, kx, guard)}" if to_registers
         else shared_store_b(p, i, q, global_load_b(p, i, q, kx, guard), h) for i, q in p.b_regs] if b_too else []
    return [ind + line for line in a + b]


def tile_loads(p, ind, kx, to_registers, h, b_too=True):
    """The global loads of the tile at k = kx; with edge='clamp', checked against K only in the last tile."""
    if p.edge != "clamp":
        return _tile_loads(p, ind, kx, to_registers, h, guard=True, b_too=b_too)
    return ([f"{ind}if {_plus(kx, p.BK)} <= {p.kend}:  # the whole tile lies inside K: no checks"]
            + _tile_loads(p, ind + "    ", kx, to_registers, h, guard=False, b_too=b_too)
            + [f"{ind}else:  # the last, partial tile: columns of A / rows of B past K read as 0"]
            + _tile_loads(p, ind + "    ", kx, to_registers, h, guard=True, b_too=b_too))


def shared_stores(p, ind, h):
    """The prefetched registers pa_*, pb_* stored to shared buffer h."""
    return ([ind + shared_store_a(p, i, q, f"pa_{i}_{q}", h) for i, q in p.a_regs]
            + [ind + shared_store_b(p, i, q, f"pb_{i}_{q}", h) for i, q in p.b_regs])


def b_values(p, row):
    """The thread's TN values of B in row `row` of sB, as a tuple's text: groups of 4, sn columns apart."""
    return ", ".join(f"sB[{row}, {_plus('cb', g * p.sn + v)}]" for g in range(p.gn) for v in range(VEC))


def thread_row(p, i):
    """The thread's row i within the block tile (of A's tile, of C's): groups of 4 adjacent rows, sm apart."""
    return _plus("ra", (i // VEC) * p.sm + i % VEC)


def multiply_adds(p, ind, k, ka, kb, h=0):
    """Step k: B's values from row kb of sB, then one row_fma per row (A from row ka of sA, or column k)."""
    L = [f"{ind}b = ({b_values(p, kb)})  # step k = {k}: the thread's {p.TN} values of B"]
    for i in range(p.TM):
        a = f"sA[{ka}, {thread_row(p, i)}]" if p.transposed else f"sA[{_plus(thread_row(p, i), h * p.BM)}, {k}]"
        L.append(f"{ind}acc{i} = row_fma(acc{i}, {a}, b)")
    return L


def tile_step(p, h):
    """One trip's step through shared buffer h: fill it, wait, multiply, (one buffer) wait again."""
    ind = "        "
    L = [f"{ind}k0 = {p.k(f't * {p.buffers * p.BK}')}" + (f" + {h * p.BK}" if h else "")]
    if h == 1:
        L.append(f"{ind}if k0 < {p.kend}:  # the second step of the last trip may lie past K")
        ind += "    "
    if p.prefetch:
        L += shared_stores(p, ind, h)
        L.append(f"{ind}cuda.syncthreads()  # the tile is complete before anyone multiplies")
        L.append(f"{ind}k1 = k0 + {p.BK}  # next tile: issue its loads now, use them after the multiply")
        L += tile_loads(p, ind, "k1", True, h)
    else:
        L += tile_loads(p, ind, "k0", False, h)
        L.append(f"{ind}cuda.syncthreads()  # the tile is complete before anyone multiplies")
    L += [line for k in range(p.BK) for line in multiply_adds(p, ind, k, h * p.BK + k, h * p.BK + k, h)]
    if p.buffers == 1:
        L.append(f"{ind}cuda.syncthreads()  # nobody overwrites the tile while a neighbour still reads it")
    return L


def main_loop(p):
    """The loop over K's tiles, with the first tile's prefetch before it."""
    L = (["    # uint64(...) indices: numba guards a signed index against negative (wrap-around) values",
          "    # with extra instructions; an unsigned one needs no guard."] if p.uidx else [])
    if p.prefetch:
        L.append("    # Registers pa_*, pb_* hold the next tile: its global loads are in flight during the multiply.")
        L += tile_loads(p, "    ", p.k("0"), True, 0)
    step = p.buffers * p.BK
    L.append(f"    for t in range(({p.klen} + {step - 1}) // {step}):"
             + ("  # two tile steps per trip: buffer 0, then buffer 1" if p.buffers == 2 else ""))
    L += [line for h in range(p.buffers) for line in tile_step(p, h)]
    if p.buffers == 2:
        L += ["        # One barrier per step is enough: a buffer is refilled only after the next step's",
              "        # barrier, which every thread reaches after it finished reading that buffer."]
    return L


def _async_passes(p):
    """(passes, rows per pass) of the 16-byte pieces of A's tile, and of B's."""
    a_row, b_row = p.BK // VEC, p.BN // VEC
    return (p.BM * a_row // p.NT, p.NT // a_row), (p.BK * b_row // p.NT, p.NT // b_row)


def async_indices(p):
    """Which 16-byte pieces of A's and B's tiles the thread copies (B's only, with A through registers)."""
    a_row, b_row = p.BK // VEC, p.BN // VEC
    (a_passes, a_step), (b_passes, b_step) = _async_passes(p)
    if p.transposed:  # A: as the register path loads it
        L = load_indices(p)[:2] + [f"    ar_{i} = min({_plus('row0 + am', i * p.a_rows)}, M - 1)" for i in range(p.a_passes)]
    else:
        L = [f"    am = tid // {a_row}  # A's tile: row am" + (f" (+{a_step} per pass)" if a_passes > 1 else "")
             + f", columns ak .. ak+3", f"    ak = (tid % {a_row}) * {VEC}"]
    L += [f"    bk = tid // {b_row}  # B's tile: row bk" + (f" (+{b_step} per pass)" if b_passes > 1 else "")
         + ", columns bn .. bn+3: neighbouring threads copy neighbouring 16 bytes", f"    bn = (tid % {b_row}) * {VEC}",
         "    # Rows of A past M only feed rows of C past M, which are never stored: read row M-1 instead;",
         "    # likewise columns of B past N. Only the K edge must read as zero.",
         "    aligned = K % 4 == 0 and N % 4 == 0  # every row starts on a 16-byte boundary: copies allowed"]
    if not p.transposed:
        L += [f"    ar_{i} = min({_plus('row0 + am', i * a_step)}, M - 1)" for i in range(a_passes)]
    L += ["    bc = min(col0 + bn, N - 4)  # the piece's first column (used when aligned: then N >= 4)"]
    L += [f"    bc_{q} = min({_plus('col0 + bn', q)}, N - 1)  # column of element q, for the scalar path"
          for q in range(VEC)]
    return L


def async_tile(p, ind, kx, fa, fb):
    """The tile at k = kx into the stage at rows fa (A), fb (B): 16-byte copies, or scalar loads (zero past K)."""
    (a_passes, a_step), (b_passes, b_step) = _async_passes(p)
    a_passes = 0 if p.transposed else a_passes  # transposed: A goes through registers (tile_loads, a_to_shared)
    sa = lambda i: _plus(fa, _plus("am", i * a_step))  # noqa: E731  pass i's row in sA
    sb = lambda i: _plus(fb, _plus("bk", i * b_step))  # noqa: E731  pass i's row in sB
    kb = lambda i: _plus(kx, _plus("bk", i * b_step))  # noqa: E731  pass i's row (k) in B
    copies = [f"{ind}    cp_async4(sA, {sa(i)}, ak, A, ar_{i}, {_plus(kx, 'ak')})" for i in range(a_passes)]
    copies += [f"{ind}    cp_async4(sB, {sb(i)}, bn, B, {kb(i)}, bc)" for i in range(b_passes)]
    scalar = [f"{ind}    sA[{sa(i)}, {_plus('ak', q)}] = {global_load_a(p, i, q, kx, guard=True)}"
              for i in range(a_passes) for q in range(VEC)]
    scalar += [f"{ind}    sB[{sb(i)}, {_plus('bn', q)}] = " + _guarded(f"B[{p.index(kb(i))}, {p.index(f'bc_{q}')}]",
                                                                      [f"{kb(i)} < {p.kend}"])
               for i in range(b_passes) for q in range(VEC)]
    return ([f"{ind}if aligned and {_plus(kx, p.BK)} <= {p.kend}:  # 16-byte copies, global → shared, past the "
             "registers"]
            + copies + [f"{ind}else:  # rows not 16-byte aligned, or the last partial tile: plain loads, zero past K"]
            + scalar)


def async_multiply_adds(p, ind):
    """The tile in the stage at rows sa, sb: per 4 k one 128-bit read per row of A, per k B's values and row_fmas."""
    L = []
    for g in range(p.BK // VEC):
        for i in range(p.TM):
            r = _plus("sa", thread_row(p, i))
            L.append(f"{ind}a{i} = (" + ", ".join(f"sA[{r}, {VEC * g + v}]" for v in range(VEC))
                     + f")  # row {i}, k = {VEC * g} .. {VEC * g + 3}")
        for v in range(VEC):
            k = VEC * g + v
            L.append(f"{ind}b = ({b_values(p, _plus('sb', k))})  # step k = {k}: the thread's {p.TN} values of B")
            L += [f"{ind}acc{i} = row_fma(acc{i}, a{i}[{v}], b)" for i in range(p.TM)]
    return L


def a_to_shared(p, ind, fa):
    """The registers pa_* (A's next tile) stored transposed into the stage whose rows of sA start at fa."""
    return [f"{ind}sA[{_plus(fa, _plus('ak', q))}, {_plus('am', i * p.a_rows)}] = pa_{i}_{q}" for i, q in p.a_regs]


def pipeline_loop(p):
    """stages-1 tiles in flight; per tile: wait, barrier, start the next into the freed stage, multiply."""
    S, BK, ind = p.stages, p.BK, "        "
    if p.transposed:
        L = ["    # A's first tile through registers into stage 0, its second into registers; B's first "
             f"{S - 1} tiles copied."]
        L += (tile_loads(p, "    ", "0", True, 0, b_too=False) + a_to_shared(p, "    ", "0")
              + tile_loads(p, "    ", str(BK), True, 0, b_too=False))
    else:
        L = [f"    # The first {S - 1} tiles start on their way before the loop; each is one commit group."]
    for s in range(S - 1):
        k = p.k(str(s * BK))
        L += [f"    if {k} < {p.kend}:", *async_tile(p, ind, k, str(s * p.BM), str(s * BK)),
              "    cp_async_commit()"]
    L.append(f"    for t in range(({p.klen} + {BK - 1}) // {BK}):")
    if p.transposed:
        L += [f"{ind}cp_async_wait({S - 2})  # B's tile t has landed, for this thread",
              f"{ind}cuda.syncthreads()  # ... and for every thread; A's tile t is stored; tile t-1 is finished",
              f"{ind}na = ((t + 1) % {S}) * {BK}  # A's tile t+1 goes to its stage now, read after the next barrier",
              *a_to_shared(p, ind, "na"),
              f"{ind}k2 = (t + 2) * {BK}  # A's tile t+2 into registers: in flight during the multiply",
              *tile_loads(p, ind, "k2", True, 0, b_too=False),
              f"{ind}nxt = ((t + {S - 1}) % {S}) * {BK}  # B's tile t+{S - 1} into the stage tile t-1 used"]
        stage = ("", "nxt")  # rows of sA (A is not copied), of sB
    else:
        L += [f"{ind}cp_async_wait({S - 2})  # all but the {S - 2} newest groups have landed: tile t, for this thread",
              f"{ind}cuda.syncthreads()  # ... and for every thread; and everyone has finished tile t-1",
              f"{ind}nxt = (t + {S - 1}) % {S}  # the stage tile t-1 used: free now, so tile t+{S - 1} goes there"]
        stage = (f"nxt * {p.BM}", f"nxt * {BK}")
    L += [f"{ind}k1 = {p.k(f'(t + {S - 1}) * {BK}')}", f"{ind}if k1 < {p.kend}:",
          *async_tile(p, ind + "    ", "k1", *stage),
          f"{ind}cp_async_commit()  # one group per step, empty or not: the wait above counts groups"]
    if p.transposed:
        L += [f"{ind}sa = (t % {S}) * {BK}  # tile t's stage: rows of sA", f"{ind}sb = sa  # ... and of sB"]
        return L + [line for k in range(BK) for line in multiply_adds(p, ind, k, _plus("sa", k), _plus("sb", k))]
    return L + [f"{ind}sa = (t % {S}) * {p.BM}  # tile t's stage: rows of sA",
                f"{ind}sb = (t % {S}) * {BK}  # ... and of sB"] + async_multiply_adds(p, ind)


def fragment_loads(p, ind, h, k, s, note=""):
    """Register set s (a<s>, b<s>): the thread's values of A and B at step k of shared tile h."""
    row = h * p.BK + k
    a = ", ".join(f"sA[{row}, {thread_row(p, i)}]" for i in range(p.TM))
    return [f"{ind}a{s} = ({a})  # k = {k}{note}: {p.TM} values of A",
            f"{ind}b{s} = ({b_values(p, row)})  # ... and {p.TN} of B"]


def fragment_fmas(p, ind, s):
    """The thread's TM×TN multiply-adds with register set s."""
    return [f"{ind}acc{i} = row_fma(acc{i}, a{s}[{i}], b{s})" for i in range(p.TM)]


def fragment_step(p, ind, h, kx):
    """Shared tile h, each k read one k ahead; the next tile (at kx) loaded first, stored into tile 1-h, read early."""
    L = tile_loads(p, ind, kx, True, 0)
    for k in range(p.BK - 1):
        L += fragment_loads(p, ind, h, k + 1, (k + 1) % 2) + fragment_fmas(p, ind, k % 2)
    L += [f"{ind}if {kx} < K:  # the next tile into the other shared tile, read after the barrier"]
    L += shared_stores(p, ind + "    ", 1 - h)
    L += [f"{ind}cuda.syncthreads()  # the next tile is complete; this one is no longer read (its last k is"
          " in registers)", f"{ind}if {kx} < K:"]
    return L + fragment_loads(p, ind + "    ", 1 - h, 0, 0, " of the next tile") + fragment_fmas(p, ind, 1)


def fragment_main_loop(p):
    """fragments=2: two tiles per trip (shared tiles 0 and 1, so every shared offset is a constant)."""
    L = ["    # Tile 0: global loads into registers, then into shared tile 0; its first k into registers a0, b0."]
    L += tile_loads(p, "    ", "0", True, 0) + shared_stores(p, "    ", 0)
    L += ["    cuda.syncthreads()"] + fragment_loads(p, "    ", 0, 0, 0)
    L += [f"    for t in range((K + {2 * p.BK - 1}) // {2 * p.BK}):  # two tiles per trip: shared tile 0, then 1",
          f"        k1 = t * {2 * p.BK} + {p.BK}  # the tile after this trip's first"]
    L += fragment_step(p, "        ", 0, "k1")
    L += ["        if k1 < K:  # the trip's second tile (the last trip's may lie past K)",
          f"            k2 = k1 + {p.BK}"]
    L += fragment_step(p, "            ", 1, "k2")
    return L + ["        # One barrier per tile is enough: a shared tile is refilled only after the barrier that",
                "        # follows the last read of it (its last k went to registers before that barrier)."]


def write_back(p):
    """The TM×TN results stored to C, skipping rows and columns past its edges."""
    L = ["    # Store the TM×TN results; rows and columns past the edges of C are skipped."
         + (" Each is added into C: the blocks of one tile add their parts." if p.splits > 1 else "")]
    for i in range(p.TM):
        L += [f"    row = row0 + {thread_row(p, i)}", "    if row < M:"]
        for j in range(p.TN):
            c = _plus("col0 + cb", (j // VEC) * p.sn + j % VEC)
            store = f"cuda.atomic.add(C, (row, {c}), acc{i}[{j}])" if p.splits > 1 else f"C[row, {c}] = acc{i}[{j}]"
            L += [f"        if {c} < N:", f"            {store}"]
    return L


def with_defaults(options):
    """OPTIONS with `options` in their place; a ValueError naming an option generate_source does not take."""
    if unknown := set(options) - set(OPTIONS):
        raise ValueError(_("unknown options {unknown}; generate_source takes {options}").format(
            unknown=sorted(unknown), options=", ".join(OPTIONS)))
    return {**OPTIONS, **options}


def generate_source(BM=128, BN=128, BK=8, TM=8, TN=8, name="unrolled", **options):
    """The text of kernel `name(A, B, C)` for these constants and options (OPTIONS unless given)."""
    constants, options = dict(BM=BM, BN=BN, BK=BK, TM=TM, TN=TN), with_defaults(options)
    enforce_all(RULES, constants, name)
    enforce_all(OPTION_RULES, {**constants, **options}, name)
    p = Plan(name, **constants, **options)
    indices = (async_indices,) if p.stages else (load_indices, clamped_edges)
    loop = fragment_main_loop if p.fragments == 2 else pipeline_loop if p.stages else main_loop
    parts = (declarations, thread_indices, block_origin, *indices, accumulators, loop, write_back)
    return "\n".join(line for part in parts for line in part(p)) + "\n"


def generate_helpers(TN=8):
    """Source of the device function the kernel calls TM times per k: one row of the thread tile gets a·b added."""
    terms = "".join(f"        acc[{j}] + a * b[{j}],\n" for j in range(TN))
    return (f"def row_fma(acc, a, b):\n"
            f"    # acc: {TN} results of one row of the thread tile; a: this row's value of A at step k;\n"
            f"    # b: the thread's {TN} values of B at step k. Returns the row with a * b added.\n"
            f"    return (\n{terms}    )\n")
