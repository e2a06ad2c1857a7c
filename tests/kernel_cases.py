"""Cases every per-kernel test draws from the registry: a kernel's small constants (ones its own rules
accept, small enough for the simulator) and the generator's options as a kernel declares them."""
import itertools

from tiledlab.core.kernel import Generated

# (BM, BN, BK, TM, TN) candidates, fewest threads first: a kernel gets the first its rules accept.
TILES = [(16, 16, 4, 4, 1), (16, 16, 4, 4, 4), (32, 32, 8, 4, 4), (32, 64, 8, 4, 8), (64, 32, 8, 4, 4),
         (32, 128, 8, 4, 8), (64, 64, 8, 4, 4), (64, 128, 8, 8, 8), (64, 64, 16, 4, 4), (128, 128, 8, 8, 8)]


def small(kernel, skip=0):
    """Constants small enough for the simulator that `kernel`'s rules accept (the `skip`-th such set)."""
    if "T" in kernel.constants:
        return [{"T": 4}, {"T": 8}][skip]
    fits = []
    for tile in TILES:
        constants = {k: v for k, v in zip(("BM", "BN", "BK", "TM", "TN"), tile) if k in kernel.constants}
        try:
            kernel.bind(constants)
        except ValueError:
            continue
        fits.append(constants)
    if len(fits) <= skip:
        raise LookupError(f"{kernel.name}: none of tests/kernel_cases.TILES fits its rules; add one that does")
    return fits[skip]


def generator_options(kernel):
    """The options a generated kernel was declared with (None for other kernels)."""
    return kernel.code.options if isinstance(kernel.code, Generated) else None


def tile(kernel):
    return tuple(kernel.constants[k] for k in ("BM", "BN", "BK", "TM", "TN"))


def grid(shapes, **axes):
    """Every combination of `axes` (option → values) on each of `shapes`."""
    keys = list(axes)
    return [(shape, dict(zip(keys, values))) for shape in shapes for values in itertools.product(*axes.values())]
