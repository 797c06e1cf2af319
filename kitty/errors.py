"""One exception tree. Every error says what happened and what to do next.

Services raise these; only the CLI entry point turns them into exit codes
(0 ok, 1 refused/domain error, 2 usage, 3 unexpected bug, 75 lock busy, 130 ^C).
"""

from __future__ import annotations


class KittyError(Exception):
    """Base of every expected failure. `code` is a stable machine-readable name.

    A subclass names its code (and exit code, when not 1) in its header:
    `class NotFound(KittyError, code="not_found")`.
    """

    exit_code = 1
    code = "error"

    def __init_subclass__(cls, code: str | None = None, exit_code: int | None = None) -> None:
        super().__init_subclass__()
        if code is not None:
            cls.code = code
        if exit_code is not None:
            cls.exit_code = exit_code

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


class UsageError(KittyError, code="usage", exit_code=2): ...


class NotARepo(KittyError, code="not_a_repo"): ...


class NotInitialized(KittyError, code="not_initialized"): ...


class NotFound(KittyError, code="not_found"): ...


class AmbiguousId(KittyError, code="ambiguous"): ...


class SpecError(KittyError, code="spec_error"):
    """A work package or mission file is invalid. Carries the file and line."""

    def __init__(self, path: str, line: int | None, message: str, hint: str = "") -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}", hint)
        self.path = path
        self.line = line


class SpecErrors(KittyError, code="spec_error"):
    """Several SpecErrors found at once (validation reports everything)."""

    def __init__(self, errors: list[SpecError]) -> None:
        lines = [e.message + (f" ({e.hint})" if e.hint else "") for e in errors]
        super().__init__(
            f"{len(errors)} problem(s) in the work package files:\n  " + "\n  ".join(lines),
            "fix the files named above and run the command again; nothing was written",
        )
        self.errors = errors


class DependencyCycle(KittyError, code="dependency_cycle"): ...


class InvalidTransition(KittyError, code="invalid_transition"): ...


class GuardRefused(KittyError, code="guard_refused"):
    """The transition exists in the table but a guard (subtasks, review, ...) refuses it."""


class LockBusy(KittyError, code="lock_busy", exit_code=75): ...


class AlreadyExists(KittyError, code="already_exists"): ...


class UnsafePath(KittyError, code="unsafe_path"):
    """A path inside the repository redirects outside it (a symlink): refused, nothing written."""


class EnvironmentProblem(KittyError, code="environment"):
    """The file system refused (permissions, a directory where a file belongs, a full disk)."""


class GitError(KittyError, code="git_error"):
    """A git command failed. `output` is git's own message (stderr, else stdout), carried
    whole in the JSON error object as `git_message` (text mode quotes it in the message)."""

    def __init__(self, message: str, hint: str = "", output: str = "") -> None:
        super().__init__(message, hint)
        self.output = output

    def to_json(self) -> dict[str, str]:
        data = super().to_json()
        if self.output:
            data["git_message"] = self.output
        return data


#: The hint of a failed git command: true in text and JSON mode alike.
GIT_HINT = "git's own message follows 'failed:'; fix what it names and run the command again"


class AgentError(KittyError, code="agent_error"): ...


class CannotRun(KittyError, code="cannot_run", exit_code=127):
    """A command to run (keep-awake) could not be started: the shell's 127."""


class Untrusted(KittyError, code="untrusted"):
    """The repository's config defines commands the user has not trusted (`kitty trust`)."""
