"""A kernel defined in a notebook cell is read as the code that runs. IPython compiles each top-level statement
of a cell as a module of its own, and the code of a def depends on its module's imports (`cuda.syncthreads()`
beside `from numba import cuda` compiles to other bytecode), so the check that a kernel's file has not changed
since it was defined must compile the def both ways."""
import ast
import linecache

import pytest

from tiledlab.core import contract

CELL = "from numba import cuda\n\n\ndef kernel(A, B, C):\n    cuda.syncthreads()\n"


def defined(source, name, one_statement_at_a_time):
    filename = f"<cell {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {}
    modules = [ast.Module([node], []) for node in ast.parse(source).body] if one_statement_at_a_time else [source]
    for module in modules:
        exec(compile(module, filename, "exec"), scope)
    return scope["kernel"], filename


@pytest.mark.parametrize("one_statement_at_a_time", [True, False], ids=["as IPython runs a cell", "as a file"])
def test_a_kernel_s_own_source_is_read(one_statement_at_a_time):
    kernel, _ = defined(CELL, f"read {one_statement_at_a_time}", one_statement_at_a_time)
    assert contract.syntax_tree(kernel, "kernel").name == "kernel"


def test_a_cell_changed_since_the_kernel_was_defined_is_still_refused():
    kernel, filename = defined(CELL, "edited", True)
    edited = CELL.replace("cuda.syncthreads()", "cuda.syncwarp()")
    linecache.cache[filename] = (len(edited), None, edited.splitlines(True), filename)
    with pytest.raises(ValueError, match="changed since the kernel was defined"):
        contract.syntax_tree(kernel, "kernel")
