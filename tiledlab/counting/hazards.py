"""Shared-memory hazards in words (buffers.HAZARDS), each kind with its example (`Hazards.examples`): its array,
element, threads and lines, and where the missing barrier or wait belongs."""
from ..i18n import N_, _

EFFECT = N_("two threads touched one shared element between the same two barriers, one of them writing")
COPY = N_("an asynchronous copy into shared memory was read or overwritten before a cp_async_wait covered it")
DIVERGENT = N_("in CUDA a barrier that not every thread of the block reaches is undefined behaviour (a hang, or a "
               "wrong result)")
_KINDS = {  # one example of each kind, in words
    "read_after_write": N_("a read after a write: {other} stores {element} at {other_line}, and {thread} reads it at "
                           "{line} with no barrier between"),
    "write_after_read": N_("a write after a read: {thread} overwrites {element} at {line} while {other} still reads "
                           "it at {other_line}"),
    "write_after_write": N_("a write after a write: {other} stores {element} at {other_line} and {thread} at {line}, "
                            "with no barrier between, so which value stays is a race"),
    "copy_in_flight": N_("{thread} touches {element} at {line} while the copy into it by {other} may still be in "
                         "flight"),
    "unstored_read": N_("{thread} reads {element} at {line}, which no thread of this block has stored"),
}
UNSTORED = N_("each block starts with shared memory that holds no value (on a GPU, whatever was there before), "
              "so what the read returns is garbage")
BARRIER_KINDS = ("read_after_write", "write_after_read", "write_after_write")


def _thread(ty_tx):
    return _("thread (ty={ty}, tx={tx})").format(ty=ty_tx[0], tx=ty_tx[1])


def _line(line, code):
    if not line:
        return _("another line")
    code = code if not code or len(code) <= 60 else code[:59] + "…"
    return _("line {line}").format(line=line) + (f" ({code!r})" if code else "")


def example(h):
    """One Hazard (tiledlab.counting.count.Hazard) in words."""
    return _("in block (by={by}, bx={bx}), {what}").format(by=h.block[0], bx=h.block[1], what=_(_KINDS[h.kind]).format(
        thread=_thread(h.thread), other=_thread(h.other), element=f"{h.array}[{h.element[0]}, {h.element[1]}]",
        line=_line(h.line, h.code), other_line=_line(h.other_line, h.other_code)))


def _barrier_advice(h, more_barriers):
    first, second = sorted((h.line, h.other_line or h.line))
    if not more_barriers:  # a pass of the loop meeting the next (or a write after a read): a second buffer
        return _(ANOTHER_BUFFER) if h.across_loop or h.kind == "write_after_read" else \
            _("this exercise keeps one cuda.syncthreads() per tile step: move it to stand between line {first} and "
              "line {second}").format(first=first, second=second)
    if h.kind == "write_after_write":
        return _("let one thread store each element between two barriers")
    if h.across_loop:  # a barrier stands between the two lines: they met in two passes of a loop
        return _("add a cuda.syncthreads() that every thread of the block passes after line {second}, at the end "
                 "of the loop, before line {first} runs again").format(first=first, second=second)
    return _("add a cuda.syncthreads() that every thread of the block passes between line {first} and line "
             "{second}").format(first=first, second=second)


def _divergent(h):
    said = dict(line=_line(h.line, h.code), thread=_thread(h.thread), other=_thread(h.other), by=h.block[0],
                bx=h.block[1], effect=_(DIVERGENT))
    if h.element and h.element[1]:  # both reached it, in loops of different lengths
        return _("The cuda.syncthreads() at {line} is reached {n} times by {thread} of block (by={by}, bx={bx}) but "
                 "{m} times by {other}: {effect}. Their loops around it run different numbers of passes: let every "
                 "thread of the block run that loop the same number of times, and guard only the loads and stores "
                 "inside it.").format(**said, n=h.element[0], m=h.element[1])
    elsewhere = _("waits at {line} instead").format(line=_line(h.other_line, h.other_code)) if h.other_line else \
        _("finished without reaching it")
    return _("The cuda.syncthreads() at {line} is reached by {thread} of block (by={by}, bx={bx}) but not by {other}, "
             "which {elsewhere}: {effect}. Take the barrier out of the condition (or move the early return after "
             "it) so that every thread of the block passes it, and guard only the loads and stores.").format(
                 **said, elsewhere=elsewhere)


