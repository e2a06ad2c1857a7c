"""Generated kernels as Kernel objects: code written by `unrolled.generate_source` for each set of
constants (the unrolled code itself changes with them), with the register tiles' geometry."""
from functools import partial

from . import unrolled
from .card import CP_ASYNC
from .kernel import ANY_CARD, Generated, Kernel
from .formulas import thread_tiles
from .regtile import block_tile
from .rules import Rule, names


def generated(name, BM=128, BN=128, BK=8, TM=8, TN=8, idea="", min_blocks=None, family="student", **options):
    """The generated kernel `name` with these default constants; `options` as in `generate_source`."""
    given, options = options, unrolled.with_defaults(options)

    def write(constants):
        """(kernel source, helper source) at these constants."""
        return (unrolled.generate_source(**constants, **options, name=name),
                unrolled.generate_helpers(constants["TN"]))
    shared = partial(unrolled.shared_memory, **{k: options[k] for k in names(unrolled.shared_memory) if k in options})
    kernel = Kernel(name, Generated(write, given), constants=dict(BM=BM, BN=BN, BK=BK, TM=TM, TN=TN),
                    rules=rules(options), block=block_tile, threads=thread_tiles, idea=idea, min_blocks=min_blocks,
                    family=family, compute_capability=CP_ASYNC if options["stages"] else ANY_CARD, shared=shared,
                    clamped=options["edge"] == "clamp")
    kernel.bind()  # bad options or defaults are refused here, where the kernel is made
    return kernel


def rules(options):
    """The generator's rules on the constants, then those on the options, with the options bound."""
    def bound(rule):
        given = {k: options[k] for k in names(rule.holds) if k in options}
        return Rule(partial(rule.holds, **given), rule.why)
    return tuple(unrolled.RULES) + tuple(bound(r) for r in unrolled.OPTION_RULES)

