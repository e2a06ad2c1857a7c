"""The counting lab: a kernel rewritten to count its own loads, stores and barrier hazards as it computes (`rewrite`,
`buffers`, `count`), refusing by line what it cannot follow (`countable`), checked on the simulator by a second count
(`recorded`); changed copies of kernels (`variants`), exercise checks (`exercises`), a cache model (`cachesim`)."""
from .count import LoadCount, count_loads, count_on_simulator

__all__ = ["LoadCount", "count_loads", "count_on_simulator"]