ANOTHER_BUFFER = N_("this exercise keeps one cuda.syncthreads() per tile step, so the fix is not another barrier: let "
                    "two consecutive tile steps use different shared elements, a second buffer chosen by the step's "
                    "parity (s = t % 2: rows s·T to s·T + T − 1 of a 2T-row tile), and let each step store and "
                    "read the same half, both indices adding s·T")


def hazard_message(hazards, count=True, more_barriers=True):
    """What a launch's `hazards` (or its LoadCount) say. count=False leaves out the totals, which depend on the order
    the threads ran in; more_barriers=False advises a second buffer, never another barrier."""
    hazards = getattr(hazards, "hazards", hazards)  # the LoadCount itself says the same
    if not isinstance(hazards, dict):
        raise TypeError(_("hazard_message takes a count's hazards, as in hazard_message(count.hazards), got {value}")
                        .format(value=type(hazards).__name__))
    examples = getattr(hazards, "examples", {})
    copies, divergent, unstored = (hazards.get(k, 0) for k in ("copy_in_flight", "divergent_barrier", "unstored_read"))
    barrier = sum(hazards.get(kind, 0) for kind in BARRIER_KINDS)
    if not (barrier or copies or divergent or unstored):
        return _("no barrier hazards: no shared element was touched by two threads between the same two "
                 "barriers with one of them writing")
    said = []
    if divergent:
        h = examples.get("divergent_barrier")
        said.append(_divergent(h) if h else _("A barrier not every thread reached: {effect}.").format(
            effect=_(DIVERGENT)))
    if barrier:
        found = _("{n:,} barrier hazards").format(n=barrier) if count else _("barrier hazards")
        h = next((examples[kind] for kind in BARRIER_KINDS if kind in examples), None)
        missing = _("{found}: {effect}. A cuda.syncthreads() is missing, and on a GPU the result would change from "
                    "run to run.") if more_barriers else _("{found}: {effect}. On a GPU the result would change from "
                                                         "run to run.")
        said.append(missing.format(found=found, effect=_(EFFECT)))
        if h:
            said.append(_("For example, {example}: {advice}.").format(example=example(h),
                                                                      advice=_barrier_advice(h, more_barriers)))
    if copies:
        found = _("{n:,} copies in flight").format(n=copies) if count else _("copies in flight")
        said.append(_("{found}: {effect}. A cp_async_wait (after its cp_async_commit) is missing or waits for too "
                      "few groups, and on a GPU the kernel would read what was there before the copy.")
                    .format(found=found, effect=_(COPY)))
        if "copy_in_flight" in examples:
            h = examples["copy_in_flight"]
            said.append(_("For example, {example}: let cp_async_wait cover its group before line {line}.").format(
                example=example(h), line=h.line))
    if unstored and not said:  # else an echo of the hazards above: a store another thread skipped or made late
        found = _("{n:,} reads of shared elements no thread of the block had stored").format(n=unstored) if count \
            else _("reads of shared elements no thread of the block had stored")
        said.append(_("{found}: {effect}. Blocks do not share shared memory: let the threads of each block store "
                      "every element of a tile before any of them reads it.").format(found=found, effect=_(UNSTORED)))
        h = examples.get("unstored_read")
        if h:
            said.append(_("For example, {example}.").format(example=example(h)))
        if h and h.stores_no_C:
            said.append(_("That thread stores no element of C, so the value it reads there is thrown away; still, let "
                          "every thread read only what its block stored: skip that thread's reads (guard them as its "
                          "store of C is guarded), or store zeros in the tile's elements past the edges of A and B."))
    return ("" if said[0].endswith("。") else " ").join(said)  # no space between Chinese sentences
