"""Generated kernels as Kernel objects: `unrolled.generate_source` writes their code for each set of constants.
A split-K kernel's S blocks share a BM×BN tile of C: a block covers BM × BN/S and adds into C."""
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

    def write(constants):  # (kernel source, helper source)
        return unrolled.generate_source(**constants, **options, name=name), unrolled.generate_helpers(constants["TN"])

    def bound(fn):  # `fn` with the options it names bound: a function of the constants alone
        return partial(fn, **{k: options[k] for k in names(fn) if k in options})
    rules = tuple(unrolled.RULES) + tuple(Rule(bound(r.holds), r.why, r.quotes) for r in unrolled.OPTION_RULES)
    # a split-K block covers its share of the BM×BN tile `splits` blocks share
    block = bound(lambda BM, BN, splits: (BM, BN // splits)) if options["splits"] > 1 else block_tile
    kernel = Kernel(name, Generated(write, given), constants=dict(BM=BM, BN=BN, BK=BK, TM=TM, TN=TN),
                    rules=rules, block=block, threads=thread_tiles, idea=idea, min_blocks=min_blocks,
                    family=family, compute_capability=CP_ASYNC if options["stages"] else ANY_CARD,
                    shared=bound(unrolled.shared_memory), clamped=options["edge"] == "clamp")
    kernel.bind()  # bad options or defaults are refused here, where the kernel is made
    return kernel
