"""What "best" means, decided here and nowhere else: one registry kernel for a card and a shape.

`choose(M, K, N, card)` answers for every "best" (through `launch.resolve`), asking in order:
1. the tuned choice: `python -m tiledlab tune` writes the fastest candidate per shape class to a cache; an entry
   counts only for the card in hand, the backend that timed it, and a kernel the registry has and the card can run;
2. the model: of `CANDIDATES` and `SPLIT_K` the card can run, the least `estimate`. An SM holds as many blocks as
   its registers (data/compiled/registers.csv), shared memory and threads allow; the busiest SM runs ⌈blocks / SMs⌉
   blocks of BM·BN·(its part of K in whole BK steps + K_OVERHEAD) multiply-adds, in rounds whose warps may not
   fill it (WARPS_TO_FILL): at 3000³ the 128×256 tile makes three rounds for 2.2 rounds of work. The rate is what the
   kernel achieved per unit of that work in the card's same-run table (data/<card>/shapes.csv) at the `nearest`
   measured shape (a card without one borrows its architecture's, else the H200's).
The cache, $TILEDLAB_CACHE_DIR/tune.json (else platformdirs' user cache dir + /tiledlab/tune.json), is
{"version": 2, "entries": [{"card": {asdict of a Card}, "shape_class": [...], "kernel": name, "measured": {...}}]};
a later entry replaces an earlier one for its card and class; an unreadable file is reported once and ignored.
"""
import csv
import dataclasses
import functools
import json
import math
import os
import pathlib
import statistics
import warnings

from . import card as cards
from .rules import whole
from ..backend import SIMULATOR
from ..i18n import _

NAME = "best"
SHAPE = (4096, 4096, 4096)  # the size a question about "best" without a shape is answered at (show, specialize)
# The fastest kernel of each block tile in the committed H200 runs (waits.csv, async.csv, ladder.csv: for cards
# without cp.async) and the split-K rungs of the last two, for shapes whose M×N gives the card too few blocks
CANDIDATES = ("w_128x256x8_8x16_warp16x2", "a_64x128x16_8x8_s3", "s_64x128x8_8x8_db")
SPLIT_K = ("k_64x128x16_8x8_s3_split2", "k_64x128x16_8x8_s3_split4", "k_64x128x16_8x8_s3_split8",
           "k_64x128x8_8x8_db_split4")
FILL = 0.9  # the card rule `best` used before the model (notebook 7): blocks per SM a grid must give
# The model's constants, fitted to the committed H200 runs (tests/test_best.py refits them)
WARPS_TO_FILL = 5  # warps an SM needs resident to run these kernels at full rate (a 4-warp block alone: 80 %)
K_OVERHEAD = 128  # a block's time outside its main loop (pipeline filled, C written), in steps of k
DATA = pathlib.Path(__file__).resolve().parents[1] / "data"  # committed measurements, read here as plain CSV
VERSION = 2  # 1: a class was the powers of two alone
CACHE_ENV = "TILEDLAB_CACHE_DIR"
_reported = set()


def shape_class(M, K, N):
    """M, K, N each as the power of two it rounds up to, "≤" before it where a candidate's tile does not divide it."""
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
    if folder := os.environ.get(CACHE_ENV):
        return pathlib.Path(folder) / "tune.json"
    import platformdirs
    return pathlib.Path(platformdirs.user_cache_dir()) / "tiledlab" / "tune.json"


def tuned(M, K, N, card, kernels):
    """The cached choice for this card and shape class, when it still holds; None otherwise."""
    wanted, here = list(shape_class(M, K, N)), "simulator" if SIMULATOR else "gpu"
    found = next((e.get("kernel") for e in reversed(entries())
                  if same_class(e, card, wanted) and measured_on(e) == here), None)
    # an entry of another form (a list) names no kernel
    return found if isinstance(found, str) and found in kernels and kernels[found].refusal(card) is None else None


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
    """Blocks in the grid of `kernel` (a Kernel) for an M×N product C (for a split-K rung, per part of K too)."""
    return math.prod(kernel.grid(M, N, kernel.bind())[0])


def by_rule(M, N, card, kernels):
    """The rule before the model: the largest runnable candidate giving FILL of the SMs a block, else the smallest."""
    runnable = [kernels[name] for name in CANDIDATES if kernels[name].refusal(card) is None]
    if not runnable:
        raise ValueError(_('"best": {card} can run none of {names}').format(card=card, names=", ".join(CANDIDATES)))
    area = {k.name: math.prod(k.sizes(k.bind())[0]) for k in runnable}
    largest_first = sorted(runnable, key=lambda k: -area[k.name])  # stable: CANDIDATES' order within one size
    smallest = min(runnable, key=lambda k: area[k.name])
    return next((k.name for k in largest_first if blocks(k, M, N) >= FILL * card.sms), smallest.name)


# --- the model of the card ----------------------------------------------------------------------------------

def splits(kernel):
    """The parts K is split into by `kernel`'s blocks (1 but for a split-K rung)."""
    return getattr(kernel.code, "options", {}).get("splits", 1)


@functools.cache
def facts(kernel):
    """(constants, (rows, cols) of C per block, threads per block, card.Needs) of `kernel`'s default build."""
    c = kernel.bind()
    return c, c.block, math.prod(c.threads), kernel.needs(c)


def registers(kernel, card):
    """Registers per thread of `kernel`'s default build on `card`'s architecture (None if never recorded)."""
    return _registers().get((kernel.name, card.arch))


def per_sm(kernel, card):
    """Blocks of `kernel`'s default build one SM of `card` holds at once; None when its registers are unknown."""
    used = registers(kernel, card)
    _, _, threads, needs = facts(kernel)
    return cards.blocks_per_sm(card, used, threads, needs.shared.bytes) if used else None


