"""Reading Nsight Compute's committed counters (h200/*profile.csv, from `python -m tools profile`): what each stall
reason means, and which resource binds a kernel, from the per-resource time bounds its row holds."""
import pandas as pd

STALLS = {  # why a warp issued nothing in a cycle, in Nsight Compute's names ("Warp Stall Reasons")
    "barrier": "waiting at a barrier (cuda.syncthreads) for the rest of its block",
    "branch_resolving": "waiting for a branch's target to be computed",
    "dispatch_stall": "picked, but the dispatcher could not hand the instruction to its pipe",
    "drain": "waiting, after EXIT, for its memory writes to drain",
    "imc_miss": "waiting for a constant (kernel arguments, sizes) missing from the constant cache",
    "lg_throttle": "the queue of global/local memory instructions was full",
    "long_scoreboard": "waiting for a global (or local) load's data: memory latency",
    "math_pipe_throttle": "the arithmetic pipe it needs was busy with other warps' instructions",
    "membar": "waiting at a memory fence",
    "mio_throttle": "the memory input/output queue (shared-memory instructions) was full",
    "misc": "any other reason",
    "no_instruction": "no instruction fetched yet (instruction-cache miss, or just after a branch)",
    "not_selected": "ready, but the scheduler issued another warp's instruction: no loss by itself",
    "selected": "issuing: not a stall",
    "short_scoreboard": "waiting for a shared-memory load's data (or a special-function result)",
    "sleeping": "asleep (nanosleep)",
    "tex_throttle": "the texture unit's queue was full",
    "wait": "a fixed wait the compiler set after an instruction (a dependency of known latency)",
}
BOUNDS = {  # resource → the column with the time that resource alone would need (ms; tools' profile.derived)
    "issue": "bound_issue_ms", "shared-memory wavefronts": "bound_shared_ms", "load/store unit": "bound_lsu_ms",
    "FP32 FMA pipe": "bound_fma_ms"}


def co_limits(row, within=0.15):
    """(names, largest ms): the resources whose time alone is within `within` of the largest: they bind together."""
    times = {name: float(row[column]) for name, column in BOUNDS.items() if not pd.isna(row.get(column))}
    if not times:
        return [], None
    top = max(times.values())
    return [name for name, t in sorted(times.items(), key=lambda kv: -kv[1]) if t >= (1 - within) * top], top


def stall_names(*top_stalls):
    """The stall reasons in `top_stalls` strings ("long_scoreboard 71%, mio_throttle 8%"), each once, in order."""
    names = (part.strip().rsplit(" ", 1)[0] for text in top_stalls for part in str(text).split(","))
    return [name for name in dict.fromkeys(names) if name in STALLS]


def what_binds(row, busy=2 / 3, within=0.15):
    """In words: the co-limits, when the largest would keep its resource busy `busy` of the measured time at least
    (few real kernels hold a pipe busier); else latency, since no resource is busy enough to be the reason."""
    names, top = co_limits(row, within)
    time = row.get("time_ms")
    if top is None or pd.isna(time) or not time:  # a missing value (None, NaN, pandas' NA) or 0
        return ""
    return " + ".join(names) if top >= busy * time else f"latency (no resource busy {busy:.0%} of the time)"
