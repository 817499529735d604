"""JAX kernels, one module per synap op module (`ops/conv.py` runs `synap.conv2d`, ...)."""
