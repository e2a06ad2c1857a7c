"""Shared-memory hazards in words. The checker counts four kinds (LoadCount.hazards): three for barriers,
whose kind and number depend on the order the threads happened to run in, so the message names what a
missing barrier does, never the kinds; and asynchronous copies (core.ptx.cp_async4) read or overwritten
before a cp_async_wait covered them, which the simulator cannot show in the result (its copies land at
once) but a GPU would."""

EFFECT = "two threads touched one shared element between the same two barriers, one of them writing"
COPY = "an asynchronous copy into shared memory was read or overwritten before a cp_async_wait covered it"


def hazard_message(hazards, count=True):
    """One sentence about a launch's `hazards` (LoadCount.hazards). count=False leaves out the totals,
    for output that must read the same on every run and backend (a barrier total depends on timing too)."""
    copies = hazards.get("copy_in_flight", 0)
    barrier = sum(hazards.values()) - copies
    if not barrier and not copies:
        return "no barrier hazards: no shared element was touched by two threads between the same two " \
               "barriers with one of them writing"
    said = []
    if barrier:
        found = f"{barrier:,} barrier hazards" if count else "barrier hazards"
        said.append(f"{found}: {EFFECT}. A cuda.syncthreads() is missing, and on a GPU the result would change "
                    "from run to run.")
    if copies:
        found = f"{copies:,} copies in flight" if count else "copies in flight"
        said.append(f"{found}: {COPY}. A cp_async_wait (after its cp_async_commit) is missing or waits for too "
                    "few groups, and on a GPU the kernel would read what was there before the copy.")
    return " ".join(said)
