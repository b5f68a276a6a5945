"""A pytest plugin (`-p outcomes_plugin`, with benches/compat on
PYTHONPATH) that appends one JSON line per test outcome to the file named by
COMPAT_OUTCOMES as each test finishes, so a run stopped at its time budget
still says what ran. suites.py reads it.

Lines: {"triton": version, "from": folder} once at the start, {"collected": n}
after collection, then {"id": nodeid, "outcome": passed|failed|error|skipped|
xfailed|xpassed, "why": the error's first `E` line}; a file that fails to
import is one "error" with the file as its id.
"""
from __future__ import annotations

import json
import os

_PATH = os.environ.get("COMPAT_OUTCOMES", "")


def _write(record: dict) -> None:
    if _PATH:
        with open(_PATH, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _why(report) -> str:
    text = getattr(report, "longreprtext", "") or ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("E ")]
    return (errors[0] if errors else lines[-1] if lines else "")[:300]


def _which_triton() -> None:
    """Which `triton` this process imports (real Triton, or tritium through the switch)."""
    try:
        import triton
        _write({"triton": getattr(triton, "__version__", "?"), "from": os.path.dirname(triton.__file__)})
    except Exception as e:  # noqa: BLE001 - the record says why triton did not import
        _write({"triton": f"import failed: {type(e).__name__}: {e}"[:300], "from": ""})


_which_triton()  # at plugin load, before any conftest


def pytest_collectreport(report) -> None:
    if report.failed:
        _write({"id": report.nodeid or "(collection)", "outcome": "error", "why": _why(report)})


def pytest_collection_finish(session) -> None:
    _write({"collected": len(session.items)})


def pytest_runtest_logreport(report) -> None:
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            outcome = "xpassed" if xfail else "passed"
        elif report.skipped:
            outcome = "xfailed" if xfail else "skipped"
        else:
            outcome = "failed"
    elif report.failed:
        outcome = "error"
    elif report.when == "setup" and report.skipped:
        outcome = "skipped"
    else:
        return
    _write({"id": report.nodeid, "outcome": outcome, "why": _why(report)[:200] if outcome in ("failed", "error") else ""})
