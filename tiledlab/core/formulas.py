"""What the articles predict: global loads of A and B, and shared-memory traffic, for every kernel here.
A block computing a BM×BN tile of C reads its BM rows of A and BN columns of B once: N³(1/BM + 1/BN) loads when
square; a thread computing TM×TN elements reads TM + TN shared values per k for TM·TN multiply-adds.
"""
from ..i18n import _


def at_least_1(**sizes):
    """Refuse a size below 1 in one line (a student's budget function may pass 0), not as a ZeroDivisionError."""
    for name, value in sizes.items():
        if not value >= 1:
            raise ValueError(_("{name} must be at least 1, got {value!r}").format(name=name, value=value))


def _blocks(n, T):
    return -(-n // T)  # ceil(n / T): edge tiles are partly outside the matrix


def thread_tiles(BM, BN, TM, TN):
    """(x, y) threads of a block: one per TM×TN thread tile of its BM×BN tile of C, (BN/TN, BM/TM)."""
    at_least_1(TM=TM, TN=TN)
    return (BN // TN, BM // TM)


def threads_per_block(BM, BN, TM, TN):
    """One thread per TM×TN thread tile of the BM×BN block tile: (BM/TM)·(BN/TN)."""
    x, y = thread_tiles(BM, BN, TM, TN)
    return x * y


def naive_loads(M, K, N):
    """One thread per C element, K loads of A and K of B each: M·N·2K (2N³ when square)."""
    return {"A": M * N * K, "B": M * N * K}


def block_tile_loads(M, K, N, BM, BN, clamped=False):
    """Each block reads its BM rows of A and BN columns of B along K, inside the matrices unless `clamped`."""
    at_least_1(BM=BM, BN=BN)
    gx, gy = _blocks(N, BN), _blocks(M, BM)
    if clamped:
        return {"A": gx * gy * BM * K, "B": gx * gy * BN * K}
    return {"A": M * K * gx, "B": K * N * gy}


def tiled_loads(M, K, N, T):
    """The tiled kernel, a T×T block tile: 2·M·N·K/T when T divides M and N (2N³/T when square)."""
    at_least_1(T=T)
    return block_tile_loads(M, K, N, T, T)


def shared_traffic(M, K, N, BM, BN, BK, TM=1, TN=1):
    """Shared reads, stores and multiply-adds of one launch, the zeros past the edges included (tiled: TM=TN=1)."""
    at_least_1(BM=BM, BN=BN, BK=BK)
    gx, gy, steps = _blocks(N, BN), _blocks(M, BM), _blocks(K, BK)
    k_padded = steps * BK
    threads = threads_per_block(BM, BN, TM, TN)
    return {"reads": gx * gy * k_padded * threads * (TM + TN), "stores": gx * gy * steps * BK * (BM + BN),
            "fmas": gx * gy * BM * BN * k_padded}


def shared_reads_per_fma(TM=1, TN=1):
    """(TM + TN)/(TM·TN): 2 for the tiled kernel, (TM + 1)/TM for a column of TM, 1/4 for 8×8."""
    at_least_1(TM=TM, TN=TN)
    return (TM + TN) / (TM * TN)


def tile_step_loads(T):
    """One T×T output tile over one k-step of width T: naive 2T³, tiled 2T²."""
    return {"naive": 2 * T**3, "tiled": 2 * T**2}


def split_k_adds(M, N, BN, splits):
    """Adds into C of a split-K launch (each a load and a store): column j of tiles has min(S, ⌈N·S/BN⌉ − S·j)
    parts, each adding its elements inside C; S·M·N when BN divides N."""
    columns = -(-N * splits // BN)
    return sum(min(splits, columns - splits * j) * M * min(BN, N - j * BN) for j in range(_blocks(N, BN)))