def work(kernel, card, M, K, N):
    """The modelled time at one multiply-add per second per SM (the module's docstring); None if no block fits."""
    held = per_sm(kernel, card)
    if not held:
        return None
    c, (rows, cols), threads, _ = facts(kernel)
    parts = min(splits(kernel), -(-N // cols))  # a first column of tiles narrower than S shares: fewer parts
    k_part = -(-(-(-K // c["BK"])) // parts) * c["BK"]  # the longest part of K, in whole steps of BK
    fmas = rows * cols * parts * (k_part + K_OVERHEAD)  # one block's: its tile of C over its part of K
    busiest = -(-(-(-M // rows) * -(-N // cols)) // card.sms)
    full, rest = divmod(busiest, held)

    def round_time(n):  # n blocks at once: n·fmas at the SM's rate, less when their warps do not fill it
        return n * fmas / min(1.0, n * threads / 32 / WARPS_TO_FILL)
    return full * round_time(held) + (round_time(rest) if rest else 0.0)


def nearest(shape, measured):
    """Of the `measured` shapes, the one most like `shape`: sizes on a log scale, rows' 16/128-byte alignment."""
    def features(M, K, N):
        return (math.log2(M), math.log2(K), math.log2(N), K % 4 == 0 and N % 4 == 0, K % 32 == 0, N % 32 == 0)

    def distance(other):
        a, b = features(*shape), features(*other)
        return sum(abs(x - y) for x, y in zip(a[:3], b[:3])) + 2 * sum(x != y for x, y in zip(a[3:], b[3:]))
    return min(measured, key=distance)


def rate(kernel, card, M, K, N, kernels):
    """Multiply-adds/s per SM per unit of `work` by `kernel` (or the rung it splits) at the nearest shape, or None."""
    measured_on, table = measured(card)
    name = kernel.name if kernel.name in table else twin(kernel, kernels)
    if name not in table:
        return None
    at = nearest((M, K, N), table[name])
    return work(kernels[name], measured_on, *at) / table[name][at]


def twin(kernel, kernels):
    """The registry kernel `kernel` splits K for (the same constants and options, unsplit); None if none."""
    if splits(kernel) == 1:
        return None
    options = {**kernel.code.options, "splits": 1}
    return next((k.name for k in kernels.values() if getattr(k.code, "options", None) is not None and
                 {"splits": 1, **k.code.options} == options and k.constants == kernel.constants), None)


def estimate(kernel, card, M, K, N, kernels=None):
    """The model's time of `kernel` (a Kernel) at M×K·K×N on `card`, in seconds; None when it has no rate."""
    from .registry import KERNELS
    kernels = kernels or KERNELS
    modelled, speed = work(kernel, card, M, K, N), rate(kernel, card, M, K, N, kernels)
    return modelled / speed if modelled and speed else None


def by_model(M, K, N, card, kernels):
    """Of the CANDIDATES and SPLIT_K rungs `card` can run, the least `estimate` (else the card rule's choice)."""
    times = {name: estimate(kernels[name], card, M, K, N, kernels) for name in CANDIDATES + SPLIT_K
             if facts(kernels[name])[3].refusal(card) is None}
    times = {name: t for name, t in times.items() if t is not None}
    if not times:  # an architecture ptxas's record never saw: no registers, no model
        return by_rule(M, N, card, kernels)
    return min(times, key=times.get)


def measured_card(card):
    """The KNOWN key of the card whose same-run table `card` uses: its own, its architecture's, else the H200's."""
    own = cards.known_as(card)
    found = [k for k in cards.KNOWN if (DATA / k / "shapes.csv").exists()]
    return own if own in found else next((k for k in found if cards.KNOWN[k].arch == card.arch), "h200")


def measured(card):
    """(the card whose same-run table `card` uses, {kernel: {(M, K, N): median seconds}} of that table)."""
    key = measured_card(card)
    return cards.KNOWN[key], _table(key)


@functools.cache
def _table(key):
    times = {}
    with open(DATA / key / "shapes.csv", newline="") as f:
        for row in csv.DictReader(f):
            M, K, N = map(int, row["shape"].split("x")) if row["shape"][0].isdigit() else (0, 0, 0)
            if M and row["ms"]:
                times.setdefault(row["kernel"], {}).setdefault((M, K, N), []).append(float(row["ms"]) * 1e-3)
    return {k: {shape: statistics.median(v) for shape, v in by_shape.items()} for k, by_shape in times.items()}


@functools.cache
def _registers():
    with open(DATA / "compiled" / "registers.csv", newline="") as f:
        return {(row["kernel"], row["arch"]): int(row["registers"]) for row in csv.DictReader(f)}


_chosen = {}  # (card, M, K, N, backend, hash of the tune cache's text) → the choice


def choose(M, K, N, card=None, kernels=None):
    """The registry kernel "best" runs for an M×K · K×N product on `card` (the card in hand when None)."""
    from .registry import KERNELS
    M, K, N = _shape(M, K, N)
    card, kernels = card or cards.current(), kernels or KERNELS
    if kernels is not KERNELS:
        return tuned(M, K, N, card, kernels) or by_model(M, K, N, card, kernels)
    try:
        text = hash(cache_path().read_bytes())  # a new tune is seen at once
    except OSError:
        text = None
    key = (card, M, K, N, SIMULATOR, text)
    if key not in _chosen:
        if len(_chosen) >= 4096:  # a program of many shapes: start again rather than grow
            _chosen.clear()
        _chosen[key] = tuned(M, K, N, card, kernels) or by_model(M, K, N, card, kernels)
    return _chosen[key]
