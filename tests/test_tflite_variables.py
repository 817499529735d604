"""TFLite resource variables (streaming models) imported as explicit state.

A synthetic streaming model built with `ModelBuilder` (a CALL_ONCE initialization
subgraph, a ring buffer kept in a variable, a READ_VARIABLE after an ASSIGN_VARIABLE, and
a variable assigned before it is read) and the real microWakeWord models of the
`pymicro_wakeword` wheel run frame after frame in synapc (GENERIC and VS680) and in
LiteRT's reference kernels (`BUILTIN_REF`), which keeps the variables between
invocations; every frame's outputs must be identical.

The wake-word models are taken from the installed `pymicro_wakeword` package, or from the
folder `SYNAPC_MICRO_WAKEWORD_MODELS` names (the wheel's `pymicro_wakeword/models`);
without either those tests are skipped.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.errors import SynapcError
from synapc.importers.tflite import import_tflite
from synapc.testing.tflite_builder import ModelBuilder, Quant

litert = pytest.importorskip("ai_edge_litert.interpreter")

FRAMES = 20
Q_IN = Quant(0.05, -3)


def _streaming_model(dtype: type, *, initialize: bool = True) -> bytes:
    """x [1, 2, 4] per frame; variable `ring` [1, 3, 4] holds the last three rows: the
    outputs are the window concat(ring, x) [1, 5, 4], the ring read back after its
    update, and x read through a variable assigned before it is read."""
    quant = Q_IN if dtype == np.int8 else None
    b = ModelBuilder()
    x = b.input("x", [1, 2, 4], dtype, quant=quant)
    handle = b.tensor("ring_handle", [], "RESOURCE")
    scratch = b.tensor("scratch_handle", [], "RESOURCE")
    ring = b.tensor("ring", [1, 3, 4], dtype, quant=quant)
    window = b.tensor("window", [1, 5, 4], dtype, quant=quant)
    kept = b.tensor("kept", [1, 3, 4], dtype, quant=quant)
    again = b.tensor("ring_after", [1, 3, 4], dtype, quant=quant)
    copied = b.tensor("x_copy", [1, 2, 4], dtype, quant=quant)
    begin = b.constant("begin", np.array([0, 2, 0], np.int32))
    end = b.constant("end", np.array([1, 5, 4], np.int32))
    strides = b.constant("strides", np.array([1, 1, 1], np.int32))
    if initialize:
        b.op("CALL_ONCE", [], [], init_subgraph_index=1)
    b.op("VAR_HANDLE", [], [handle], shared_name="ring")
    b.op("VAR_HANDLE", [], [scratch], shared_name="scratch")
    b.op("READ_VARIABLE", [handle], [ring])
    b.op("CONCATENATION", [ring, x], [window], axis=1)
    b.op("STRIDED_SLICE", [window, begin, end, strides], [kept])
    b.op("ASSIGN_VARIABLE", [handle, kept], [])
    b.op("READ_VARIABLE", [handle], [again])
    b.op("ASSIGN_VARIABLE", [scratch, x], [])
    b.op("READ_VARIABLE", [scratch], [copied])
    b.output(window, again, copied)
    if initialize:
        b.subgraph("init")
        init_handle = b.tensor("ring_handle_init", [], "RESOURCE")
        start = np.arange(12).reshape(1, 3, 4) - 6
        value = b.constant("ring_init", start, dtype=dtype, quant=quant)
        b.op("VAR_HANDLE", [], [init_handle], shared_name="ring")
        b.op("ASSIGN_VARIABLE", [init_handle, value], [])
    return b.build()


def _interpreter(path: Path) -> litert.Interpreter:
    """LiteRT on the reference kernels, tensors allocated (all kept, for cut outputs)."""
    interpreter = litert.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=True,
    )
    interpreter.allocate_tensors()
    return interpreter


def _litert_frames(
    path: Path, frames: list[np.ndarray], names: list[str]
) -> list[list[np.ndarray]]:
    """The tensors `names` after each invocation of one interpreter on `frames`."""
    interpreter = _interpreter(path)
    index = {d["name"]: d["index"] for d in interpreter.get_tensor_details()}
    feed = interpreter.get_input_details()[0]["index"]
    results = []
    for frame in frames:
        interpreter.set_tensor(feed, frame)
        interpreter.invoke()
        results.append([interpreter.get_tensor(index[n]).copy() for n in names])
    return results


def _assert_frames_equal(
    got: list[list[np.ndarray]], expected: list[list[np.ndarray]], atol: float = 0.0
) -> None:
    """Equal outputs, frame by frame: integers exactly, floats within `atol`."""
    for frame, (outs, refs) in enumerate(zip(got, expected, strict=True)):
        for i, (out, ref) in enumerate(zip(outs, refs, strict=True)):
            assert out.dtype == ref.dtype and out.shape == ref.shape, (frame, i)
            tolerance = atol if ref.dtype.kind == "f" else 0
            np.testing.assert_allclose(
                out, ref, rtol=0, atol=tolerance, err_msg=f"frame {frame}, output {i}"
            )


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_synthetic_stream_matches_litert(tmp_path: Path, dtype: type, target: str) -> None:
    path = tmp_path / "stream.tflite"
    path.write_bytes(_streaming_model(dtype))
    model = import_tflite(path)
    assert [s.name for s in model.state] == ["ring"]
    assert len(model.inputs) == 2 and len(model.outputs) == 4
    np.testing.assert_array_equal(model.state[0].initial.ravel(), np.arange(12) - 6)
    executable = synapc.compile(model, target)
    assert [i.name for i in executable.inputs] == ["x"]
    assert [o.name for o in executable.outputs] == ["window", "ring_after", "x_copy"]
    rng = np.random.default_rng(7)
    if dtype == np.int8:
        frames = [rng.integers(-128, 128, (1, 2, 4), dtype=np.int8) for _ in range(6)]
    else:
        frames = [rng.standard_normal((1, 2, 4)).astype(np.float32) for _ in range(6)]
    expected = _litert_frames(path, frames, ["window", "ring_after", "x_copy"])
    # VS680 computes float32 models in float16: values up to 6 carry 2**-9 steps
    atol = 1e-6 if target == "GENERIC" else 6 * 2.0**-10
    _assert_frames_equal([executable.run([f]) for f in frames], expected, atol)
    executable.reset_state()  # back to the initial ring: the same frames again
    _assert_frames_equal([executable.run({"x": f}) for f in frames], expected, atol)


def test_read_of_uninitialized_variable_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "no_init.tflite"
    path.write_bytes(_streaming_model(np.float32, initialize=False))
    with pytest.raises(SynapcError, match=r"READ_VARIABLE.*'ring' before any ASSIGN"):
        import_tflite(path)


def test_initialization_must_assign_constants(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.input("x", [1, 4], np.float32)
    handle = b.tensor("h", [], "RESOURCE")
    state = b.tensor("s", [1, 4], np.float32)
    y = b.tensor("y", [1, 4], np.float32)
    b.op("CALL_ONCE", [], [], init_subgraph_index=1)
    b.op("VAR_HANDLE", [], [handle], shared_name="v")
    b.op("READ_VARIABLE", [handle], [state])
    b.op("ADD", [state, x], [y])
    b.op("ASSIGN_VARIABLE", [handle, y], [])
    b.output(y)
    b.subgraph("init")
    h = b.tensor("h", [], "RESOURCE")
    one = b.constant("one", np.ones((1, 4), np.float32))
    two = b.tensor("two", [1, 4], np.float32)
    b.op("VAR_HANDLE", [], [h], shared_name="v")
    b.op("ADD", [one, one], [two])
    b.op("ASSIGN_VARIABLE", [h, two], [])
    path = tmp_path / "init_add.tflite"
    path.write_bytes(b.build())
    with pytest.raises(SynapcError, match=r"CALL_ONCE.*initialization subgraph 1.*ADD"):
        import_tflite(path)


def _network_frames(network: synapc.Network, frames: list[np.ndarray]) -> list[list]:
    """The outputs of `predict` on each frame in turn."""
    results = []
    for frame in frames:
        network.inputs[0].assign(frame)
        results.append([t.to_numpy() for t in network.predict()])
    return results


def test_package_streams_like_litert(tmp_path: Path) -> None:
    path = tmp_path / "stream.tflite"
    path.write_bytes(_streaming_model(np.int8))
    package = synapc.convert(path, "VS680", tmp_path / "out").package
    network = synapc.Network(package)
    assert [t.name for t in network.inputs] == ["x"]
    assert [t.name for t in network.outputs] == ["window", "ring_after", "x_copy"]
    rng = np.random.default_rng(5)
    frames = [rng.integers(-128, 128, (1, 2, 4), dtype=np.int8) for _ in range(6)]
    expected = _litert_frames(path, frames, ["window", "ring_after", "x_copy"])
    _assert_frames_equal(_network_frames(network, frames), expected)
    network.reset_state()
    _assert_frames_equal(_network_frames(network, frames), expected)


def test_package_refuses_a_layout_change_of_state(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.input("x", [1, 1, 2, 3], np.float32)
    handle = b.tensor("h", [], "RESOURCE")
    state = b.tensor("s", [1, 1, 2, 3], np.float32)
    y = b.tensor("y", [1, 1, 2, 3], np.float32)
    b.op("CALL_ONCE", [], [], init_subgraph_index=1)
    b.op("VAR_HANDLE", [], [handle], shared_name="total")
    b.op("READ_VARIABLE", [handle], [state])
    b.op("ADD", [state, x], [y])
    b.op("ASSIGN_VARIABLE", [handle, y], [])
    b.output(y)
    b.subgraph("init")
    h = b.tensor("h", [], "RESOURCE")
    zero = b.constant("zero", np.zeros((1, 1, 2, 3), np.float32))
    b.op("VAR_HANDLE", [], [h], shared_name="total")
    b.op("ASSIGN_VARIABLE", [h, zero], [])
    path = tmp_path / "sum.tflite"
    path.write_bytes(b.build())
    meta = tmp_path / "meta.yaml"
    meta.write_text("data_layout: nchw\n")
    with pytest.raises(SynapcError, match="would transpose the state"):
        synapc.convert(path, "VS680", tmp_path / "out", meta)


# -- the microWakeWord models ----------------------------------------------------------


def _wake_word_models() -> Path | None:
    """The folder of the pymicro_wakeword models, or None (see the module docstring)."""
    spec = importlib.util.find_spec("pymicro_wakeword")
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "models"
        if folder.is_dir():
            return folder
    given = os.environ.get("SYNAPC_MICRO_WAKEWORD_MODELS")
    return Path(given) if given and Path(given).is_dir() else None


def _wake_word_case(name: str) -> tuple[Path, list[str], list[np.ndarray]]:
    """The model file, the tensors compared (the logit before LOGISTIC, which varies
    from frame to frame, and the probability, mostly 0 on random features) and the
    frames; skips when the models are not available."""
    folder = _wake_word_models()
    if folder is None:
        pytest.skip(
            "the pymicro_wakeword models are not available: install pymicro-wakeword "
            "or set SYNAPC_MICRO_WAKEWORD_MODELS to its pymicro_wakeword/models folder"
        )
    path = folder / f"{name}.tflite"
    interpreter = _interpreter(path)
    names = [d["name"] for d in interpreter.get_tensor_details()]
    logit = next(n for n in names if "/MatMul;" in n)  # the fully connected output
    final = interpreter.get_output_details()[0]["name"]
    rng = np.random.default_rng(11)
    frames = [rng.integers(-128, -40, (1, 3, 40), dtype=np.int8) for _ in range(FRAMES)]
    return path, [logit, final], frames


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
@pytest.mark.parametrize("name", ["okay_nabu", "hey_jarvis"])
def test_micro_wake_word_streams_like_litert(name: str, target: str) -> None:
    path, compared, frames = _wake_word_case(name)
    model = import_tflite(path, outputs=compared)
    assert model.state
    executable = synapc.compile(model, target)
    assert [i.shape for i in executable.inputs] == [(1, 3, 40)]
    expected = _litert_frames(path, frames, compared)
    got = [executable.run([f]) for f in frames]
    assert len({int(e[0].ravel()[0]) for e in expected}) > 3  # the state matters
    _assert_frames_equal(got, expected)


def test_micro_wake_word_package_streams_like_litert(tmp_path: Path) -> None:
    path, compared, frames = _wake_word_case("okay_nabu")
    meta = tmp_path / "meta.yaml"
    meta.write_text("outputs:\n" + "".join(f"  - name: '{n}'\n" for n in compared))
    package = synapc.convert(path, "VS680", tmp_path / "out", meta).package
    network = synapc.Network(package)
    assert [t.shape for t in network.inputs] == [(1, 3, 40)]
    _assert_frames_equal(
        _network_frames(network, frames), _litert_frames(path, frames, compared)
    )
