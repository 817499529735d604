"""Shared fixtures: a fresh context with its WeightStore for each test."""

from __future__ import annotations

import pytest

from synapc.context import SynapContext, make_context
from synapc.weights import WeightStore


@pytest.fixture
def ctx() -> SynapContext:
    """A context with all synapc dialects and an empty WeightStore."""
    return make_context()


@pytest.fixture
def store(ctx: SynapContext) -> WeightStore:
    """The WeightStore of `ctx`."""
    return ctx.weights
