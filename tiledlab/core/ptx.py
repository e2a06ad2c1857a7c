"""What numba-cuda has no words for: a 128-bit load and an asynchronous copy (in PTX), and shared tiles beyond 48 KiB.

* `ldg4(A, i, j)` reads A[i, j:j+4] with one `ld.global.nc.v4.f32` (SASS `LDG.E.128.CONSTANT`, the read-only path:
  A must not change while the kernel runs); numba writes four 32-bit loads, not knowing A[i, j] is 16-byte aligned.
* `cp_async4(sA, di, dj, A, si, sj)` copies A[si, sj:sj+4] into sA[di, dj:dj+4] with `cp.async.cg.shared.global`
  (SASS `LDGSTS`), past the registers: the thread goes on and the copy lands later. `cp_async_commit()` closes the
  copies issued so far into a group; after `cp_async_wait(n)` at most the n newest groups are in flight, and the
  data is there for this thread (for the block after a `cuda.syncthreads()`). n > 0 overlaps the next tile's loads.

    a0, a1, a2, a3 = ldg4(A, row, k)      # A[row, k:k+4]: one LDG.E.128 instead of four LDG.E
    cp_async4(sB, ty, 4 * tx, B, kb, cb)  # B[kb, cb:cb+4] → sB[ty, 4tx:4tx+4], past the registers
    cp_async_commit()                     # this step's copies make one group
    cp_async_wait(0)                      # ... which has landed, for this thread
    cuda.syncthreads()                    # ... and for every thread of the block

numba-cuda 0.30.4 (kept for its simulator) has neither: these are intrinsics emitting llvmlite `ir.InlineAsm`, as
numba-cuda's own `cuda.ldcg` does. The caller keeps the contract (the simulator checks it, a GPU faults or reads
garbage): float32, 2-D, C-contiguous arrays; cp_async4's `dst` a `cuda.shared.array(..., alignment=16)`, the others
kernel arguments never written while it runs; j % 4 == 0 and rows of a multiple of 4 floats; all four elements
inside the array, no negative index; `cp_async_wait`'s n known when the kernel compiles.

Beyond 48 KiB a block's tiles are views `sA = shared_view(smem, offset, rows, cols)` (numbers known at compile time)
of `smem = cuda.shared.array(0, float32, alignment=16)`. `DynamicShared(kernel, nbytes)` raises the kernel's limit
(up to 227 KiB on an H100/H200) and reserves `nbytes` at every launch (a read past them ends the CUDA context).
On the simulator each name is a Python function that checks the contract; commit and wait do nothing.
"""
import numpy as np

from ..backend import SIMULATOR
from .card import VEC  # floats per instruction: 4 × 32 bits = 128 bits = 16 bytes
from .rules import is_whole
from ..i18n import _

BYTES = 4 * VEC


def _ldg4_sim(arr, i, j):
    """A[i, j:j+4] as a 4-tuple of float32 (the simulator's ldg4)."""
    _check("ldg4", arr, i, j)
    return (arr[i, j], arr[i, j + 1], arr[i, j + 2], arr[i, j + 3])


def _cp_async4_sim(dst, di, dj, src, si, sj):
    """dst[di, dj:dj+4] = src[si, sj:sj+4], at once (the simulator's cp_async4)."""
    _check("cp_async4 (shared destination)", dst, di, dj)
    _check("cp_async4 (global source)", src, si, sj)
    for q in range(VEC):
        dst[di, dj + q] = src[si, sj + q]


def _cp_async_commit_sim():
    """Nothing to group: on the simulator every copy has landed already."""


def _cp_async_wait_sim(n):
    """Nothing to wait for on the simulator; n must still be a whole number ≥ 0, as on a GPU."""
    if not is_whole(n) or n < 0:
        raise TypeError(f"cp_async_wait(n): n must be a whole number ≥ 0 known when the kernel compiles, got {n!r}")


def _shared_view_sim(base, offset, rows, cols):
    """base[offset : offset + rows·cols] as a rows×cols array (the simulator's shared_view)."""
    if offset % VEC or offset < 0 or (offset + rows * cols) > len(base):
        raise IndexError(f"shared_view: floats {offset} .. {offset + rows * cols} of a dynamic shared memory of "
                         f"{len(base)} floats: the launch reserves too few bytes, or the view is not 16-byte aligned")
    return base[offset:offset + rows * cols].reshape(rows, cols)


