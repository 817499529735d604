"""The JAX backend: lowers synap IR to jitted JAX functions with TFLite arithmetic."""
