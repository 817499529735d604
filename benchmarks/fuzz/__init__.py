"""Fuzzers for every file synapc reads: one module per target (`TARGET`, `cases`,
`check`), the harness that runs them (`harness.py`) and the campaign script (`run.py`)."""
