"""Random operands for every product the package runs: one place draws them."""
import numpy as np


def operands(M, K, N, seed=0):
    """(A, B): float32 standard-normal matrices, M×K and K×N, from a fixed seed (or drawn from a numpy Generator)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
