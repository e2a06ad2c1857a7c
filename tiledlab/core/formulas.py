"""What the articles predict: global loads of A and B for the naive and the tiled kernel."""


def _blocks(n, T):
    return -(-n // T)  # ceil(n / T): edge tiles are partly outside the matrix


def naive_loads(M, K, N):
    """One thread per C element, K loads of A and K of B each: M·N·2K (2N³ when square)."""
    return {"A": M * N * K, "B": M * N * K}


def tiled_loads(M, K, N, T):
    """Exact count for any shape: every block row reads its rows of A once per block column,
    every block column reads its columns of B once per block row (out-of-range reads are skipped).
    When T divides M and N this is 2·M·N·K/T (2N³/T when square)."""
    return {"A": M * K * _blocks(N, T), "B": K * N * _blocks(M, T)}


def tile_step_loads(T):
    """One T×T output tile over one k-step of width T: naive 2T³, tiled 2T²."""
    return {"naive": 2 * T**3, "tiled": 2 * T**2}


def predicted(kernel, M, K, N, T):
    """Formula loads {'A':…, 'B':…} for 'naive' or 'tiled'."""
    return naive_loads(M, K, N) if kernel == "naive" else tiled_loads(M, K, N, T)
