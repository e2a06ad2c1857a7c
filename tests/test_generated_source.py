"""The generator writes the same text it always wrote: the SHA-256 of every generated kernel of the registry
(read from the registry, so a new rung brings its own case) and of a grid of other valid options (pipelines
and register fragments included) is fixed in tests/data/generated_source_sha256.json. A refactor of
`generate_source` that changes one character of any kernel fails here (regenerate the fixture only for a
change you mean: `python tests/test_generated_source.py`)."""
import hashlib
import itertools
import json
import pathlib

import pytest

from kernel_cases import generator_options, grid, tile
from tiledlab.core import unrolled
from tiledlab.core.registry import KERNELS
from tiledlab.core.unrolled import generate_source

FIXTURE = pathlib.Path(__file__).parent / "data" / "generated_source_sha256.json"
REGISTRY = [(k.name, tile(k), generator_options(k)) for k in KERNELS.values() if generator_options(k) is not None]
# Every edge × loads × buffers × warp × prefetch, on tiles whose A load differs (one row per thread, a
# part of a row, several passes), with transposed, uidx and pad varied along the way.
SHAPES = [(128, 128, 8, 8, 8), (32, 64, 8, 4, 8), (64, 64, 16, 4, 4), (256, 128, 8, 16, 8), (64, 64, 8, 4, 4)]
GRID = [("grid", shape, dict(edge=edge, loads=loads, buffers=buffers, warp=warp, prefetch=prefetch,
                             transposed=i % 3 != 2, uidx=i % 2 == 0, pad=(4, 0, 8)[i % 3]))
        for i, (shape, edge, loads, buffers, warp, prefetch) in enumerate(itertools.product(
            SHAPES, ("zero", "clamp"), ("rows", "spread"), (1, 2), (None, (4, 8)), (True, False)))]


def _valid(case):
    try:
        digest(*case)
    except ValueError:
        return False
    return True


# Pipelines (stages, either way of bringing A) and register fragments, on every shape where they fit.
PIPELINES = [("stages", shape, {**way, **more}) for shape, more in grid(SHAPES, stages=(2, 3, 4), warp=(None, (4, 8)))
             for way in (unrolled.ASYNC, unrolled.HYBRID)]
FRAGMENTS = [("fragments", shape, {**unrolled.FRAGMENTS, "fragments": 2, **more})
             for shape, more in grid(SHAPES + [(64, 32, 8, 4, 4)], warp=(None, (4, 8), (16, 2)))]
def key(name, tile, options):
    return f"{name} {'x'.join(map(str, tile))} " + " ".join(f"{k}={v}" for k, v in sorted(options.items()))


def digest(name, tile, options):
    text = generate_source(**dict(zip(("BM", "BN", "BK", "TM", "TN"), tile)), **options, name=name)
    return hashlib.sha256(text.encode()).hexdigest()


CASES = REGISTRY + GRID + [c for c in PIPELINES + FRAGMENTS if _valid(c)]


@pytest.mark.parametrize("case", CASES, ids=[key(*c) for c in CASES])
def test_generated_source_is_unchanged(case):
    assert digest(*case) == json.loads(FIXTURE.read_text())[key(*case)]


def test_the_fixture_covers_exactly_these_cases():
    assert sorted(json.loads(FIXTURE.read_text())) == sorted(key(*c) for c in CASES)


if __name__ == "__main__":  # new cases are added; a case whose text changed is rewritten only with --rewrite
    import sys
    old = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    new = {key(*c): digest(*c) for c in CASES}
    changed = sorted(k for k in new if k in old and old[k] != new[k])
    if changed and "--rewrite" not in sys.argv:
        sys.exit("these cases changed (run with --rewrite if you mean it):\n" + "\n".join(changed))
    FIXTURE.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
