"""What "best" means, decided here and nowhere else: one registry kernel for a card and a shape.

`choose(M, K, N, card)` answers for `matmul(A, B, "best")`, `count_loads(..., "best")`, `show("best")`,
`specialize("best")` and every experiment, through `launch.resolve`. It asks, in order:

1. the tuned choice: `python -m tiledlab tune` times the candidates on this card and writes the fastest
   per shape class to a cache (below); an entry counts only for the card in hand (a change of device
   invalidates it) and the backend that timed it (the simulator models an H200 but times Python), a kernel
   the registry still has and the card can run;
2. the card rule: among `CANDIDATES` the card can run (compute capability, shared memory per block with
   its opt-in limit), the largest block tile whose grid gives every SM a block (FILL of them at least),
   so that large products get the tile with the fewest loads and small ones still fill the card; the
   smallest tile when none does. A 128×256 tile at N = 1024 makes 32 blocks: 100 of an H200's 132 SMs
   would idle.

The cache is JSON at $TILEDLAB_CACHE_DIR/tune.json, else platformdirs' user cache dir + /tiledlab/tune.json:

    {"version": 2,
     "entries": [{"card": {<dataclasses.asdict of a card.Card>}, "shape_class": ["4096", "≤4096", ...],
                  "kernel": "<registry name>", "measured": {"backend": "gpu" or "simulator", <what tune measured>}}]}

`shape_class` rounds each dimension up to a power of two, "≤P" where the candidates' block tiles leave an edge:
3000³ is ≤4096×≤4096×≤4096, not 4096³'s class, where another tile wins. A later entry for one card and class
replaces an earlier one; a missing file is no tuned choice, one that cannot be read is reported once and ignored
(tune's next run replaces it). `entries`, `entry`, `same_class` and `save` are its one reader and writer, tune's too.
"""
import dataclasses
import functools
import json
import math
import os
import pathlib
import warnings

from . import card as cards
from .rules import whole
from ..backend import SIMULATOR
from ..i18n import _

NAME = "best"
SHAPE = (4096, 4096, 4096)  # the size a question about "best" without a shape is answered at (show, specialize)
# The fastest kernel of each block tile in the committed H200 runs (waits.csv: the 16×2 warp patch;
# async.csv: the BK = 16 pipeline; ladder.csv: the double-buffered 64×128 for cards without cp.async).
CANDIDATES = ("w_128x256x8_8x16_warp16x2", "a_64x128x16_8x8_s3", "s_64x128x8_8x8_db")
FILL = 0.9  # blocks per SM a grid must give (one block per SM fits at these registers: a wave, nearly full)
VERSION = 2  # 1: a class was the powers of two alone
CACHE_ENV = "TILEDLAB_CACHE_DIR"
_reported = set()


def shape_class(M, K, N):
    """The shapes one tuned choice stands for: each of M, K, N as the power of two it rounds up to, "≤" before it
    when the block tile of one of best.CANDIDATES in that dimension (BM, BK, BN) does not divide it."""
    return tuple(("" if n % tile == 0 else "≤") + str(1 << (n - 1).bit_length())
                 for n, tile in zip(_shape(M, K, N), _tiles()))


@functools.cache
def _tiles():
    """(BM, BK, BN) that every candidate's block tile divides: a dimension they divide leaves no edge."""
    from .registry import KERNELS
    constants = [KERNELS[name].bind() for name in CANDIDATES]
    return tuple(math.lcm(*(c[key] for c in constants)) for key in ("BM", "BK", "BN"))


def _shape(M, K, N):
    return tuple(whole(f"{name} ({what})", n) for name, what, n in
                 (("M", "rows of C", M), ("K", "columns of A", K), ("N", "columns of C", N)))


def cache_path():
    """Where `tune` writes its choices and `choose` reads them."""
    folder = os.environ.get(CACHE_ENV)
    if folder:
        return pathlib.Path(folder) / "tune.json"
    import platformdirs
    return pathlib.Path(platformdirs.user_cache_dir()) / "tiledlab" / "tune.json"


def tuned(M, K, N, card, kernels):
    """The cached choice for this card and shape class, when it still holds; None otherwise."""
    wanted, here = list(shape_class(M, K, N)), "simulator" if SIMULATOR else "gpu"
    # the latest entry, measured where it is used (the simulator's times are Python's, not a GPU's)
    found = next((e.get("kernel") for e in reversed(entries())
                  if same_class(e, card, wanted) and measured_on(e) == here), None)
    return found if found in kernels and kernels[found].refusal(card) is None else None


def same_class(entry, card, shape_class):
    """True when cache entry `entry` is for `card` and `shape_class` (a list, as shape_class(...) gives)."""
    try:
        return cards.Card.of(entry["card"]) == card and list(entry["shape_class"]) == list(shape_class)
    except (KeyError, TypeError, ValueError):
        return False  # an entry of another form: not for this card


def measured_on(entry):
    """ "gpu" or "simulator": the backend whose times chose `entry` (a GPU's, in a cache that does not say)."""
    measured = entry.get("measured")
    return measured.get("backend", "gpu") if isinstance(measured, dict) else "gpu"


def entry(card, shape_class, kernel, measured):
    """A cache entry, as `tune` writes it and `tuned` reads it."""
    return {"card": dataclasses.asdict(card), "shape_class": list(shape_class), "kernel": kernel, "measured": measured}


def save(found, path=None):
    """Write the cache's entries `found` (a list of `entry`), replacing the file."""
    path = pathlib.Path(path or cache_path())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": VERSION, "entries": found}, indent=1) + "\n")


def entries(path=None):
    """The cache's entries: [] when there is no cache, or one that cannot be read (reported once)."""
    path = pathlib.Path(path or cache_path())
    try:
        table = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as error:
        return _ignored(path, str(error))
    if not isinstance(table, dict) or table.get("version") != VERSION or not isinstance(table.get("entries"), list):
        return _ignored(path, _("not a version {version} cache").format(version=VERSION))
    return [e for e in table["entries"] if isinstance(e, dict)]


def _ignored(path, why):
    if path not in _reported:
        _reported.add(path)
        warnings.warn(_("the tuned choices in {path} are ignored ({why}); run `python -m tiledlab tune` again")
                      .format(path=path, why=why), stacklevel=4)
    return []


def blocks(kernel, M, N):
    """Blocks in the grid of `kernel` (a Kernel) for an M×N product C: one per BM×BN tile of C."""
    rows, cols = kernel.sizes(kernel.bind())[0]
    return -(-M // rows) * -(-N // cols)


def by_rule(M, N, card, kernels):
    """The card rule (see the module's docstring) among the CANDIDATES `card` can run."""
    runnable = [kernels[name] for name in CANDIDATES if kernels[name].refusal(card) is None]
    if not runnable:
        raise ValueError(_('"best": {card} can run none of {names}').format(card=card, names=", ".join(CANDIDATES)))
    area = {k.name: math.prod(k.sizes(k.bind())[0]) for k in runnable}
    largest_first = sorted(runnable, key=lambda k: -area[k.name])  # stable: CANDIDATES' order within one size
    smallest = min(runnable, key=lambda k: area[k.name])
    return next((k.name for k in largest_first if blocks(k, M, N) >= FILL * card.sms), smallest.name)


def choose(M, K, N, card=None, kernels=None):
    """The registry kernel "best" runs for an M×K · K×N product on `card` (the card in hand when None)."""
    from .registry import KERNELS
    M, K, N = _shape(M, K, N)
    card, kernels = card or cards.current(), kernels or KERNELS
    return tuned(M, K, N, card, kernels) or by_rule(M, N, card, kernels)
