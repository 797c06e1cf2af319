"""The real agent CLIs installed by `make test` (tests/agents/package.json, exact
versions), and how to run one hermetically: its home, credentials that are not
real, and every base URL pointed at a model service on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BIN = HERE / "node_modules" / ".bin"
PINNED: dict[str, str] = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "qwen": "@qwen-code/qwen-code",
    "opencode": "opencode-ai",
    "auggie": "@augmentcode/auggie",
}


def pinned_version(name: str) -> str:
    deps = json.loads((HERE / "package.json").read_text())["dependencies"]
    return str(deps[PINNED[name]])


def require(name: str) -> Path:
    """The installed CLI; without it, skip on a developer's machine but FAIL in CI when
    npm is there (make test installs them with npm: a missing one is a broken install)."""
    exe = BIN / name
    if exe.exists():
        return exe
    why = f"{exe} is not installed (make test runs npm in tests/agents)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes") and shutil.which("npm"):
        pytest.fail(f"agent CLI contract tests cannot run in CI: {why}", pytrace=False)
    pytest.skip(why)


def environment(name: str, home: Path, url: str) -> dict[str, str]:
    """The CLI's environment: a fresh HOME, fake credentials, the model service at `url`
    (a loopback address), updates and telemetry off, our CLIs first on PATH."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "CLAUDE_"))
        and not key.startswith(("CODEX_", "QWEN_", "OPENCODE_", "AUGMENT_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        CI="true",
    )
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env.pop(key, None)
    if name in SETUP:
        env.update(SETUP[name](home, url))
    return env


def _claude_env(home: Path, url: str) -> dict[str, str]:
    return dict(
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="kitty-test-key",
        CLAUDE_CODE_MAX_RETRIES="0",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )


def _codex_env(home: Path, url: str) -> dict[str, str]:
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model_provider = "double"\nmodel = "double-model"\n'
        "[model_providers.double]\n"
        f'name = "double"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
        'env_key = "OPENAI_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
    )
    return dict(CODEX_HOME=str(codex_home), OPENAI_API_KEY="kitty-test-key")


def _gemini_env(home: Path, url: str) -> dict[str, str]:
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "telemetry": {"enabled": False},
                "privacy": {"usageStatisticsEnabled": False},
            }
        )
    )
    return dict(GEMINI_API_KEY="kitty-test-key", GOOGLE_GEMINI_BASE_URL=url)


#: qwen's settings format version (`$version` in ~/.qwen/settings.json, 0.24.x).
QWEN_SETTINGS_VERSION = 4


def _qwen_env(home: Path, url: str) -> dict[str, str]:
    (home / ".qwen").mkdir(exist_ok=True)
    (home / ".qwen" / "settings.json").write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "openai"}},
                # no update check, chat log or sleep inhibitor: CPU a test run
                # does not need
                "general": {
                    "enableAutoUpdate": False,
                    "chatRecording": False,
                    "preventSystemSleep": False,
                },
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
                # its shell tool's commands on pipes, not a pseudo-terminal (as `qwen -p`
                # does): through the PTY, on a loaded machine, a command's last lines
                # can be lost (a `git diff` came back cut after its `index` line)
                "tools": {"shell": {"enableInteractiveShell": False}},
                # the settings format qwen 0.24 writes: without it, each qwen's first
                # start rewrites this file (rename away, rename a shared .tmp in), and
                # two started at once on one HOME race on it (one reads no settings)
                "$version": QWEN_SETTINGS_VERSION,
            }
        )
    )
    return dict(
        OPENAI_BASE_URL=f"{url}/v1",
        OPENAI_API_KEY="kitty-test-key",
        OPENAI_MODEL="double-model",
        QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
    )


def _opencode_env(home: Path, url: str) -> dict[str, str]:
    return dict(
        OPENCODE_CONFIG_CONTENT=json.dumps(
            {
                "model": "double/double-model",
                "provider": {
                    "double": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "double",
                        "options": {"baseURL": f"{url}/v1", "apiKey": "kitty-test-key"},
                        "models": {
                            "double-model": {"name": "double-model"},
                            "other-model": {"name": "other-model"},  # a model per role
                        },
                    }
                },
                "autoupdate": False,
                "share": "disabled",
                # no undo snapshots (git processes), formatters or language servers
                "snapshot": False,
                "formatter": False,
                "lsp": False,
            }
        ),
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        # what a test run does not need and costs CPU: plugins, file watching,
        # reading Claude Code's and other tools' skills and settings
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER="1",
        OPENCODE_DISABLE_CLAUDE_CODE="1",
        OPENCODE_DISABLE_EXTERNAL_SKILLS="1",
    )


def _auggie_env(home: Path, url: str) -> dict[str, str]:
    return dict(
        AUGMENT_SESSION_AUTH=json.dumps(
            {"accessToken": "kitty-test-key", "tenantURL": f"{url}/", "scopes": ["email"]}
        )
    )


#: Each CLI's own settings: credentials, its base URL on the double, updates off.
SETUP: dict[str, Callable[[Path, str], dict[str, str]]] = {
    "claude": _claude_env,
    "codex": _codex_env,
    "gemini": _gemini_env,
    "qwen": _qwen_env,
    "opencode": _opencode_env,
    "auggie": _auggie_env,
}
