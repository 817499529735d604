"""Sparse constant tensors (TFLite SparsityParameters) and DENSIFY.

Each model adds a model input to a sparse constant (through DENSIFY, or read directly),
so the output minus the input is the densified constant. The sparse encodings are made
here from a dense array with plain numpy (CSR from `np.nonzero`, block-sparse from a
block mask), so the dense array itself is the reference; one block-sparse model is also
run by LiteRT. Malformed tables are refused naming the tensor and the field.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.limits import use_limits
from synapc.testing.tflite_builder import ModelBuilder, SparseLevel, Sparsity

F32 = np.float32


def csr(dense: np.ndarray, index_type: str = "int32") -> tuple[Sparsity, np.ndarray]:
    """Row-major CSR of a 2-D array: rows DENSE, columns SPARSE_CSR."""
    rows, cols = np.nonzero(dense)
    segments = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(dense)))])
    levels = [
        SparseLevel(dense_size=dense.shape[0]),
        SparseLevel(
            segments=segments.tolist(), indices=cols.tolist(), index_type=index_type
        ),
    ]
    return Sparsity([0, 1], levels), dense[rows, cols]


def block_sparse(dense: np.ndarray, mask: np.ndarray) -> tuple[Sparsity, np.ndarray]:
    """2-D `dense` cut into 1 x b blocks along columns (b = columns / mask columns);
    `mask` says which blocks are stored: block rows DENSE, block columns SPARSE_CSR, the
    block dimension DENSE."""
    rows, blocks = mask.shape
    size = dense.shape[1] // blocks
    r, c = np.nonzero(mask)
    segments = np.concatenate([[0], np.cumsum(mask.sum(axis=1))])
    levels = [
        SparseLevel(dense_size=rows),
        SparseLevel(segments=segments.tolist(), indices=c.tolist()),
        SparseLevel(dense_size=size),
    ]
    values = dense.reshape(rows, blocks, size)[r, c].reshape(-1)
    return Sparsity([0, 1, 2], levels, block_map=[1]), values


def model(
    tmp_path: Path,
    shape: tuple[int, ...],
    sparsity: Sparsity,
    values: np.ndarray,
    *,
    densify: bool = True,
) -> Path:
    """y = x + w, w a sparse float32 constant of `shape` (through DENSIFY or not)."""
    b = ModelBuilder()
    x = b.input("x", shape, F32)
    w = b.tensor("w_sparse", shape, F32, data=np.asarray(values, F32), sparsity=sparsity)
    if densify:
        dense = b.tensor("w", shape, F32)
        b.op("DENSIFY", [w], [dense])
        w = dense
    y = b.tensor("y", shape, F32)
    b.op("ADD", [x, w], [y])
    b.output(y)
    return b.save(tmp_path / "sparse.tflite")


def densified(path: Path, shape: tuple[int, ...]) -> np.ndarray:
    """The constant the model adds to its input, as synapc computes it."""
    x = np.zeros(shape, F32)
    return synapc.compile(synapc.import_model(path), target="GENERIC").run([x])[0]


def sample(shape: tuple[int, ...], density: float = 0.4, seed: int = 0) -> np.ndarray:
    """A random array with about `density` of its elements non-zero."""
    rng = np.random.default_rng(seed)
    keep = rng.uniform(size=shape) < density
    return np.where(keep, rng.uniform(1, 2, shape), 0).astype(F32)


@pytest.mark.parametrize("index_type", ["int32", "uint16", "uint8"])
@pytest.mark.parametrize("densify", [True, False])
def test_csr(tmp_path: Path, index_type: str, densify: bool) -> None:
    dense = sample((5, 7))
    sparsity, values = csr(dense, index_type)
    path = model(tmp_path, dense.shape, sparsity, values, densify=densify)
    np.testing.assert_array_equal(densified(path, dense.shape), dense)


def test_csr_column_major(tmp_path: Path) -> None:
    """traversal_order [1, 0]: columns first, rows compressed."""
    dense = sample((4, 6), seed=1)
    sparsity, values = csr(dense.T)
    sparsity = Sparsity([1, 0], sparsity.levels)
    path = model(tmp_path, dense.shape, sparsity, values)
    np.testing.assert_array_equal(densified(path, dense.shape), dense)


def test_block_sparse(tmp_path: Path) -> None:
    mask = np.array([[1, 0, 1], [0, 0, 0], [0, 1, 1], [1, 1, 1]], bool)
    dense = sample((4, 12), density=1.0) * np.repeat(mask, 4, axis=1)
    sparsity, values = block_sparse(dense, mask)
    path = model(tmp_path, dense.shape, sparsity, values)
    np.testing.assert_array_equal(densified(path, dense.shape), dense)


def test_two_dimensional_blocks(tmp_path: Path) -> None:
    """2 x 2 blocks of a [4, 6] array, the blocks walked column-major inside."""
    mask = np.array([[1, 0, 1], [0, 1, 0]], bool)
    blocks = np.random.default_rng(2).uniform(1, 2, (2, 3, 2, 2)).astype(F32)
    blocks *= mask[:, :, None, None]
    dense = blocks.transpose(0, 2, 1, 3).reshape(4, 6)
    r, c = np.nonzero(mask)
    levels = [
        SparseLevel(dense_size=2),
        SparseLevel(segments=[0, 2, 3], indices=c.tolist()),
        SparseLevel(dense_size=2),
        SparseLevel(dense_size=2),
    ]
    values = blocks[r, c].transpose(0, 2, 1).reshape(-1)  # column within block first
    sparsity = Sparsity([0, 1, 3, 2], levels, block_map=[0, 1])
    path = model(tmp_path, dense.shape, sparsity, values)
    np.testing.assert_array_equal(densified(path, dense.shape), dense)


def test_block_sparse_matches_litert(tmp_path: Path) -> None:
    from ai_edge_litert.interpreter import Interpreter

    mask = np.array([[0, 1], [1, 1], [0, 0]], bool)
    dense = sample((3, 8), density=1.0, seed=3) * np.repeat(mask, 4, axis=1)
    sparsity, values = block_sparse(dense, mask)
    path = model(tmp_path, dense.shape, sparsity, values)
    x = np.random.default_rng(4).uniform(-1, 1, dense.shape).astype(F32)
    interpreter = Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    ref = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    got = synapc.compile(synapc.import_model(path), target="GENERIC").run([x])[0]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(ref, x + dense)


# -- malformed tables ------------------------------------------------------------------
def refused(path: Path, *fragments: str) -> None:
    """Importing `path` fails with one line naming the file, the tensor and `fragments`."""
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    assert "w_sparse" in message, message
    for fragment in fragments:
        assert fragment in message, message


DENSE_4X3 = np.array([[1, 0, 2], [0, 0, 0], [0, 3, 0], [4, 5, 6]], F32)


def levels_with(**csr_level: list[int]) -> Sparsity:
    """The CSR table of DENSE_4X3 with its compressed level's fields replaced."""
    fields = {"segments": [0, 2, 2, 3, 6], "indices": [0, 2, 1, 0, 1, 2], **csr_level}
    return Sparsity([0, 1], [SparseLevel(dense_size=4), SparseLevel(**fields)])


