"""The generator's conditions are written once, as rules with reasons (`unrolled.RULES` over the constants,
`unrolled.OPTION_RULES` over the options), and every bad choice is a ValueError that names it: never a
ZeroDivisionError, a TypeError, or a kernel that writes past its shared tiles."""
import numpy as np
import pytest

import tiledlab
from tiledlab.core import unrolled
from tiledlab.core.rules import Rule, enforce_all
from tiledlab.core.unrolled import generate_source

DEFAULTS = dict(BM=128, BN=128, BK=8, TM=8, TN=8)


@pytest.mark.parametrize("constants", [dict(BK=0), dict(BM=0), dict(BN=0), dict(TM=0), dict(TN=0), dict(BM=-128),
                                       dict(BK=-8), dict(TM=-8, TN=-8), dict(BK=2.5)])
def test_zero_negative_or_fractional_constants_are_refused(constants):
    with pytest.raises(ValueError, match="positive whole numbers"):
        generate_source(**constants)


BROKEN = [  # (constants, the reason the generator gives): each breaks one rule of RULES
    (dict(BM=100), "a thread computes TM×TN of the block's BM×BN"),
    (dict(TM=2, BM=64), "groups of 4"),
    (dict(BM=32, TM=8, BN=32, TN=8), "whole warps"),
    (dict(BM=256, BN=256, TM=4, TN=4), "at most 1024 threads per block"),
    (dict(BM=64, BN=80, TM=4, TN=4), "a warp loads 32 neighbouring floats of a row of B"),
    (dict(BK=12), "one row of B per warp"),
    (dict(BM=48, BN=128, BK=12, TM=4, TN=4), "A's BM×BK tile splits evenly over the threads"),
]


@pytest.mark.parametrize("constants,why", BROKEN)
def test_each_rule_on_the_constants_refuses_with_its_reason(constants, why):
    with pytest.raises(ValueError, match=f"^gen: [^;]*{why}[^;]*; "):
        generate_source(**{**DEFAULTS, **constants}, name="gen")
    with pytest.raises(ValueError, match=why):
        enforce_all(unrolled.RULES, {**DEFAULTS, **constants}, "gen")


@pytest.mark.parametrize("options,name", [
    (dict(edge="bogus"), "edge"), (dict(loads="cols"), "loads"), (dict(buffers=3), "buffers"),
    (dict(transposed="yes"), "transposed"), (dict(uidx=1), "uidx"), (dict(prefetch=None), "prefetch"),
    (dict(pad=2), "pad"), (dict(pad=-4), "pad"), (dict(pad=4.0), "pad"),
    (dict(warp=5), "warp"), (dict(warp=(4, 4)), "warp"), (dict(warp=(1, 32)), "warp"), (dict(warp="48"), "warp"),
    (dict(loads="spread", BK=512, BM=128, BN=32, TM=4, TN=4), "loads"),  # 256 threads, 512 columns of A
    (dict(BM=64, BN=96, BK=24, TM=8, TN=8), "loads"),  # 96 threads, 16 k of a row each: does not divide 24
])
def test_a_bad_option_is_a_value_error_naming_it(options, name):
    with pytest.raises(ValueError, match=rf"{name}=") as refused:
        generate_source(**options, name="gen")
    assert str(refused.value).startswith("gen: ")


def test_an_option_the_generator_does_not_take_is_a_value_error_naming_it():
    from tiledlab.core.generated import generated
    for make in (generate_source, lambda **o: generated("gen", **o)):
        with pytest.raises(ValueError, match=r"unknown options \['stage'\]; generate_source takes transposed, "):
            make(stage=2)


def test_rules_are_written_once():
    assert unrolled.RULES and all(isinstance(r, Rule) for r in unrolled.RULES + unrolled.OPTION_RULES)
    assert not hasattr(unrolled, "GEOMETRY")  # no second, eval'd copy of the rules
    from tiledlab.core import registry
    assert registry.KERNELS["gen_prefetch"].rules[:len(unrolled.RULES)] == tuple(unrolled.RULES)  # the kernel's own
    enforce_all(unrolled.RULES, DEFAULTS)  # the defaults keep every rule
    enforce_all(unrolled.OPTION_RULES, {**DEFAULTS, **unrolled.OPTIONS})


def test_a_zero_tile_step_is_refused_before_launch():
    A = np.ones((8, 8), np.float32)
    with pytest.raises(ValueError, match="positive whole numbers"):
        tiledlab.matmul(A, A, "gen_prefetch", BK=0)
