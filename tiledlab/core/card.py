"""The card, as data: what a kernel's needs are checked against, and what "best" reads. `current()` reads the
device on a GPU; the simulator models a card of `KNOWN` (TILEDLAB_CARD, the H200 by default) so that a page chooses
and refuses kernels as there. The figures are the driver's (the CUDA C++ Programming Guide's table per compute
capability, SMs from datasheets; the H200's equal data/h200/device.csv); a key of KNOWN names its data folder.
"""
import os
from dataclasses import dataclass, fields
from typing import NamedTuple

from ..backend import SIMULATOR
from ..i18n import _

ENV = "TILEDLAB_CARD"
STATIC_SHARED_BYTES = 48 * 1024  # static shared memory (cuda.shared.array) per block on every card
MAX_THREADS_PER_BLOCK = 1024  # CUDA's limit on every current card
VEC = 4  # floats in one 128-bit load or copy, the widest a thread makes: 4 × 4 bytes
CP_ASYNC = (8, 0)  # cp.async (tiledlab.core.ptx), global → shared past the registers: Ampere and later
REGISTER_UNIT = 256  # registers are granted to a warp in units of 256 (8 per thread)
RESERVED_SHARED = (8, 0), 1024  # from Ampere on, the system keeps 1 KiB of an SM's shared memory per block


@dataclass(frozen=True)
class Card:
    """One card's name and the limits a kernel's needs are checked against (names as in device.csv)."""
    name: str
    compute_capability: tuple
    sms: int
    shared_per_block_bytes: int  # what a block gets without asking: the static limit
    shared_per_block_optin_bytes: int  # what a block may have of dynamic shared memory, once its kernel opts in
    shared_per_sm_bytes: int
    registers_per_sm: int
    registers_per_block: int
    threads_per_sm: int
    blocks_per_sm: int

    arch = property(lambda self: "sm_%d%d" % self.compute_capability)

    def __str__(self):
        return f"{self.name} ({self.arch}, {self.sms} SMs)"

    @classmethod
    def of(cls, row):
        """A Card from a dict of its fields (a cache entry's JSON: lists become tuples)."""
        return cls(**{f.name: tuple(row[f.name]) if f.name == "compute_capability" else row[f.name]
                      for f in fields(cls)})


def _card(name, cc, sms, optin, per_sm, threads_per_sm, blocks_per_sm):
    return Card(name, cc, sms, STATIC_SHARED_BYTES, optin, per_sm, 65536, 65536, threads_per_sm, blocks_per_sm)


KNOWN = {  # the cards students have, and the one the committed measurements come from
    "t4": _card("Tesla T4", (7, 5), 40, 64 * 1024, 64 * 1024, 1024, 16),  # Colab's free GPU
    "a100": _card("NVIDIA A100-SXM4-80GB", (8, 0), 108, 163 * 1024, 164 * 1024, 2048, 32),
    "rtx3090": _card("NVIDIA GeForce RTX 3090", (8, 6), 82, 99 * 1024, 100 * 1024, 1536, 16),
    "rtx4090": _card("NVIDIA GeForce RTX 4090", (8, 9), 128, 99 * 1024, 100 * 1024, 1536, 24),
    "l4": _card("NVIDIA L4", (8, 9), 58, 99 * 1024, 100 * 1024, 1536, 24),
    "h100": _card("NVIDIA H100 80GB HBM3", (9, 0), 132, 227 * 1024, 228 * 1024, 2048, 32),
    "h200": _card("NVIDIA H200", (9, 0), 132, 227 * 1024, 228 * 1024, 2048, 32),
}
DYNAMIC_SHARED_BYTES = max(c.shared_per_block_optin_bytes for c in KNOWN.values())  # the most a block gets (H200)
DEVICE_ATTRIBUTES = {  # Card field → the driver's device attribute (CU_DEVICE_ATTRIBUTE_...)
    "sms": "MULTIPROCESSOR_COUNT", "shared_per_block_bytes": "MAX_SHARED_MEMORY_PER_BLOCK",
    "shared_per_block_optin_bytes": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "shared_per_sm_bytes": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR", "registers_per_block": "MAX_REGISTERS_PER_BLOCK",
    "threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR", "blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
}


