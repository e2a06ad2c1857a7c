"""Register tiling, unrolled by a program: the upper rungs of the ladder.

`regtile_vec` leaves its inner loops to numba's compiler, and what the compiler makes of them
depends on details far from the loop (one changed index form in the cooperative load turned its
128-bit shared reads back into 32-bit ones). Here a plain Python function, `generate_source`, writes
the kernel out with every loop inside a tile step already unrolled: each shared-memory index is a
per-thread base plus a constant, so every group of 4 is provably adjacent and aligned and always
becomes one 128-bit read. `generate_source(...)` returns the text; read it, it is the kernel.

Each rung adds one idea (the options of `generate_source`):
  transposed   A's tile stored as sA[k, m], so a thread's 4 rows are adjacent (False: sA[m, k])
  edge         "clamp": rows of A past M are read from row M-1 (and columns of B past N from N-1);
               they only feed elements of C that are never stored, so only the K edge needs zeros,
               in a code path of its own. "zero": every load checks its own bounds, as in the lesson
  loads        "rows": a thread loads consecutive k of one row of A (one address, constant offsets);
               "spread": neighbouring threads load neighbouring k (the lesson's cooperative load)
  uidx         global indices written uint64(...): numba adds no wrap-around code for negative values
  prefetch     the next tile's global loads go to registers before this tile is multiplied, so they
               are in flight while the multiply-adds run
  buffers      1: one shared tile and two barriers per step; 2: two tiles, one barrier per step
  warp         (WY, WX): a warp's 32 threads compute a WY×WX patch of thread tiles (None: whole rows)
  pad          floats added to each shared row (a multiple of 4 keeps rows 16-byte aligned)

The thread's TM×TN results are TM tuples, `acc0` … (one per row), updated by the generated device
function `row_fma` (`generate_helpers`): numba compiles a tuple per row several times faster than
TM·TN separate variables, to the same machine code. Launch: a BM×BN tile of C per block,
(BN/TN)×(BM/TM) threads, as for the hand-written kernels. `unrolled(name, **options)` makes a kernel
from a set of options; building it at other constants (`specialize`, `matmul(..., BM=64)`) writes
its source again. Generated source is kept in linecache under a name of its own, so `inspect`, the
counting lab and `show()` read it like any kernel's.
"""

VEC = 4  # floats in one 128-bit shared load
OPTIONS = dict(transposed=True, edge="clamp", loads="rows", uidx=True, prefetch=True, buffers=1, warp=None, pad=4)
RULES = ()  # conditions on BM, BN, BK, TM, TN (core.rules.Rule); generate_source checks its own for now


def _plus(e, c):
    """'e + c' with zeros left out, for readable generated code."""
    if e in ("0", ""):
        return str(c)
    return f"{e} + {c}" if c else e


def _need(condition, why):
    if not condition:
        raise ValueError(why)