def _check(what, arr, i, j):
    """Raise where the GPU instruction would fault (misaligned) or read outside the array."""
    if arr.dtype != np.float32 or len(arr.shape) != 2:
        raise TypeError(f"{what}: needs a 2-D float32 array, got {len(arr.shape)}-D {arr.dtype}")
    rows, cols = arr.shape
    if not (0 <= i < rows and 0 <= j and j + VEC <= cols):
        raise IndexError(f"{what}: elements [{i}, {j}:{j + VEC}] are not all inside the {rows}×{cols} array; "
                         "guard the edges with scalar reads")
    offset = i * arr.strides[0] + j * arr.strides[1]
    if arr.strides[1] != arr.dtype.itemsize or offset % BYTES:
        raise ValueError(f"{what}: [{i}, {j}] of a {rows}×{cols} array is {offset} bytes from its start, not on a "
                         f"16-byte boundary (a misaligned address on a GPU): keep j % 4 == 0 and rows of a "
                         "multiple of 4 floats")


def _gpu_definitions():
    """(ldg4, cp_async4, cp_async_commit, cp_async_wait) as numba intrinsics emitting inline PTX."""
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.core.errors import NumbaTypeError, RequireLiteralValue
    from numba.cuda.extending import intrinsic
    f32, i32 = ir.FloatType(), ir.IntType(32)

    def check_array(name, arr):
        if not (isinstance(arr, types.Array) and arr.dtype == types.float32 and arr.ndim == 2 and
                arr.layout == "C"):
            raise NumbaTypeError(f"{name} needs a 2-D C-contiguous float32 array, got {arr}")

    def check_indices(name, *indices):
        if not all(isinstance(k, types.Integer) for k in indices):
            raise NumbaTypeError(f"{name} needs integer indices, got {', '.join(map(str, indices))}")

    def element_pointer(context, builder, arr_type, arr, index_types, indices):
        # The address of arr[i, j] (a generic float*): no wraparound, no bounds check, as the contract says.
        ary = context.make_array(arr_type)(context, builder, value=arr)
        inds = [context.cast(builder, v, t, types.intp) for v, t in zip(indices, index_types)]
        return cgutils.get_item_pointer(context, builder, arr_type, ary, inds, wraparound=False)

    @intrinsic
    def ldg4(typingctx, arr, i, j):
        check_array("ldg4", arr)
        check_indices("ldg4", i, j)
        sig = types.UniTuple(types.float32, VEC)(arr, i, j)

        def codegen(context, builder, sig, args):
            arr_type, i_type, j_type = sig.args
            ptr = element_pointer(context, builder, arr_type, args[0], (i_type, j_type), args[1:])
            fnty = ir.FunctionType(ir.LiteralStructType([f32] * VEC), [ptr.type])
            # Four float outputs ($0..$3), a 64-bit address ($4), no side effect: LLVM may move or merge it
            load = ir.InlineAsm(fnty, "ld.global.nc.v4.f32 {$0, $1, $2, $3}, [$4];", "=f,=f,=f,=f,l")
            four = builder.call(load, [ptr])
            return cgutils.pack_array(builder, [builder.extract_value(four, q) for q in range(VEC)])
        return sig, codegen

    @intrinsic
    def cp_async4(typingctx, dst, di, dj, src, si, sj):
        check_array("cp_async4's shared destination", dst)
        check_array("cp_async4's global source", src)
        check_indices("cp_async4", di, dj, si, sj)
        sig = types.none(dst, di, dj, src, si, sj)

        def codegen(context, builder, sig, args):
            dst_type, di_type, dj_type, src_type, si_type, sj_type = sig.args
            to = element_pointer(context, builder, dst_type, args[0], (di_type, dj_type), args[1:3])
            source = element_pointer(context, builder, src_type, args[3], (si_type, sj_type), args[4:6])
            # numba keeps a shared array's address as a generic pointer; cp.async wants its 32-bit offset in
            # the shared window (LLVM folds the cast into the array's own address)
            shared = builder.ptrtoint(builder.addrspacecast(to, ir.PointerType(f32, addrspace=3)), i32)
            fnty = ir.FunctionType(ir.VoidType(), [i32, source.type])
            copy = ir.InlineAsm(fnty, f"cp.async.cg.shared.global [$0], [$1], {BYTES};", "r,l,~{memory}",
                                side_effect=True)
            builder.call(copy, [shared, source])
            return context.get_dummy_value()
        return sig, codegen

    def group_instruction(text):
        def codegen(context, builder, sig, args):
            # A side effect and a memory clobber: LLVM must not move loads of shared memory across it.
            builder.call(ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), text, "~{memory}", side_effect=True), [])
            return context.get_dummy_value()
        return codegen

    @intrinsic
    def cp_async_commit(typingctx):
        return types.none(), group_instruction("cp.async.commit_group;")

    @intrinsic
    def cp_async_wait(typingctx, n):
        if not isinstance(n, types.IntegerLiteral):
            raise RequireLiteralValue(f"cp_async_wait(n): n must be known when the kernel compiles, got {n}")
        if n.literal_value < 0:
            raise NumbaTypeError(f"cp_async_wait(n): n must be ≥ 0, got {n.literal_value}")
        return types.none(n), group_instruction(f"cp.async.wait_group {n.literal_value};")

    @intrinsic
    def shared_view(typingctx, base, offset, rows, cols):
        if not (isinstance(base, types.Array) and base.dtype == types.float32 and base.ndim == 1):
            raise NumbaTypeError(f"shared_view needs the 1-D float32 dynamic shared array, got {base}")
        if not all(isinstance(n, types.IntegerLiteral) for n in (offset, rows, cols)):
            raise RequireLiteralValue("shared_view(smem, offset, rows, cols): numbers known when it compiles")
        start, r, c = (n.literal_value for n in (offset, rows, cols))
        view = types.Array(types.float32, 2, "C")

        def codegen(context, builder, sig, args):
            # constant offset, shape and strides: LLVM folds them, so each sA[i, j] is one access, as in a static tile
            data = builder.gep(context.make_array(base)(context, builder, value=args[0]).data,
                               [ir.Constant(ir.IntType(64), start)], inbounds=True)
            out = context.make_array(view)(context, builder)
            n = lambda v: context.get_constant(types.intp, v)  # noqa: E731
            context.populate_array(out, data=data, shape=[n(r), n(c)], strides=[n(4 * c), n(4)], itemsize=n(4),
                                   meminfo=None)
            return out._getvalue()
        return view(base, offset, rows, cols), codegen

    return ldg4, cp_async4, cp_async_commit, cp_async_wait, shared_view


