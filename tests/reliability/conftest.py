"""The reliability suite's figures, printed at the end of `make test`."""

from __future__ import annotations

import pytest

from tests.reliability.figures import FIGURES, ORDER


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    keys = [*ORDER, *sorted(k for k in FIGURES if k not in ORDER)]
    terminalreporter.write_line(
        "reliability: " + ", ".join(f"{k} = {FIGURES.get(k, 0)}" for k in keys)
    )
