"""The counting lab: a kernel's source rewritten so that it counts its own global loads, shared-memory
reads and stores, its stores to C, and barrier hazards while it computes the same product (`rewrite`,
`buffers`, `count`), refusing by line what it could not follow (`countable`) and, on the simulator,
checked against operands that record every element read (`recorded`); changed copies of a kernel for
experiments (`variants`); exercise checks (`exercises`); and a small LRU cache model replayed over a
counted trace (`cachesim`)."""
from .count import LoadCount, count_loads, count_on_simulator

__all__ = ["LoadCount", "count_loads", "count_on_simulator"]
