"""Backends: target descriptions, the JAX lowering and the model package writer."""
