"""What agent runs cost: sums of tokens, cost, turns and time; the budget; an estimate.

A run's usage is a mapping of `input_tokens`, `output_tokens`, `cache_read_tokens`,
`cache_write_tokens`, `cost_usd`, `turns`, `api_ms` and `seconds`, each present
only where the CLI reported it (kitty measures `seconds` itself). Sums keep the keys
any run had; `tokens` is input + output (cache reads are reported apart).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SUMMED = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd",
    "turns", "api_ms", "seconds",
)  # fmt: skip


def tokens(usage: Mapping[str, Any]) -> int:
    return int(usage.get("input_tokens", 0) or 0) + int(usage.get("output_tokens", 0) or 0)


def add(total: dict[str, Any], usage: Mapping[str, Any]) -> dict[str, Any]:
    """`total` with `usage` added into it (in place; returned for chaining)."""
    for key in SUMMED:
        value = usage.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value
    total["runs"] = total.get("runs", 0) + 1
    if "cost_usd" in total:
        total["cost_usd"] = round(total["cost_usd"], 6)
    if "seconds" in total:
        total["seconds"] = round(total["seconds"], 1)
    total["tokens"] = tokens(total)
    return total


def total(usages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for usage in usages:
        add(out, usage)
    return out


def grouped(runs: Iterable[Mapping[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Sums of the runs' `usage` by the runs' `key` (wp_id, role, agent)."""
    out: dict[str, dict[str, Any]] = {}
    for run in runs:
        add(out.setdefault(str(run.get(key)), {}), run.get("usage") or {})
    return out


def over_budget(
    spent: Mapping[str, Any], budget_usd: float | None, max_tokens: int | None
) -> str | None:
    """Why no new run may start (the budget named), or None while within it."""
    cost = float(spent.get("cost_usd", 0) or 0)
    if budget_usd is not None and cost >= budget_usd:
        return f"budget reached: ${cost:.4f} spent of --budget ${budget_usd:g}"
    used = tokens(spent)
    if max_tokens is not None and used >= max_tokens:
        return f"token budget reached: {used} tokens spent of --max-tokens {max_tokens}"
    return None


def estimate(
    past: Iterable[Mapping[str, Any]], past_runs: int, planned_runs: int
) -> dict[str, Any] | None:
    """What `planned_runs` more runs may cost at the mean of `past` (sums over
    `past_runs` runs of this mission); None without any past run."""
    summed = total(past)
    if past_runs <= 0 or planned_runs <= 0:
        return None
    mean_cost = summed.get("cost_usd", 0) / past_runs
    return {
        "past_runs": past_runs,
        "planned_runs": planned_runs,
        "cost_usd": round(mean_cost * planned_runs, 4) if "cost_usd" in summed else None,
        "tokens": round(summed["tokens"] / past_runs * planned_runs),
    }


def usage_text(usage: Mapping[str, Any]) -> str:
    """`1234 tok, $0.0123, 3 turns` (what the run reported; `-` for nothing)."""
    parts = []
    if "input_tokens" in usage or "output_tokens" in usage:
        parts.append(f"{tokens(usage)} tok")
    if "cost_usd" in usage:
        parts.append(f"${float(usage['cost_usd']):.4f}")
    if usage.get("turns"):
        parts.append(f"{usage['turns']} turns")
    return ", ".join(parts) or "-"
