"""One exception tree. Every error says what happened and what to do next.

Services raise these; only the CLI entry point turns them into exit codes
(0 ok, 1 refused/domain error, 2 usage, 3 unexpected bug, 75 lock busy, 130 ^C).
"""

from __future__ import annotations


class KittyError(Exception):
    """Base of every expected failure. `code` is a stable machine-readable name."""

    exit_code = 1
    code = "error"

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


class UsageError(KittyError):
    exit_code = 2
    code = "usage"


class NotARepo(KittyError):
    code = "not_a_repo"


class NotInitialized(KittyError):
    code = "not_initialized"


class NotFound(KittyError):
    code = "not_found"


class AmbiguousId(KittyError):
    code = "ambiguous"


class SpecError(KittyError):
    """A work package or mission file is invalid. Carries the file and line."""

    code = "spec_error"

    def __init__(self, path: str, line: int | None, message: str, hint: str = "") -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}", hint)
        self.path = path
        self.line = line


class SpecErrors(KittyError):
    """Several SpecErrors found at once (validation reports everything)."""

    code = "spec_error"

    def __init__(self, errors: list[SpecError]) -> None:
        lines = [e.message + (f" ({e.hint})" if e.hint else "") for e in errors]
        super().__init__(
            f"{len(errors)} problem(s) in the work package files:\n  " + "\n  ".join(lines),
            "fix the files named above and run the command again; nothing was written",
        )
        self.errors = errors


class DependencyCycle(KittyError):
    code = "dependency_cycle"


class InvalidTransition(KittyError):
    code = "invalid_transition"


class GuardRefused(KittyError):
    """The transition exists in the table but a guard (subtasks, review, ...) refuses it."""

    code = "guard_refused"


class LockBusy(KittyError):
    exit_code = 75
    code = "lock_busy"


class AlreadyExists(KittyError):
    code = "already_exists"


class UnsafePath(KittyError):
    """A path inside the repository redirects outside it (a symlink): refused, nothing written."""

    code = "unsafe_path"


class EnvironmentProblem(KittyError):
    """The file system refused (permissions, a directory where a file belongs, a full disk)."""

    code = "environment"


class GitError(KittyError):
    """A git command failed. `output` is git's own message (stderr, else stdout), carried
    whole in the JSON error object as `git_message` (text mode quotes it in the message)."""

    code = "git_error"

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


class AgentError(KittyError):
    code = "agent_error"


class CannotRun(KittyError):
    """A command to run (keep-awake) could not be started: the shell's 127."""

    exit_code = 127
    code = "cannot_run"


class Untrusted(KittyError):
    """The repository's config defines commands the user has not trusted (`kitty trust`)."""

    code = "untrusted"
