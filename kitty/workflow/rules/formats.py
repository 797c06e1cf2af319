"""Findings files in kitty's format and each seed's native one -> canonical `Report`s.

Formats (REVIEW-LOOP.md §1):
  kitty    {reviewer, findings[{severity, kind, location, signature, title, detail, ...}]}
  specdev  seeds 000/001: {round, scope, findings[{kind, location, signature, severity, ...}]}
  persona  seed 002: {reviewer, findings[{title, severity, file, line, confidence, ...}],
           residual_risks, testing_gaps}
  addon    seed 003: RC<N>-<seq> findings (critical|major|minor, path:line, VALID|INVALID),
           as JSON or as the markdown review add-on

Validation is driven by the shipped schema (kitty/data/findings.schema.json) through
fastjsonschema, imported only here, and collects every problem, not just the first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

from kitty.errors import SpecError
from kitty.workflow.rules.findings import UNRATED, Finding, Report, norm

FORMATS = ("kitty", "specdev", "persona", "addon")
_DEF = {"kitty": None, "specdev": "specdev_report", "persona": "persona_report"}
_DEF["addon"] = "addon_report"
ADDON_SEVERITY = {"critical": "P0", "major": "P1", "minor": "P2"}
LEGACY = {"safe_auto": "gated_auto", "review-fixer": "downstream-resolver"}
CANONICAL_FIELDS = frozenset(
    {
        "id",
        "severity",
        "kind",
        "location",
        "signature",
        "title",
        "detail",
        "suggested_fix",
        "confidence",
        "first_evidence",
        "evidence",
        "autofix_class",
        "owner",
        "requires_verification",
        "pre_existing",
        "validity",
        "validity_evidence",
        "native",
        "confidence_rated",
    }
)
# Fields the merge adds; a merged.json fed back in keeps working without them.
MERGE_FIELDS = frozenset({"#", "rc_id", "reviewers", "ids", "reports"})


def schema_text() -> str:
    return resources.files("kitty").joinpath("data/findings.schema.json").read_text("utf-8")


@cache
def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_text())
    return data


@cache
def _compiled(text: str) -> Callable[[Any], Any]:
    import fastjsonschema  # lazily: only reading a findings file pays for it

    sub = json.loads(text)
    return fastjsonschema.compile({**sub, "$defs": schema()["$defs"]})


def _resolve(sub: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in sub:
        sub = schema()["$defs"][sub["$ref"].rsplit("/", 1)[1]]
    return sub


def _problems(value: Any, sub: dict[str, Any], where: str) -> list[str]:
    """Every schema violation under `where`, each naming its field."""
    import fastjsonschema

    sub = _resolve(sub)
    body = {k: v for k, v in sub.items() if k != "$defs"}
    try:
        _compiled(json.dumps(body, sort_keys=True))(value)
        return []
    except fastjsonschema.JsonSchemaValueException as exc:
        first = exc
    found: list[str] = []
    if isinstance(value, dict) and "properties" in sub:
        required = sub.get("required", [])
        for name in required:
            if value.get(name) is None:
                found.append(f"{where}.{name}: missing".lstrip("."))
        for name, prop in sub["properties"].items():
            if name in value and not (value[name] is None and name in required):
                found += _problems(value[name], prop, f"{where}.{name}".lstrip("."))
    elif isinstance(value, list) and isinstance(sub.get("items"), dict):
        for index, item in enumerate(value):
            found += _problems(item, sub["items"], f"{where}[{index}]")
    if found:
        return found
    label = where or "top level"
    if first.rule == "type":
        wanted = sub.get("type")
        names = wanted if isinstance(wanted, list) else [wanted]
        words = " or ".join(_TYPE_WORDS.get(str(n), str(n)) for n in names if n != "null")
        return [f"{label}: must be {words}"]
    custom = sub.get("x-message")
    if isinstance(custom, str):
        if custom.startswith(("must", "missing")):
            return [f"{label}: {custom}"]
        return [f"{label}: {value!r} {custom}"]
    message = first.message
    if first.name and message.startswith(first.name):
        message = message[len(first.name) :].strip()
    return [f"{label}: {message}"]


_TYPE_WORDS = {
    "object": "an object",
    "array": "a list",
    "string": "text",
    "integer": "a whole number",
    "boolean": "true or false",
}


def validate(data: Any, fmt: str) -> list[str]:
    """All problems of `data` read as format `fmt` (empty: valid)."""
    name = _DEF[fmt]
    sub = schema() if name is None else schema()["$defs"][name]
    top = {k: v for k, v in sub.items() if k not in ("$defs", "$schema", "$id")}
    return _problems(data, top, "")


# -- detection --------------------------------------------------------------------
_ADDON_HEAD = re.compile(r"^###\s+(RC\d+-\d+)\s*:\s*(.+?)\s*$", re.M)
_ADDON_FIELD = re.compile(r"^\*\*(?P<name>[A-Za-z ]+):\*\*\s*(?P<value>.*)$")


def detect(data: Any) -> str:
    """Which format a parsed file is in; kitty when nothing else fits (its errors then say why)."""
    if not isinstance(data, dict):
        return "kitty"
    items = data.get("findings")
    items = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    if any("location" not in i and "file" in i and "line" in i for i in items) or (
        not items and ("residual_risks" in data or "testing_gaps" in data)
    ):
        return "persona"
    if any(
        str(i.get("severity", "")).lower() in ADDON_SEVERITY
        or "finding" in i
        or "required_fix" in i
        for i in items
    ):
        return "addon"
    if "reviewer" not in data and ("round" in data or "scope" in data or "reviewer_id" in data):
        return "specdev"
    return "kitty"


def parse_addon_markdown(text: str) -> dict[str, Any]:
    """Seed 003's `review-addon-<N>.md` (or a handoff using its headings) -> addon JSON."""
    cycle = re.search(r"^#\s+Review Add-On:\s*Cycle\s+(\d+)", text, re.M)
    findings: list[dict[str, Any]] = []
    heads = list(_ADDON_HEAD.finditer(text))
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        item: dict[str, Any] = {"id": head.group(1), "title": head.group(2)}
        section = re.findall(r"^##\s+(\w+)", text[: head.start()], re.M)
        if section and section[-1].upper() in ("VALID", "INVALID"):
            item["validity"] = section[-1].upper()
        for line in text[head.end() : end].splitlines():
            match = _ADDON_FIELD.match(line.strip())
            if match:
                key = match.group("name").strip().lower().replace(" ", "_")
                item[key] = match.group("value").strip()
        if "severity" in item:
            item["severity"] = item["severity"].lower()
        findings.append(item)
    return {"cycle": int(cycle.group(1)) if cycle else None, "findings": findings}


