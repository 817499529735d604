"""Scripts that measure synapc: speed, memory, fidelity and robustness."""