def generate_source(BM=128, BN=128, BK=8, TM=8, TN=8, transposed=True, edge="clamp", loads="rows", uidx=True,
                    prefetch=True, buffers=1, warp=None, pad=4, name="unrolled"):
    """The text of kernel `name(A, B, C)` for these constants and options; a pure function of them."""
    TXN, TYN = BN // TN, BM // TM  # threads along x (column groups) and y (row groups)
    NT = TXN * TYN
    _need(BM % TM == 0 and BN % TN == 0 and TM % VEC == 0 and TN % VEC == 0,
          f"BM={BM}, BN={BN}, TM={TM}, TN={TN}: TM and TN must be multiples of 4 dividing BM and BN")
    _need(NT % 32 == 0 and NT <= 1024, f"{NT} threads per block: a whole number of warps, at most 1024")
    _need(edge in ("clamp", "zero") and loads in ("rows", "spread") and buffers in (1, 2),
          f"edge={edge!r}, loads={loads!r}, buffers={buffers!r}: edge is 'clamp' or 'zero', loads 'rows' or "
          "'spread', buffers 1 or 2")
    _need(pad % VEC == 0, f"pad={pad}: a multiple of 4 keeps shared rows 16-byte aligned")
    gm, gn = TM // VEC, TN // VEC    # groups of 4 per thread along rows / columns
    sm, sn = BM // gm, BN // gn      # distance between a thread's groups
    nbuf = buffers
    # Cooperative load of A's BM×BK tile: a_per elements per thread, a_k consecutive k at a time.
    a_per = BM * BK // NT
    _need(a_per * NT == BM * BK, f"A's {BM}×{BK} tile does not split evenly over {NT} threads")
    a_k = min(a_per, BK) if loads == "rows" else 1
    _need(BK % a_k == 0 and a_per % a_k == 0, f"BK={BK}: a thread's {a_k} consecutive k must divide the tile")
    a_tpr = BK // a_k                # threads per row of the tile
    a_rows = NT // a_tpr             # rows covered by one pass
    a_passes = a_per // a_k
    _need(a_rows * a_passes == BM, f"{NT} threads cannot cover A's {BM}×{BK} tile in whole passes")
    # Cooperative load of B's BK×BN tile: a warp reads 32 neighbouring floats of one row (128 bytes).
    _need(BN % 32 == 0, f"BN={BN}: a warp loads 32 neighbouring floats of B, so BN must be a multiple of 32")
    b_rows = NT // 32                # rows covered by one pass
    b_cq = BN // 32                  # passes along a row, 32 columns apart
    _need(BK % b_rows == 0, f"BK={BK}: the block's {NT} threads load {b_rows} rows of B at a time, "
                            f"so BK must be a multiple of {b_rows}")
    b_passes = BK // b_rows
    U = (lambda e: f"uint64({e})") if uidx else (lambda e: e)
    a_shape = (nbuf * BK, BM + pad) if transposed else (nbuf * BM, BK + 1)
    b_shape = (nbuf * BK, BN + pad)

    L = []
    w = L.append
    w(f"def {name}(A, B, C):")
    w(f"    # Block tile {BM}x{BN}, steps of BK={BK}, thread tile {TM}x{TN}, blockDim = ({TXN}, {TYN}) "
      f"= {NT} threads.")
    if transposed:
        w("    # sA[k, m] is A's tile transposed: a thread's 4 rows of a step are adjacent, one float4.")
    else:
        w("    # sA[m, k]: A's tile as it lies in A.")
    if nbuf == 2:
        w("    # Two buffers stacked along the first axis: one is filled while the other is read.")
    w(f"    # Rows padded by {pad} floats: a row length that is not a power of two lets NVVM see that the")
    w("    # 4 loads of a group are adjacent (with 128-float rows it fuses fewer of them).")
    w(f"    sA = cuda.shared.array({a_shape}, float32, alignment=16)")
    w(f"    sB = cuda.shared.array({b_shape}, float32, alignment=16)")
    w("    tx = cuda.threadIdx.x")
    w("    ty = cuda.threadIdx.y")
    w(f"    tid = ty * {TXN} + tx")
    if warp:
        wy, wx = warp
        _need(wy * wx == 32 and TXN % wx == 0 and TYN % wy == 0,
              f"warp={warp}: WY·WX must be 32 and divide the block's {TYN}×{TXN} thread tiles")
        w(f"    # Warp tiling: warp w computes a {wy}x{wx} patch of thread tiles instead of "
          f"{max(32 // TXN, 1)} whole row(s) of them,")
        w("    # so each warp-wide shared load touches fewer distinct addresses.")
        w("    lane = tid % 32")
        w("    wid = tid // 32")
        w(f"    ty_c = (wid // {TXN // wx}) * {wy} + lane // {wx}  # this thread's tile row")
        w(f"    tx_c = (wid % {TXN // wx}) * {wx} + lane % {wx}  # this thread's tile column")
    else:
        w("    ty_c = ty  # this thread's tile row")
        w("    tx_c = tx  # this thread's tile column")
    w("    M, K = A.shape")
    w("    N = B.shape[1]")
    w(f"    row0 = cuda.blockIdx.y * {BM}")
    w(f"    col0 = cuda.blockIdx.x * {BN}")
    w(f"    ra = ty_c * {VEC}  # this thread's rows: ra + 0..3" + (f", then the same {sm} further" if gm > 1 else ""))
    w(f"    cb = tx_c * {VEC}  # this thread's columns: cb + 0..3" + (f", then the same {sn} further" if gn > 1 else ""))
    if a_tpr > 1:
        more = f" (+{a_rows} per pass)" if a_passes > 1 else ""
        w(f"    am = tid // {a_tpr}  # A's tile: row am{more}, columns ak .. ak+{a_k - 1}")
        w(f"    ak = (tid % {a_tpr}) * {a_k}" if a_k > 1 else f"    ak = tid % {a_tpr}")
    else:
        w(f"    am = tid  # A's tile: row am (+{a_rows} per pass), all {BK} columns")
        w("    ak = 0")
    more = f" (+{b_rows} per pass)" if b_passes > 1 else ""
    w(f"    bk = tid // 32  # B's tile: row bk{more}, columns bn + 32q (q < {b_cq}): a warp reads 128 bytes")
    w("    bn = tid % 32")
    if edge == "clamp":
        w("    # Rows of A past M only feed rows of C past M, which are never stored: read row M-1 instead.")
        w("    # Likewise columns of B past N. Only the K edge must read as zero.")
        for p in range(a_passes):
            w(f"    ar_{p} = min({_plus('row0 + am', p * a_rows)}, M - 1)")
        for q in range(b_cq):
            w(f"    bc_{q} = min({_plus('col0 + bn', 32 * q)}, N - 1)")
    w("    zero = float32(0.0)")
    w(f"    # acc<i> holds the thread's results of row i: a tuple of {TN} floats in registers.")
    for i in range(TM):
        w(f"    acc{i} = (" + ", ".join(["zero"] * TN) + ")")

    # --- pieces of code ---------------------------------------------------------------------------
    a_regs = [(p, q) for p in range(a_passes) for q in range(a_k)]
    b_regs = [(p, q) for p in range(b_passes) for q in range(b_cq)]

    def arow(p):
        return f"ar_{p}" if edge == "clamp" else _plus("row0 + am", p * a_rows)

    def bcol(q):
        return f"bc_{q}" if edge == "clamp" else _plus("col0 + bn", 32 * q)

    def a_val(p, q, kx, guard):
        r, k = arow(p), _plus(_plus(kx, "ak"), q)
        conds = ([] if edge == "clamp" else [f"{r} < M"]) + ([f"{k} < K"] if guard else [])
        v = f"A[{U(r)}, {U(k)}]"
        return f"{v} if {' and '.join(conds)} else float32(0.0)" if conds else v

    def b_val(p, q, kx, guard):
        r, c = _plus(_plus(kx, "bk"), p * b_rows), bcol(q)
        conds = ([f"{r} < K"] if guard else []) + ([] if edge == "clamp" else [f"{c} < N"])
        v = f"B[{U(r)}, {U(c)}]"
        return f"{v} if {' and '.join(conds)} else float32(0.0)" if conds else v

    def a_store(p, q, value, h):
        m = _plus("am", p * a_rows)
        if transposed:
            return f"sA[{_plus(_plus('ak', q), h * BK)}, {m}] = {value}"
        return f"sA[{_plus(m, h * BM)}, {_plus('ak', q)}] = {value}"

    def b_store(p, q, value, h):
        return f"sB[{_plus('bk', p * b_rows + h * BK)}, {_plus('bn', 32 * q)}] = {value}"

    def load_block(ind, kx, target, h):
        """Global loads of the tile at k = kx, into registers (target 'regs') or straight to shared."""
        out = []

        def emit(guard, ind2):
            for p, q in a_regs:
                v = a_val(p, q, kx, guard)
                out.append(ind2 + (f"pa_{p}_{q} = {v}" if target == "regs" else a_store(p, q, v, h)))
            for p, q in b_regs:
                v = b_val(p, q, kx, guard)
                out.append(ind2 + (f"pb_{p}_{q} = {v}" if target == "regs" else b_store(p, q, v, h)))

        if edge == "clamp":
            out.append(f"{ind}if {_plus(kx, BK)} <= K:  # the whole tile lies inside K: no checks")
            emit(False, ind + "    ")
            out.append(f"{ind}else:  # the last, partial tile: columns of A / rows of B past K read as 0")
            emit(True, ind + "    ")
        else:
            emit(True, ind)
        return out

    def compute(ind, h):
        out = []
        for k in range(BK):
            kk = h * BK + k
            bs = [f"sB[{kk}, {_plus('cb', g * sn + v)}]" for g in range(gn) for v in range(VEC)]
            out.append(f"b = ({', '.join(bs)})  # step k = {k}: the thread's {TN} values of B")
            for g in range(gm):
                for v in range(VEC):
                    i = g * VEC + v
                    r = _plus("ra", g * sm + v)
                    a = f"sA[{kk}, {r}]" if transposed else f"sA[{_plus(r, h * BM)}, {k}]"
                    out.append(f"acc{i} = row_fma(acc{i}, {a}, b)")
        return [ind + line for line in out]

    # --- the main loop ----------------------------------------------------------------------------
    if uidx:
        w("    # uint64(...) indices: numba guards a signed index against negative (wrap-around) values")
        w("    # with extra instructions; an unsigned one needs no guard.")
    if prefetch:
        w("    # Registers pa_*, pb_* hold the next tile: its global loads are in flight during the multiply.")
        L.extend(load_block("    ", "0", "regs", 0))
    step = nbuf * BK
    w(f"    for t in range((K + {step - 1}) // {step}):" +
      ("  # two tile steps per trip: buffer 0, then buffer 1" if nbuf == 2 else ""))
    for h in range(nbuf):
        ind = "        "
        w(f"{ind}k0 = t * {step}" + (f" + {h * BK}" if h else ""))
        if h == 1:
            w(f"{ind}if k0 < K:  # the second step of the last trip may lie past K")
            ind += "    "
        if prefetch:
            for p, q in a_regs:
                w(ind + a_store(p, q, f"pa_{p}_{q}", h))
            for p, q in b_regs:
                w(ind + b_store(p, q, f"pb_{p}_{q}", h))
            w(f"{ind}cuda.syncthreads()  # the tile is complete before anyone multiplies")
            w(f"{ind}k1 = k0 + {BK}  # next tile: issue its loads now, use them after the multiply")
            L.extend(load_block(ind, "k1", "regs", h))
        else:
            L.extend(load_block(ind, "k0", "shared", h))
            w(f"{ind}cuda.syncthreads()  # the tile is complete before anyone multiplies")
        L.extend(compute(ind, h))
        if nbuf == 1:
            w(f"{ind}cuda.syncthreads()  # nobody overwrites the tile while a neighbour still reads it")
    if nbuf == 2:
        w("        # One barrier per step is enough: a buffer is refilled only after the next step's")
        w("        # barrier, which every thread reaches after it finished reading that buffer.")
    w("    # Store the TM×TN results; rows and columns past the edges of C are skipped.")
    for i in range(TM):
        g, v = divmod(i, VEC)
        w(f"    row = row0 + {_plus('ra', g * sm + v)}")
        w("    if row < M:")
        for j in range(TN):
            gg, vv = divmod(j, VEC)
            c = _plus("col0 + cb", gg * sn + vv)
            w(f"        if {c} < N:")
            w(f"            C[row, {c}] = acc{i}[{j}]")
    return "\n".join(L) + "\n"


def generate_helpers(TN=8):
    """Source of the device function the kernel calls: one row of the thread tile gets a·b added.

    A tile step is TM calls of it per k. Written as a function so that numba types TM tuples per step
    instead of TM·TN separate statements: the same machine code, several times faster to compile."""
    terms = "".join(f"        acc[{j}] + a * b[{j}],\n" for j in range(TN))
    return (f"def row_fma(acc, a, b):\n"
            f"    # acc: {TN} results of one row of the thread tile; a: this row's value of A at step k;\n"
            f"    # b: the thread's {TN} values of B at step k. Returns the row with a * b added.\n"
            f"    return (\n{terms}    )\n")