def known_as(card):
    """The card's key in KNOWN (its data folder's name), found by its name; None for a card not modelled."""
    return next((k for k, c in KNOWN.items() if c.name == card.name), None)


def blocks_per_sm(card, registers, threads, shared_bytes):
    """Blocks of `threads` threads, `registers` each, using `shared_bytes`, that one SM of `card` holds at once."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT
    since, reserved = RESERVED_SHARED
    shared = shared_bytes + (reserved if card.compute_capability >= since else 0)
    return min(card.registers_per_sm // (per_warp * warps), card.shared_per_sm_bytes // shared if shared else
               card.blocks_per_sm, card.threads_per_sm // threads, card.blocks_per_sm)


def modelled():
    """The card the simulator models: KNOWN[TILEDLAB_CARD], the H200 by default."""
    key = os.environ.get(ENV, "h200").strip().lower() or "h200"
    if key not in KNOWN:
        raise ValueError(_("{env}={key!r}: the simulator models one of {known}").format(
            env=ENV, key=key, known=", ".join(KNOWN)))
    return KNOWN[key]


def current():
    """The card in hand: the device's own figures on a GPU, the modelled card on the simulator."""
    if SIMULATOR:
        return modelled()
    from numba import cuda
    dev = cuda.get_current_device()
    if dev.id not in _read:  # read once per device: `best` asks at every launch
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        _read[dev.id] = Card(name, tuple(dev.compute_capability),
                             **{f: int(getattr(dev, attr)) for f, attr in DEVICE_ATTRIBUTES.items()})
    return _read[dev.id]


_read = {}  # device id → its Card


def which(card=None):
    """One line for a page: which card its choices are made for."""
    card = card or current()
    if SIMULATOR:
        return _("The simulator models the {card}: kernels are chosen and refused as on that card "
                 "({env}=t4|a100|rtx3090|rtx4090|l4|h100|h200 picks another).").format(card=card, env=ENV)
    return _("This GPU: {card}.").format(card=card)


class Shared(NamedTuple):
    """Shared memory one block of a build uses: bytes, and whether they are dynamic (sized at launch)."""
    bytes: int
    dynamic: bool = False


@dataclass(frozen=True)
class Needs:
    """What one build of a kernel needs of the card."""
    compute_capability: tuple  # the oldest card that has its instructions
    shared: Shared
    threads: int  # per block
    min_blocks: int = None  # launch bounds: blocks per SM the compiler must make room for

    def refusal(self, card):
        """Why `card` cannot run this build, in one line; None when it can."""
        cc = "%d.%d" % self.compute_capability
        if card.compute_capability < self.compute_capability:
            what = "cp.async" if self.compute_capability == CP_ASYNC else _("its instructions")
            return _("{card} cannot run it: {what} needs compute capability {cc} or higher").format(
                card=card, what=what, cc=cc)
        limit = card.shared_per_block_optin_bytes if self.shared.dynamic else card.shared_per_block_bytes
        if self.shared.bytes > limit:
            too_much = _("{card} cannot run it: it needs {used:,} bytes of dynamic shared memory per block, the card "
                         "allows at most {limit:,} ({kib} KiB): choose fewer stages or smaller tiles") \
                if self.shared.dynamic else _("{card} cannot run it: it declares {used:,} bytes of shared memory per "
                                              "block; a block may declare at most {limit:,} ({kib} KiB) statically: "
                                              "choose smaller tiles")
            return too_much.format(card=card, used=self.shared.bytes, limit=limit, kib=limit // 1024)
        blocks = self.min_blocks or 1
        if self.threads * blocks > card.threads_per_sm or blocks > card.blocks_per_sm:
            return _("{card} cannot run it: its launch bounds ask for {blocks} blocks of {threads} threads per SM, "
                     "the card holds {most} threads").format(card=card, blocks=blocks, threads=self.threads,
                                                             most=card.threads_per_sm)
        return None