# -- mapping to canonical ------------------------------------------------------------
def _native(fmt: str, item: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in item.items() if k not in CANONICAL_FIELDS | MERGE_FIELDS}
    raw = item.get("native")
    earlier: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {**earlier, **kept, "format": earlier.get("format", fmt)}


def _kitty(item: dict[str, Any], reviewer: str) -> Finding:
    native = _native("kitty", item)
    confidence = item.get("confidence")
    rated = confidence is not None and item.get("confidence_rated", True) is not False
    return Finding(
        severity=item["severity"],
        kind=item["kind"].strip(),
        location=item["location"].strip(),
        signature=item["signature"].strip(),
        title=item["title"].strip(),
        detail=item["detail"].strip(),
        suggested_fix=item.get("suggested_fix") or None,
        id=item.get("id") or None,
        confidence=UNRATED if confidence is None else int(confidence),
        rated=rated,
        first_evidence=item.get("first_evidence") or None,
        evidence=list(item.get("evidence") or []),
        autofix_class=item.get("autofix_class") or "manual",
        owner=item.get("owner") or "downstream-resolver",
        requires_verification=bool(item.get("requires_verification", False)),
        pre_existing=bool(item.get("pre_existing", False)),
        validity=item.get("validity") or "unchallenged",
        validity_evidence=item.get("validity_evidence") or None,
        native=native if set(native) != {"format"} else {},
        reviewers=[reviewer],
        ids=[str(item["id"])] if item.get("id") else [],
    )


def _specdev(item: dict[str, Any], reviewer: str) -> Finding:
    title = item.get("title") or item["signature"]
    return Finding(
        severity=item["severity"],
        kind=item["kind"].strip(),
        location=item["location"].strip(),
        signature=item["signature"].strip(),
        title=title.strip(),
        detail=(item.get("detail") or item.get("description") or title).strip(),
        suggested_fix=item.get("suggested_fix") or None,
        id=item.get("id") or None,
        native=_native("specdev", item),
        reviewers=[reviewer],
        ids=[str(item["id"])] if item.get("id") else [],
    )


