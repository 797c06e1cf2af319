"""Why an agent run failed, from the agent's own words, and what the sprint does about it.

`classify` sorts a failed run's error (the CLI's message and the model service's
HTTP status when the CLI says it) into auth, model, rate limit, overloaded,
unreachable, timeout or crash. Auth and model errors are not transient: a re-run
fails the same way, so the sprint stops at once and says what to fix. A rate limit
or an overloaded service backs off (the retry-after the CLI reports, else doubling
from the sprint's wait, bounded) without using up the WP's retries; the rest are
re-run as before, up to --retries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

AUTH, MODEL, RATE_LIMIT, OVERLOADED = "auth", "model", "rate_limit", "overloaded"
UNREACHABLE, TIMEOUT, CRASH = "unreachable", "timeout", "crash"
#: Kinds a re-run cannot fix: stop at once.
FATAL = frozenset({AUTH, MODEL})
#: Kinds that wait before the re-run instead of using up a retry.
BACK_OFF = frozenset({RATE_LIMIT, OVERLOADED})
#: At most this many waits per WP and role, each at most MAX_WAIT seconds.
MAX_WAITS = 5
MAX_WAIT = 600.0

_PATTERNS = (
    (AUTH, r"invalid (x-)?api[ -]?key|unauthori[sz]ed|not logged in|authentication|"
     r"\blog ?in\b|credential|\b401\b|\b403\b|forbidden|permission denied for api"),
    (MODEL, r"model[^.]*(not (found|exist|supported|available)|does not exist|may not exist|"
     r"unknown|invalid)|(unknown|invalid|unsupported) model|issue with the selected model|"
     r"no such model|model_not_found"),
    (RATE_LIMIT, r"rate[ _-]?limit|too many requests|\b429\b|quota|resource[_ ]exhausted"),
    (OVERLOADED, r"overloaded|\b529\b|\b503\b|service unavailable|capacity"),
    (UNREACHABLE, r"econnrefused|econnreset|enotfound|etimedout|connection (refused|dropped|"
     r"reset|error|failed)|can't reach|cannot reach|unable to connect|stream disconnected|"
     r"error sending request|network|getaddrinfo|dns|socket hang up|fetch failed"),
)  # fmt: skip
_STATUS = {401: AUTH, 403: AUTH, 404: MODEL, 429: RATE_LIMIT, 529: OVERLOADED, 503: OVERLOADED}

#: What to fix, per CLI, after an authentication error: each runs as printed.
LOGIN = {
    "claude": "run `claude auth login` or set ANTHROPIC_API_KEY",
    "codex": "run `codex login` or set OPENAI_API_KEY",
    "gemini": "set GEMINI_API_KEY, or run `gemini` once and sign in",
    "qwen": "set OPENAI_API_KEY (and OPENAI_BASE_URL), or run `qwen` once and sign in",
    "opencode": "run `opencode auth login`",
}


@dataclass(frozen=True)
class Failure:
    kind: str
    words: str  # the agent's own words (or kitty's, for a timeout or a crash)
    fix: str = ""  # what to do, for a fatal kind
    retry_after: float | None = None  # what the CLI said to wait, when it did

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL

    @property
    def backs_off(self) -> bool:
        return self.kind in BACK_OFF

    def text(self) -> str:
        """`rate limit: API Error: ... — wait` as the terminal line and blocked reason say it."""
        label = self.kind.replace("_", " ")
        return f"{label}: {self.words}" + (f" — {self.fix}" if self.fix else "")


def classify(
    words: str | None, status: int | None, cli: str | None, agent: str, role: str,
    timed_out: bool = False,
) -> Failure:  # fmt: skip
    """The kind of a failed run from the agent's `words` and the service's `status`."""
    if timed_out:
        return Failure(TIMEOUT, words or "timed out")
    text = words or ""
    kind = _STATUS.get(status or 0)
    if kind is None:
        kind = next(
            (k for k, pattern in _PATTERNS if re.search(pattern, text, re.IGNORECASE)), CRASH
        )
    return Failure(kind, text or "exited with an error", fix_for(kind, cli, agent, role),
                   retry_after(text))  # fmt: skip


def fix_for(kind: str, cli: str | None, agent: str, role: str) -> str:
    name = cli or agent
    if kind == AUTH:
        how = LOGIN.get(cli or "", f"give {name} valid credentials")
        return f"{name}: not logged in — {how}, then run the sprint again"
    if kind == MODEL:
        flag = "--implementer-model" if role == "implement" else "--reviewer-model"
        return (
            f"{name}: the model is unknown to its service — pick another with {flag} MODEL "
            f"(or agents.models.{agent}.{role} in .kittify/config.yaml), then run the "
            "sprint again"
        )
    return ""


def retry_after(words: str) -> float | None:
    """Seconds the agent's message says to wait (`retry after 30s`, `try again in 2m`)."""
    found = re.search(
        r"(?:retry[- ]after|try again in|retry in|wait)\D{0,3}(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min)?",
        words,
        re.IGNORECASE,
    )
    if not found:
        return None
    value, unit = float(found.group(1)), (found.group(2) or "s").lower()
    return value / 1000 if unit == "ms" else value * 60 if unit.startswith("m") else value


def wait_for(failure: Failure, waits: int, base: float) -> float | None:
    """How long to wait before re-running after the `waits`-th back-off (None: stop
    waiting, count it as a failure): the CLI's retry-after, else `base` doubling;
    never more than MAX_WAIT."""
    if waits >= MAX_WAITS:
        return None
    wanted = failure.retry_after if failure.retry_after is not None else base * 2**waits
    return min(MAX_WAIT, max(0.0, wanted))
