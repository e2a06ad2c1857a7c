"""A small, honest cache model: a counted launch's loads replayed through an LRU cache of chosen size, block by
block, a block's threads stepping together as warps roughly do. Real GPUs differ (many blocks run at once, L1 per
SM, sectored L2): this shows the idea, not the H200."""
from collections import OrderedDict

import numpy as np

from ..core.rules import whole
from ..i18n import _

LINE_BYTES = 128


def address_stream(count, line_bytes=LINE_BYTES):
    """Cache-line numbers of a LoadCount's trace, in the replay order described above."""
    t = getattr(count, "trace", None)
    if t is None:
        raise ValueError(_("address_stream takes a count made with its trace: count_loads(..., trace=True)"))
    M, K, N = count.shape
    t = t[np.lexsort((t.tx, t.ty, t.seq, t.bx, t.by))]  # block, then step, then thread
    start, width = np.array([0, M * K, M * K + K * N]), np.array([K, N, N])  # A, B, C one after another
    words = start[t.operand] + t.i * width[t.operand] + t.j
    return words * 4 // line_bytes


def hit_rate(lines, capacity_lines):
    """Fraction of accesses that hit in an LRU cache holding `capacity_lines` lines."""
    lines, capacity_lines = np.asarray(lines), whole("capacity_lines", capacity_lines)
    if not lines.size:
        raise ValueError(_("hit_rate takes a stream of at least one cache line, as address_stream returns"))
    cache, hits = OrderedDict(), 0
    for line in lines.tolist():
        if line in cache:
            hits += 1
            cache.move_to_end(line)
        else:
            cache[line] = None
            if len(cache) > capacity_lines:
                cache.popitem(last=False)
    return hits / lines.size
