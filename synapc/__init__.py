"""synapc: an open MLIR-style model compiler for Synaptics VS680 / VS640 NPUs."""