def _persona(item: dict[str, Any], reviewer: str) -> Finding:
    title = item["title"].strip()
    detail = item.get("why_it_matters") or item.get("first_evidence") or title
    native = _native("persona", item)
    native["severity"] = item["severity"]
    return Finding(
        severity=item["severity"],
        kind="general",
        location=f"{item['file'].strip()}:{item['line']}",
        signature=norm(title),
        title=title,
        detail=detail.strip(),
        suggested_fix=item.get("suggested_fix") or None,
        id=item.get("id") or None,
        confidence=int(item["confidence"]),
        rated=True,
        first_evidence=item.get("first_evidence") or None,
        evidence=list(item.get("evidence") or []),
        autofix_class=LEGACY.get(item["autofix_class"], item["autofix_class"]),
        owner=LEGACY.get(item["owner"], item["owner"]),
        requires_verification=bool(item["requires_verification"]),
        pre_existing=bool(item["pre_existing"]),
        native=native,
        reviewers=[reviewer],
        ids=[str(item["id"])] if item.get("id") else [],
    )


def _addon(item: dict[str, Any], reviewer: str) -> Finding:
    title = item["title"].strip()
    validity = item.get("validity") or "unchallenged"
    native = _native("addon", item)
    native["severity"] = item["severity"]
    return Finding(
        severity=ADDON_SEVERITY[item["severity"]],
        kind="general",
        location=item["file"].strip(),
        signature=norm(title),
        title=title,
        detail=item["finding"].strip(),
        suggested_fix=item.get("required_fix") or None,
        id=item.get("id") or None,
        confidence=100 if validity == "VALID" else UNRATED,
        rated=validity == "VALID",
        first_evidence=item["finding"].strip() if validity == "VALID" else None,
        validity=validity,
        validity_evidence=item.get("evidence") or None,
        native=native,
        reviewers=[reviewer],
        ids=[str(item["id"])] if item.get("id") else [],
    )


_MAPPERS: dict[str, Callable[[dict[str, Any], str], Finding]] = {
    "kitty": _kitty,
    "specdev": _specdev,
    "persona": _persona,
    "addon": _addon,
}
_SPECDEV_FILE = re.compile(r"_r([A-Za-z0-9_-]+)\.json$")


def reviewer_name(data: dict[str, Any], fmt: str, source: str, fallback: str | None) -> str | None:
    for key in ("reviewer", "reviewer_id"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    if fmt == "kitty":
        return None  # required: the schema error says so
    match = _SPECDEV_FILE.search(source)
    if fmt == "specdev" and match:
        return match.group(1)  # findings_<scope>_<round>_r<reviewer_id>.json
    return fallback or _stem(source) or None


def _stem(source: str) -> str:
    """pathlib's `Path(source).stem`, on the string alone: the last part, less its suffix."""
    name = source.rstrip("/").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def read_report(
    source: str, text: str, fmt: str | None = None, fallback_reviewer: str | None = None
) -> Report:
    """Parse, detect, validate (every problem at once) and map one file."""
    if fmt is not None and fmt not in FORMATS:
        raise SpecError(source, None, f"unknown format {fmt!r}", "formats: " + ", ".join(FORMATS))
    data: Any
    stripped = text.lstrip()
    markdown = not stripped.startswith(("{", "["))
    if markdown and (fmt == "addon" or (fmt is None and _ADDON_HEAD.search(text))):
        data = parse_addon_markdown(text)
        fmt = "addon"
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SpecError(
                source,
                getattr(exc, "lineno", None),
                f"not valid JSON: {exc}",
                "see `kitty review schema` (or pass a seed-003 review add-on .md)",
            ) from None
    fmt = fmt or detect(data)
    problems = validate(data, fmt)
    reviewer = (
        reviewer_name(data, fmt, source, fallback_reviewer) if isinstance(data, dict) else None
    )
    if (
        isinstance(data, dict)
        and reviewer is None
        and not any(p.startswith("reviewer") for p in problems)
    ):
        problems.insert(0, "reviewer: missing (the reviewing agent's name)")
    if problems:
        raise SpecError(
            source,
            None,
            f"{len(problems)} problem(s) as {fmt} format:\n  " + "\n  ".join(problems)
            if len(problems) > 1
            else f"{problems[0]} ({fmt} format)",
            "see `kitty review schema`; nothing was recorded",
        )
    assert isinstance(data, dict) and reviewer is not None
    mapper = _MAPPERS[fmt]
    findings = [mapper(item, reviewer) for item in data["findings"]]
    return Report(
        reviewer=reviewer,
        findings=findings,
        format=fmt,
        source=source,
        residual_risks=[str(r) for r in data.get("residual_risks") or []],
        testing_gaps=[str(g) for g in data.get("testing_gaps") or []],
    )
