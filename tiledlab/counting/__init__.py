"""The counting lab: a kernel's source rewritten so that it counts its own global loads, shared-memory
reads and stores, and barrier hazards while it computes the same product (`rewrite`, `buffers`,
`count`); changed copies of a kernel for experiments (`variants`); exercise checks (`exercises`); and a
small LRU cache model replayed over a counted trace (`cachesim`)."""
from .count import LoadCount, count_loads

__all__ = ["LoadCount", "count_loads"]
