"""The text `kitty review show / run / answer` print (their --json is the data itself)."""

from __future__ import annotations

from typing import Any

from kitty.output import echo


def show_text(data: dict[str, Any]) -> str:
    lines = [
        f"{data['wp_id']} ({data['lane']}): {data['review_cycles']} rejection(s), "
        f"cap {data['max_cycles']}"
    ]
    for review in data["reviews"]:
        label = f"rejection {review['rejection']}" if review["rejection"] else "verdict"
        lines.append(
            f"- {review['at']}  {label}: {review['verdict']} by {review['reviewer']}"
            + (f"  ({review['reference']})" if review["reference"] else "")
        )
        for finding in review["findings"] or []:
            lines.append(
                f"    [{finding['severity']}] {finding['location']} {finding['title']}"
                f" ({', '.join(finding['reviewers'])})"
            )
    if data["arbiter"]:
        arb = data["arbiter"]
        lines.append(
            f"arbiter decision: {arb.get('decision', arb.get('to_lane'))} by "
            f"{arb.get('by')}: {arb.get('note')}"
        )
    if data["self_review"]:
        sr = data["self_review"]
        lines.append(
            f"self-review fallback: approved by {sr.get('approved_by')} after "
            f"{sr.get('intended_reviewer')} failed ({sr.get('reviewer_failure_reason')})"
        )
    return "\n".join(lines)


def progress(event: dict[str, Any]) -> None:
    detail = " ".join(f"{k}={v}" for k, v in event.items() if k != "event")
    echo(f"review panel: {event['event']} {detail}", err=True)  # escapes control characters


def _labels(question: dict[str, Any]) -> str:
    """A question's option labels; an option that is not {label, ...} is shown as written."""
    options = question.get("options")
    return " | ".join(
        str(o.get("label", "?")) if isinstance(o, dict) else repr(o)
        for o in (options if isinstance(options, list) else [])
    )


def _questions(data: dict[str, Any]) -> list[str]:
    """A blocker's questions, to ask; a malformed blocker's, as written (none can be
    answered: `Why:` names what is wrong with them)."""
    lines = []
    answerable = data["reason"] == "blocker"
    chunks = data.get("question_chunks") or []
    if chunks and not answerable:
        lines.append("Questions as written (malformed: they cannot be answered):")
    for number, chunk in enumerate(chunks, 1):
        if answerable:
            lines.append(f"Questions (ask {number}):")
        for q in chunk:
            if not isinstance(q, dict):
                lines.append(f"  {q!r}")
                continue
            lines.append(f"  {q.get('id')}: {q.get('question')} [{_labels(q)}]")
    return lines


def loop_text(data: dict[str, Any]) -> str:
    lines = []
    if data["loop_verdict"] == "CONVERGED":
        lines.append(f"CONVERGED at round {data['round']}. No blocking findings remain.")
    elif data["loop_verdict"] == "HALT":
        c = data.get("counts") or {}
        lines.append(f"HALT: {data['reason']} at round {data['round']}.")
        if data.get("artifact_path"):  # no findings file (a reviewer failed): no line
            lines.append(f"Findings path: {data['artifact_path']}")
        lines.append(f"HALT file: {data['halt_file']}")
        if c:
            lines.append("Finding count: " + ", ".join(f"{n} {s}" for s, n in c.items()))
        if data.get("context"):
            lines.append(f"Why: {data['context']}")
        lines += _questions(data)
        lines.append(f"Next: {data['hint']}")
    else:
        lines.append(f"{data['loop_verdict']} at round {data['round']}")
    for f in data["findings"]:
        lines.append(
            f"  {f.get('rc_id')} [{f['severity']}] {f['location']} {f['title']} "
            f"({', '.join(f['reviewers'])})"
        )
    return "\n".join(lines)


def pending_text(result: dict[str, Any], slug: str) -> str:
    """Blocker questions still open: the next ones, and a command that answers one."""
    from kitty.panel.rules.report import answer_example

    lines = [f"{result['wp_id']}: {len(result['pending'])} question(s) still open:"]
    for q in result["ask"]:
        lines.append(f"  {q['id']}: {q['question']} [{_labels(q)}]")
    lines.append(
        "answer with, for example: " + answer_example(result["wp_id"], slug, result["ask"])
    )
    return "\n".join(lines)
