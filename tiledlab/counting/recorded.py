"""The second count: on the simulator, A, B and C go to the kernel as arrays that count every element read and
stored, whatever the source looks like (the simulator keeps an ndarray subclass on its "device" copy). `count_loads`
compares it with the rewrite's count on every launch: a disagreement is a RuntimeError, never a number."""
import threading
from contextlib import contextmanager

import numpy as np
from numba import cuda

from ..core.rules import is_whole
from ..i18n import _
from .buffers import OPERANDS


class _Recording(np.ndarray):
    """An operand counting reads and stores per element while `armed`, on its class (one per operand and launch):
    the simulator's device copy keeps the class, not attributes."""

    def __getitem__(self, index):
        value = super().__getitem__(index)
        type(self)._note(type(self).reads, index)
        return value

    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        type(self)._note(type(self).stores, index)

    @classmethod
    def _note(cls, counts, index):
        if not cls.armed:
            return
        with cls.lock:  # simulated threads are Python threads: += on an element is not atomic
            if isinstance(index, tuple) and len(index) == 2 and is_whole(*index):
                counts[index] += 1
            else:
                cls.odd.append(index)


class SecondCount:
    """A, B and C of a launch (tiledlab.core.launch.Launch) replaced by recording copies."""

    def __init__(self, launch):
        self.recorders = {}
        for op in OPERANDS:
            host = getattr(launch, op).copy_to_host()
            self.recorders[op] = type("Recording", (_Recording,), {
                "reads": np.zeros(host.shape, np.int64), "stores": np.zeros(host.shape, np.int64), "odd": [],
                "lock": threading.Lock(), "armed": False})
            setattr(launch, op, cuda.to_device(host.view(self.recorders[op])))

    @contextmanager
    def armed(self):
        """Record only what the kernel does (copying to and from the 'device' reads arrays too)."""
        for cls in self.recorders.values():
            cls.armed = True
        try:
            yield
        finally:
            for cls in self.recorders.values():
                cls.armed = False

    def compare(self, got, name):
        """Raise a RuntimeError where the rewrite's counts `got` (CountingBuffers.read) differ from these."""
        for op, cls in self.recorders.items():
            if cls.odd:
                raise RuntimeError(_("counting {name}: {op} was accessed as {op}[{index}], which the rewrite does not "
                                     "count; please report this kernel").format(name=name, op=op,
                                                                                 index=repr(cls.odd[0])))
            stored = got["C_stores"] if op == "C" else np.zeros_like(cls.stores)
            # the simulator's cuda.atomic.add reads its element twice (the old value, then for +=): one load counted
            loads = got[f"count_{op}"] + (got["C_atomics"] if op == "C" else 0)
            _agree(cls.reads, loads, _("counting {name}: the two counts of loads of {op} disagree at {op}[{i}, {j}]: "
                                       "the rewrite counted {a} loads, the recording array {b}."), name=name, op=op)
            _agree(cls.stores, stored, _("counting {name}: the two counts disagree on stores to {op}[{i}, {j}]: the "
                                         "rewrite counted {a}, the recording array {b}."), name=name, op=op)


def _agree(recorded, rewritten, message, **place):
    differ = np.argwhere(recorded != rewritten)
    if len(differ):
        i, j = (int(v) for v in differ[0])
        raise RuntimeError(message.format(i=i, j=j, a=int(rewritten[i, j]), b=int(recorded[i, j]), **place) + " " +
                           _("tiledlab could not follow this kernel, so it gives no count; please report it."))
