"""A kernel's kind is data on it (Kernel.kind, registry.kind for the peers in measured rows), and one
function names it on a page (registry.label): no behaviour is decided by comparing a kernel's name."""
import ast
import copy
import pathlib

import pandas as pd

from tiledlab.core import registry
from tiledlab.core.registry import KERNELS, PEERS, kind, label, predicted
from tiledlab.notebook import claims, plots

ROOT = pathlib.Path(registry.__file__).resolve().parents[1]
NAMES = set(KERNELS) | set(PEERS)


def _names(node):
    """The kernel names a compared operand spells: a string, a tuple/list/set of them, or KERNELS["…"]."""
    if isinstance(node, ast.Constant) and node.value in NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for e in node.elts for n in _names(e)]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "KERNELS":
        return [ast.unparse(node)]
    return []


def _other(node):
    """An operand whose value may equal a kernel's name without being one: a kind (`k.kind`, `kind(name)`,
    also "naive" or "tiled"), a timing view of notebook.timings, or a table's column (selecting rows by a name
    is data, not a decision)."""
    return "kind" in ast.unparse(node) or (isinstance(node, ast.Name) and node.id == "view") or \
        (isinstance(node, ast.Subscript) and not _names(node))


def name_comparisons(path):
    """`kernel == "cublas"`, `name in ("naive", …)`, `k is KERNELS["naive"]`: comparisons of a value with a
    kernel's name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_names(o) for o in operands) and not any(_other(o) for o in operands):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_behaviour_is_decided_by_comparing_a_kernel_name():
    found = [hit for path in sorted(ROOT.rglob("*.py")) for hit in name_comparisons(path)]
    assert found == []


def test_the_scan_finds_a_comparison_with_a_name(tmp_path):
    (tmp_path / "x.py").write_text('if kernel == "cublas" or k in (KERNELS["naive"],) or t["kernel"] == "tiled":\n'
                                   '    pass\n')
    assert name_comparisons(tmp_path / "x.py") == ["x.py:1: kernel == 'cublas'", "x.py:1: k in (KERNELS['naive'],)"]


def test_a_renamed_kernel_keeps_its_kind_and_its_prediction():
    tree = copy.deepcopy(KERNELS["naive"].bind().code.tree)
    tree.name = "naive_renamed"
    renamed = KERNELS["naive"].changed(tree)
    assert renamed.kind == "naive" and renamed.bind().kernel.kind == "naive"  # the Build carries it
    assert predicted(renamed, 33, 17, 45) == predicted("naive", 33, 17, 45)


def test_every_kernel_and_peer_has_a_kind():
    assert {kind(k) for k in NAMES} == {"naive", "tiled", "register", "peer"}
    assert [k for k in KERNELS if kind(k) == "naive"] == ["naive", "naive_unsigned"]
    assert kind("best") is None


def test_one_label_for_a_peer_in_a_sentence_and_in_a_figure():
    table = pd.DataFrame([{"run": 1, "kernel": "tiled", "N": 64, "tile": 8, "median_ms": 1.0}])
    missing = claims.compare(table, dict(kernel="tiled", N=64, tile=8), dict(kernel="cublas", N=64, tile=0))
    assert missing == "cuBLAS (CuPy): not in the committed data" and plots.label("cublas", 0) == "cuBLAS (CuPy)"
    assert plots.label is label  # one function: a figure names the fair pair in words, a sentence by its name
    assert (label("naive_unsigned", 8), label("naive_unsigned", 8, by_name=True)) == (
        "naive (8×8 blocks), unsigned indices", "naive_unsigned (8×8 blocks)")


def test_the_fair_pairs_style_follows_its_kind():
    assert plots.kind_style("naive_unsigned", 16)[:3] == ("-.", "o", "C9")
    assert plots.kind_style("tiled_unsigned", 16)[:3] == ("-.", "s", plots.TILE_COLOR[16])
    ranks = [plots.kind_style(k, None)[3] for k in ("naive", "naive_unsigned", "tiled", "tiled_unsigned",
                                                    "regtile_2d", "cublas")]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
