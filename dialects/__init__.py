"""IR dialects of synapc: `synap` (NPU-level layers) and `quant` (quantized types)."""
