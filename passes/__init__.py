"""Passes over the synap dialect, one per module; `registry` lists them by name."""