class DynamicShared:
    """A compiled kernel whose every launch reserves `nbytes` of dynamic shared memory (see the module's docstring)."""

    def __init__(self, kernel, nbytes):
        self.kernel, self.nbytes, self._raised = kernel, int(nbytes), set()

    def __getattr__(self, name):  # overloads, py_func ...: those of the compiled kernel
        if name == "kernel":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __getitem__(self, config):
        grid, block, stream = (tuple(config) + (0,))[:3]

        def launch(*args):
            if not SIMULATOR:
                self._raise_limit(args)
            return self.kernel[grid, block, stream, self.nbytes](*args)
        return launch

    def _raise_limit(self, args):
        from numba.cuda.cudadrv.driver import binding, driver
        types = tuple(self.kernel.typeof_pyval(a) for a in args)
        if types in self._raised:
            return
        f = self.kernel.compile(types)._codelibrary.get_cufunc()  # compiled, never launched with too few bytes
        attribute = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        try:
            driver.cuKernelSetAttribute(attribute, self.nbytes, f.handle, f.device.id)
        except Exception as error:  # noqa: BLE001  the driver's own error: more than this card gives
            raise ValueError(_("a block of this kernel needs {n:,} bytes of shared memory, more than this GPU gives "
                               "one block ({error}): choose smaller tiles or fewer stages").format(
                                   n=self.nbytes, error=error)) from None
        self._raised.add(types)


ldg4, cp_async4, cp_async_commit, cp_async_wait, shared_view = (
    (_ldg4_sim, _cp_async4_sim, _cp_async_commit_sim, _cp_async_wait_sim, _shared_view_sim) if SIMULATOR
    else _gpu_definitions())

SIGNATURES = {"ldg4": ("A", "i", "j"), "cp_async4": ("sA", "di", "dj", "A", "si", "sj"), "cp_async_commit": (),
              "cp_async_wait": ("n",), "shared_view": ("smem", "offset", "rows", "cols")}  # each one's parameters
FUNCTIONS = {globals()[name]: name for name in SIGNATURES}  # each function → its name

__all__ = ["ldg4", "cp_async4", "cp_async_commit", "cp_async_wait", "shared_view", "DynamicShared", "VEC"]
