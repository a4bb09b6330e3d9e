"""`agenthropic hook` and `agenthropic hooks install|uninstall`: wire Claude Code's hooks to the spool."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

# The events whose hook the status rules read (design: status lifecycle), plus PreCompact for
# the timeline. Each runs `async`, so Claude Code never waits for it.
HOOK_EVENTS = ("UserPromptSubmit", "Stop", "SubagentStop", "PreCompact")
HOOK_TIMEOUT_SECONDS = 10
MARKER = "agenthropic_site hook"
BACKUP_SUFFIX = ".agenthropic-backup"


class SettingsError(Exception):
    """A settings file that cannot be changed safely (exit code 2, nothing written)."""


def hook_command(cache: Path | None) -> str:
    """Return the command line Claude Code runs: this interpreter, so no PATH lookup is needed."""
    command = f"{shlex.quote(sys.executable)} -m {MARKER}"
    if cache is not None:
        command = f"AGENTHROPIC_CACHE_DIR={shlex.quote(str(cache.expanduser().resolve()))} {command}"
    return command


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and hook["command"].endswith(MARKER)


def install(settings: dict[str, Any], command: str) -> tuple[dict[str, Any], int]:
    """Return settings with our hook on every HOOK_EVENTS entry, and how many entries were added."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" in the settings file is not an object')
    added = 0
    for event in HOOK_EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SettingsError(f'"hooks.{event}" in the settings file is not a list')
        present = any(_is_ours(hook) for group in groups if isinstance(group, dict) for hook in group.get("hooks") or [])
        if not present:
            groups.append({"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS, "async": True}]})
            added += 1
    return settings, added


def uninstall(settings: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Return settings without our hook entries (others untouched), and how many were removed."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings, 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                mine = [hook for hook in group["hooks"] if _is_ours(hook)]
                if mine:
                    removed += len(mine)
                    group = {**group, "hooks": [hook for hook in group["hooks"] if not _is_ours(hook)]}
                    if not group["hooks"]:
                        continue  # the group held only our hook: it was ours
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        elif groups:
            del hooks[event]
    if not hooks:
        del settings["hooks"]
    return settings, removed


def default_settings_file() -> Path:
    """Return Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`."""
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    base = Path(config_dir.split(",")[0]).expanduser() if config_dir else Path.home() / ".claude"
    return base / "settings.json"


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{path} does not hold a JSON object; nothing was changed")
    return value


def _write(path: Path, settings: dict[str, Any]) -> None:
    """Back the old file up once per change, then replace it atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        shutil.copy2(path, path.with_name(path.name + BACKUP_SUFFIX))
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".settings-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(settings, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    os.chmod(temp, mode)
    os.replace(temp, path)


def _run_hook(args: argparse.Namespace) -> int:
    from agenthropic_site.hookspool import run_hook

    return run_hook()


def _run_hooks(args: argparse.Namespace) -> int:
    path = args.settings or default_settings_file()
    try:
        settings = _read(path)
        if args.action == "install":
            settings, count = install(settings, hook_command(args.cache))
            verb = "added"
        else:
            settings, count = uninstall(settings)
            verb = "removed"
        if count:
            _write(path, settings)
    except (SettingsError, OSError) as exc:
        print(f"agenthropic: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: {count} agenthropic hook entr{'y' if count == 1 else 'ies'} {verb}"
          + (f" (backup: {path.name}{BACKUP_SUFFIX})" if count and path.with_name(path.name + BACKUP_SUFFIX).exists() else ""))
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    """Add `hook` and `hooks` to the command line."""
    hook = commands.add_parser(
        "hook",
        help="record one Claude Code hook event (run by Claude Code, reads JSON on stdin)",
        description="Read one hook payload from stdin and append its identifiers to the spool in the cache folder "
        "($AGENTHROPIC_CACHE_DIR, else the build's default). Always exits 0 and never waits long, so it cannot block "
        "Claude Code. Prompts, messages and tool data are dropped, never stored.",
    )
    hook.set_defaults(handler=_run_hook)
    hooks = commands.add_parser(
        "hooks",
        help="install or remove agenthropic's hooks in Claude Code's settings.json",
        description=f"Add (install) or remove (uninstall) async command hooks for {', '.join(HOOK_EVENTS)} in Claude "
        "Code's settings.json. Every other hook and setting is kept; installing twice adds nothing; a backup of the "
        "previous file is kept next to it; a settings file that is not valid JSON is refused.",
    )
    hooks.add_argument("action", choices=("install", "uninstall"), help="install or uninstall")
    hooks.add_argument("--settings", type=Path, metavar="FILE",
                       help="settings file to change (default: $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)")
    hooks.add_argument("--cache", type=Path, metavar="DIR",
                       help="cache folder the hooks write to (default: the build's default cache folder); "
                       "use the same folder as `agenthropic build --cache`")
    hooks.set_defaults(handler=_run_hooks)
