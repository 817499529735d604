"""The arena executor: a debug mode that runs a planned model (`plan-memory`) layer by
layer with every intermediate tensor written into and read back from one numpy buffer
per memory, at its planned offset, to prove the plan: if two tensors that are live
together shared bytes, or an alias rule kept a tensor where its producer does not write
it, the outputs would change.

Each layer runs its own kernel, jitted on its operands as `lowering.lower` calls it
(`evaluate` does the same for constant folding): the float type of its function's
delegate, the model's integer semantics, operands laid out as the program lays them
out. A reshape or a concatenation in place writes nothing: its bytes must already be
where the plan says, written by the layers before it. Function arguments, results and
weights are placed by rule and stay ordinary arrays; a call runs the callee with its
own arena.

XLA contracts a float32 multiply in one layer and an add in the next into one fused
multiply-add when it compiles the whole program, which no layer-by-layer execution
does; so the proof compares the arena run with the same layers run without an arena
(`in_arena=False`), bit for bit, and with the program: bit for bit on the NPU's
float16 (every layer's result is rounded to float16 at its boundary in both) and
integers, within one float32 rounding on float32.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.backends.jax import lowering
from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    as_kernel_operand,
    callee_of,
    delegate_float_dtype,
    kernel_for,
)
from synapc.backends.targets import Target
from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap.attributes import IntegerSemantics
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import device_dtype, numpy_dtype
from synapc.passes.common import op_label
from synapc.passes.memory.liveness import Liveness, liveness, value_key
from synapc.passes.memory.placement import placement_of, plan_of
from synapc.weights import WeightStore


class ArenaExecutor:
    """Runs a planned module's ``@main`` through its arenas (see the module
    docstring). The jitted layer programs are kept between runs."""

    def __init__(
        self,
        module: ModuleOp,
        weights: WeightStore,
        target: Target,
        semantics: IntegerSemantics = IntegerSemantics.TFLITE,
        in_arena: bool = True,
    ) -> None:
        lowering.load_kernels()
        #: False: the same layers, their results kept as arrays (the control run)
        self.in_arena = in_arena
        self.module = module
        self.weights = weights
        self.target = target
        self.semantics = semantics
        self._programs: dict[Operation, jax.stages.Wrapped] = {}
        #: the arenas of the last run, by function name: what the plan was proven on
        self.arenas: dict[str, dict[str, np.ndarray]] = {}

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The outputs of ``@main`` on `inputs` (numpy arrays in model order)."""
        main = next(
            f for f in self.module.body.block.ops
            if isinstance(f, FuncOp) and f.sym_name.data == "main"
        )  # fmt: skip
        outputs = self._run_function(main, [jnp.asarray(x) for x in inputs])
        types = main.function_type.outputs.data
        # converted on the host: JAX holds no float64 (a float64 output is float32 there)
        return [
            np.asarray(y).astype(device_dtype(numpy_dtype(t.element_type)))  # type: ignore[attr-defined]
            for y, t in zip(outputs, types, strict=True)
        ]

    def _run_function(self, func: FuncOp, args: Sequence[jax.Array]) -> list[jax.Array]:
        plan = plan_of(func)
        if plan is None:
            raise UnsupportedOpError(
                f"@{func.sym_name.data} has no memory plan: run plan-memory first"
            )
        ctx = LoweringContext(delegate_float_dtype(func, self.target), self.semantics)
        float_bytes = ctx.float_dtype.itemsize
        live = liveness(func, float_bytes, plan.get("alignment", 1))
        memories = {
            "ddr": np.zeros(plan["arena"], np.uint8),
            "sram": np.zeros(plan["sram"], np.uint8),
        }
        self.arenas[func.sym_name.data] = memories
        places: dict[SSAValue, tuple[str, int]] = {}
        views = _views(live)
        env: dict[SSAValue, jax.Array] = {}
        for arg, x in zip(func.body.block.args, args, strict=True):
            env[arg] = x.astype(ctx.dtype_of(arg))

        def read(value: SSAValue) -> jax.Array:
            if value in places:
                memory, offset = places[value]
                dtype = ctx.dtype_of(value)
                shape = tuple(value.type.get_shape())  # type: ignore[attr-defined]
                count = int(np.prod(shape, dtype=np.int64))
                array = np.frombuffer(memories[memory], dtype, count, offset)
                return jnp.asarray(array.reshape(shape))
            return env[value]

        for position, op in enumerate(func.body.block.ops):
            if isinstance(op, ReturnOp):
                return [read(v) for v in op.operands]
            if isinstance(op, ConstantOp):
                env[op.results[0]] = jnp.asarray(
                    as_kernel_operand(self.weights[op.handle], ctx)
                )
                continue
            operands = [read(v) for v in op.operands]
            if isinstance(op, CallOp):
                results = self._run_function(callee_of(func, op), operands)
            else:
                results = self._run_layer(op, operands, ctx, op_label(op, position))
            placed = placement_of(op)
            if placed is None:
                raise UnsupportedOpError(f"{op_label(op, position)}: no synap.placement")
            for value, result, place in zip(op.results, results, placed, strict=True):
                if place is None or not self.in_arena:
                    env[value] = result
                    continue
                places[value] = place
                if value_key(value) in views:
                    continue  # its bytes are already where the plan puts them
                memory, offset = place
                # as the kernel hands it back: a CPU op of a float16 program (the
                # detection post-process) computes float32, and its bytes must fit
                raw = np.ascontiguousarray(np.asarray(result)).view(np.uint8).reshape(-1)
                planned = live.tensors[value_key(value)].size
                if raw.size != planned or offset + raw.size > memories[memory].size:
                    raise UnsupportedOpError(
                        f"{op_label(op, position)}: its result takes {raw.size} bytes at "
                        f"{memory}@{offset}; the plan gives it {planned} of "
                        f"{memories[memory].size}"
                    )
                memories[memory][offset : offset + raw.size] = raw
        raise UnsupportedOpError(f"@{func.sym_name.data} has no return")

    def _run_layer(
        self, op: Operation, operands: list[jax.Array], ctx: LoweringContext, label: str
    ) -> list[jax.Array]:
        """`op`'s results from `operands`, laid out and computed as the program
        computes them (`lowering.layer_results`), jitted on their own."""
        args = lowering.kernel_args(op, operands)
        program = self._programs.get(op)
        if program is None:
            kernel = kernel_for(op, ctx)

            def run(*xs: jax.Array, _kernel=kernel, _op=op) -> list[jax.Array]:
                return lowering.layer_results(_kernel, _op, list(xs), ctx, label)

            program = self._programs[op] = jax.jit(run)
        return list(program(*args))


def _views(live: Liveness) -> set[str]:
    """Keys of the results whose bytes their layer does not write: a reshape's kept
    inside its input, a concatenation whose operands were written inside it."""
    views = set()
    for key, tensor in live.tensors.items():
        op = tensor.value.owner
        # a reshape kept inside its own input (not one whose bytes a concatenation
        # holds: that one writes them)
        reshaped = isinstance(op, dm.ReshapeOp) and live.alias.get(key, ("",))[0] == (
            value_key(op.operands[0])
        )
        joined = isinstance(op, dm.ConcatOp) and all(
            live.root(value_key(v))[0] == key for v in op.operands
        )
        if reshaped or joined:
            views.add(key)
    return views
