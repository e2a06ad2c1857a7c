"""Shared-memory hazards in words. The checker counts four kinds (LoadCount.hazards): three for barriers,
whose kind and number depend on the order the threads happened to run in, so the message names what a
missing barrier does, never the kinds; and asynchronous copies (core.ptx.cp_async4) read or overwritten
before a cp_async_wait covered them, which the simulator cannot show in the result (its copies land at
once) but a GPU would."""
from ..i18n import N_, _

EFFECT = N_("two threads touched one shared element between the same two barriers, one of them writing")
COPY = N_("an asynchronous copy into shared memory was read or overwritten before a cp_async_wait covered it")


def hazard_message(hazards, count=True):
    """One sentence about a launch's `hazards` (LoadCount.hazards). count=False leaves out the totals,
    for output that must read the same on every run and backend (a barrier total depends on timing too)."""
    copies = hazards.get("copy_in_flight", 0)
    barrier = sum(hazards.values()) - copies
    if not barrier and not copies:
        return _("no barrier hazards: no shared element was touched by two threads between the same two "
                 "barriers with one of them writing")
    said = []
    if barrier:
        found = _("{n:,} barrier hazards").format(n=barrier) if count else _("barrier hazards")
        said.append(_("{found}: {effect}. A cuda.syncthreads() is missing, and on a GPU the result would change "
                      "from run to run.").format(found=found, effect=_(EFFECT)))
    if copies:
        found = _("{n:,} copies in flight").format(n=copies) if count else _("copies in flight")
        said.append(_("{found}: {effect}. A cp_async_wait (after its cp_async_commit) is missing or waits for too "
                      "few groups, and on a GPU the kernel would read what was there before the copy.")
                    .format(found=found, effect=_(COPY)))
    return ("" if said[0].endswith("。") else " ").join(said)  # no space between Chinese sentences
