"""Progress of a conversion's long steps (import, optimize, calibrate, compile, export):
one tqdm bar over the steps on a terminal, one plain line per step otherwise
(``[2/5] optimize``), nothing when not shown. Calibration adds its own bar of batches
(`synapc.quantization.flow.Progress`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

#: The steps of a conversion, in order (``calibrate`` only when it quantizes).
STEPS = ("import", "optimize", "calibrate", "compile", "export")


class StepProgress:
    """Which step a conversion is in: `start` each step, `detail` within one (a
    subgraph being compiled); as a context manager, the bar completes when the block
    ends normally and stays where it stopped when it raises. `show` false: silent."""

    def __init__(
        self, steps: Sequence[str], show: bool, say: Callable[[str], None]
    ) -> None:
        self.steps = list(steps)
        self.show, self.say = show, say
        self.current = ""
        self._bar: Any = None
        if show and sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(
                total=len(self.steps),
                desc=f"convert: {self.steps[0]}",
                unit="step",
                bar_format="{desc:<22}|{bar:24}| {n_fmt}/{total_fmt} [{elapsed}]{postfix}",
            )

    def start(self, step: str, detail: str = "") -> None:
        """Step `step` begins (`detail`: what it works on)."""
        index = self.steps.index(step)
        self.current = step
        if self._bar is not None:
            self._bar.set_description_str(f"convert: {step}", refresh=False)
            self._bar.set_postfix_str(detail, refresh=False)
            self._bar.update(index - self._bar.n)
            self._bar.refresh()
        elif self.show:
            self.say(
                f"[{index + 1}/{len(self.steps)}] {step}"
                + (f": {detail}" if detail else "")
            )

    def detail(self, text: str) -> None:
        """What the current step works on now (a bar's postfix, or a line)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)
        elif self.show:
            self.say(f"{self._number(self.current)} {self.current}: {text}")

    def _number(self, step: str) -> str:
        return f"[{self.steps.index(step) + 1}/{len(self.steps)}]"

    def __enter__(self) -> StepProgress:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.close(done=kind is None)

    def close(self, done: bool = True) -> None:
        """The end: the bar completes when `done`, and stays where it stopped when the
        conversion failed."""
        if self._bar is not None:
            if done:
                self._bar.set_description_str("convert: done", refresh=False)
                self._bar.set_postfix_str("", refresh=False)
                self._bar.update(len(self.steps) - self._bar.n)
            self._bar.close()
            self._bar = None
