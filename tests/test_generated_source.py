"""The generator writes the same text it always wrote: the SHA-256 of every registry kernel's source and of
a grid of other valid options is fixed in tests/data/generated_source_sha256.json. A refactor of
`generate_source` that changes one character of any kernel fails here (regenerate the fixture only for a
change you mean: `python tests/test_generated_source.py`)."""
import hashlib
import itertools
import json
import pathlib

import pytest

from tiledlab.core.unrolled import generate_source

FIXTURE = pathlib.Path(__file__).parent / "data" / "generated_source_sha256.json"
TILE = (128, 128, 8, 8, 8)
SIMPLE = dict(transposed=True, edge="zero", loads="spread", uidx=False, prefetch=False)
REGISTRY = [  # (name, tile, options): the generated entries of tiledlab/core/registry.py, as `_gen` builds them
    ("gen_unrolled_sA_mk", TILE, {**SIMPLE, "transposed": False}),
    ("gen_unrolled", TILE, SIMPLE),
    ("gen_cheap_loads", TILE, dict(prefetch=False)),
    ("gen_prefetch", TILE, {}),
    ("gen_double", TILE, dict(buffers=2)),
    ("gen_double_lb", TILE, dict(buffers=2)),
    ("gen_warp", TILE, dict(warp=(4, 8))),
    ("s_128x256x8_8x16", (128, 256, 8, 8, 16), {}),
    ("s_128x256x8_8x16_db", (128, 256, 8, 8, 16), dict(buffers=2)),
    ("s_128x256x8_8x16_warp", (128, 256, 8, 8, 16), dict(warp=(4, 8))),
    ("s_256x128x8_16x8", (256, 128, 8, 16, 8), {}),
    ("s_128x128x8_8x16", (128, 128, 8, 8, 16), {}),
    ("s_128x128x16_8x8", (128, 128, 16, 8, 8), {}),
    ("s_64x128x8_8x8_db", (64, 128, 8, 8, 8), dict(buffers=2)),
    ("s_64x64x8_4x4", (64, 64, 8, 4, 4), dict(buffers=2)),
]
# Every edge × loads × buffers × warp × prefetch, on tiles whose A load differs (one row per thread, a
# part of a row, several passes), with transposed, uidx and pad varied along the way.
SHAPES = [(128, 128, 8, 8, 8), (32, 64, 8, 4, 8), (64, 64, 16, 4, 4), (256, 128, 8, 16, 8), (64, 64, 8, 4, 4)]
GRID = [("grid", shape, dict(edge=edge, loads=loads, buffers=buffers, warp=warp, prefetch=prefetch,
                             transposed=i % 3 != 2, uidx=i % 2 == 0, pad=(4, 0, 8)[i % 3]))
        for i, (shape, edge, loads, buffers, warp, prefetch) in enumerate(itertools.product(
            SHAPES, ("zero", "clamp"), ("rows", "spread"), (1, 2), (None, (4, 8)), (True, False)))]
CASES = REGISTRY + GRID


def key(name, tile, options):
    return f"{name} {'x'.join(map(str, tile))} " + " ".join(f"{k}={v}" for k, v in sorted(options.items()))


def digest(name, tile, options):
    text = generate_source(**dict(zip(("BM", "BN", "BK", "TM", "TN"), tile)), **options, name=name)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("case", CASES, ids=[key(*c) for c in CASES])
def test_generated_source_is_unchanged(case):
    assert digest(*case) == json.loads(FIXTURE.read_text())[key(*case)]


def test_the_fixture_covers_exactly_these_cases():
    assert sorted(json.loads(FIXTURE.read_text())) == sorted(key(*c) for c in CASES)


if __name__ == "__main__":
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps({key(*c): digest(*c) for c in CASES}, indent=1, sort_keys=True) + "\n")