VALUES = [1, 2, 3, 4, 5, 6]


def test_reference_table_is_accepted(tmp_path: Path) -> None:
    path = model(tmp_path, (4, 3), levels_with(), VALUES)
    np.testing.assert_array_equal(densified(path, (4, 3)), DENSE_4X3)


@pytest.mark.parametrize(
    ("fields", "fragments"),
    [
        ({"indices": [0, 2, 1, 0, 1, 3]}, ("dim_metadata 1 array_indices", "index 3")),
        ({"indices": [0, 0, 1, 0, 1, 2]}, ("dim_metadata 1 array_indices", "twice")),
        ({"segments": [0, 2, 2, 3, 5]}, ("dim_metadata 1 array_segments",)),
        ({"segments": [0, 2, 1, 3, 6]}, ("dim_metadata 1 array_segments",)),
        ({"segments": [0, 2, 3, 6]}, ("dim_metadata 1 array_segments", "needs 5")),
    ],
)
def test_malformed_csr_level(tmp_path: Path, fields: dict, fragments: tuple) -> None:
    refused(model(tmp_path, (4, 3), levels_with(**fields), VALUES), *fragments)


def test_value_count_must_match_the_walk(tmp_path: Path) -> None:
    path = model(tmp_path, (4, 3), levels_with(), [*VALUES, 7])
    refused(path, "dim_metadata", "visits 6 elements", "holds 7 values")


def test_malformed_structure(tmp_path: Path) -> None:
    level = levels_with().levels[1]
    cases = [
        (Sparsity([1, 1], [SparseLevel(dense_size=4), level]), "traversal_order"),
        (Sparsity([0, 1], [SparseLevel(dense_size=5), level]), "dim_metadata 0 dense_size"),
        (Sparsity([0, 1], [SparseLevel(dense_size=4)]), "field dim_metadata:"),
        (
            Sparsity([0, 1], [SparseLevel(dense_size=4, format=3), level]),
            "dim_metadata 0 format",
        ),
        (
            Sparsity(
                [0, 1, 2],
                [SparseLevel(dense_size=4), level, SparseLevel(dense_size=2)],
                [1],
            ),
            "dim_metadata 2 dense_size",  # a block of 2 does not divide 3 columns
        ),
        (
            Sparsity(
                [0, 1, 2],
                [SparseLevel(dense_size=4), level, SparseLevel(dense_size=1)],
                [2],
            ),
            "block_map",
        ),
    ]
    for i, (sparsity, fragment) in enumerate(cases):
        (tmp_path / str(i)).mkdir()
        path = model(tmp_path / str(i), (4, 3), sparsity, VALUES)
        refused(path, fragment)


def test_index_vector_within_limits(tmp_path: Path) -> None:
    """The index vectors are checked against max_tensor_elements as they are read."""
    path = model(tmp_path, (4, 3), levels_with(), VALUES)
    with use_limits(max_tensor_elements=5):
        refused(path, "array_indices", "field values", "SYNAPC_MAX_TENSOR_ELEMENTS")


def test_densify_needs_a_sparse_input(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.input("x", (2,), F32)
    w = b.constant("w_sparse", np.ones(2, F32))
    dense = b.tensor("w", (2,), F32)
    b.op("DENSIFY", [w], [dense])
    y = b.tensor("y", (2,), F32)
    b.op("ADD", [x, dense], [y])
    b.output(y)
    refused(b.save(tmp_path / "dense.tflite"), "DENSIFY", "no sparsity table")
