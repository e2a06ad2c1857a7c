"""Barrier hazards in words. The checker counts three kinds (LoadCount.hazards), but which kind it sees,
and how many, depends on the order the threads happened to run in: the message names what a missing
barrier does, never the kinds."""

EFFECT = "two threads touched one shared element between the same two barriers, one of them writing"


def hazard_message(hazards, count=True):
    """One sentence about a launch's `hazards` (LoadCount.hazards). count=False leaves out the total,
    for output that must read the same on every run and backend (the total depends on timing too)."""
    total = sum(hazards.values())
    if not total:
        return "no barrier hazards: no shared element was touched by two threads between the same two " \
               "barriers with one of them writing"
    found = f"{total:,} barrier hazards" if count else "barrier hazards"
    return (f"{found}: {EFFECT}. A cuda.syncthreads() is missing, and on a GPU the result would change "
            "from run to run.")
