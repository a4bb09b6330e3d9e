"""`agenthropic hook` and `agenthropic hooks install|uninstall`: wire Claude Code's hooks to the spool."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from agenthropic_site.errors import UserError
from agenthropic_site.places import home_folder

# The events whose hook the status rules read (design: status lifecycle), plus PreCompact for
# the timeline. Each runs `async`, so Claude Code never waits for it.
HOOK_EVENTS = ("UserPromptSubmit", "Stop", "SubagentStop", "PreCompact")
HOOK_TIMEOUT_SECONDS = 10
MARKER = "agenthropic_site hook"
BACKUP_SUFFIX = ".agenthropic-backup"


class SettingsError(UserError):
    """A settings file that cannot be changed safely (exit code 2, nothing written)."""


def hook_command(cache: Path | None) -> str:
    """Return the command line Claude Code runs: this interpreter, so no PATH lookup is needed."""
    command = f"{shlex.quote(sys.executable)} -m {MARKER}"
    if cache is not None:
        command = f"AGENTHROPIC_CACHE_DIR={shlex.quote(str(cache.expanduser().resolve()))} {command}"
    return command


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and hook["command"].endswith(MARKER)


def _hook_list(group: Any) -> list[Any] | None:
    """Return an event group's list of hooks; None for a group of another shape, which holds nothing of ours."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else None


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
        present = any(_is_ours(hook) for group in groups for hook in _hook_list(group) or [])
        if not present:
            groups.append({"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS, "async": True}]})
            added += 1
    return settings, added


def uninstall(settings: dict[str, Any], first: dict[str, Any] | None = None) -> tuple[dict[str, Any], int]:
    """Return settings without our hook entries (others untouched), and how many were removed.

    A `"hooks"` object or event list left empty is removed too, unless `first` (the file before
    agenthropic first changed it: the backup) had it, so an uninstall gives the user's file back.
    """
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings, 0
    first_hooks = first.get("hooks") if first is not None else None
    had = first_hooks if isinstance(first_hooks, dict) else None
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            listed = _hook_list(group) or []
            mine = [hook for hook in listed if _is_ours(hook)]
            if mine:
                removed += len(mine)
                group = {**group, "hooks": [hook for hook in listed if not _is_ours(hook)]}
                if not group["hooks"]:
                    continue  # the group held only our hook: it was ours
            kept_groups.append(group)
        if kept_groups or not groups or (had is not None and isinstance(had.get(event), list)):
            hooks[event] = kept_groups
        else:
            del hooks[event]  # the list held only our groups and the user's file had none
    if not hooks and removed and had is None:
        del settings["hooks"]
    return settings, removed


def read_first_settings(backup: Path) -> dict[str, Any] | None:
    """Return the settings kept in the backup, or None when it is missing, a link or not settings."""
    try:
        if not stat.S_ISREG(os.lstat(backup).st_mode):
            return None
        return parse_settings(backup.read_bytes().decode("utf-8"), str(backup))
    except (OSError, UnicodeDecodeError, SettingsError):
        return None


def default_settings_file() -> Path:
    """Return Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`."""
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    base = Path(config_dir.split(",")[0]).expanduser() if config_dir else Path(home_folder(os.environ)) / ".claude"
    return base / "settings.json"


class RawNumber:
    """A JSON number kept as the text it was written as, so that a rewritten file never changes it.

    Python would read `1e400` as infinity, `1.0` as 1.0 written back as `1.0` but `1E2` as
    `100.0`, and a long integer only up to 4,300 digits: the number's own text avoids all that.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"RawNumber({self.text!r})"


def parse_settings(text: str, name: str) -> dict[str, Any]:
    """Return the settings object of a file's text, numbers as RawNumber; refuse what is not strict JSON."""

    def refuse(literal: str) -> None:
        raise SettingsError(f"{name} is not valid JSON ({literal} is not a JSON value); nothing was changed")

    try:
        value = json.loads(text, parse_int=RawNumber, parse_float=RawNumber, parse_constant=refuse)
    except ValueError as exc:
        raise SettingsError(f"{name} is not valid JSON ({exc}); nothing was changed") from None
    except RecursionError:
        raise SettingsError(f"{name} is nested too deeply to edit safely; nothing was changed") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{name} does not hold a JSON object; nothing was changed")
    return value


def dump_settings(value: Any, indent: str = "") -> str:
    """Write settings as JSON indented by two spaces, every number exactly as it was read."""
    inner = indent + "  "
    if isinstance(value, RawNumber):
        return value.text
    if isinstance(value, dict):
        members = [f"{inner}{_string(key)}: {dump_settings(item, inner)}" for key, item in value.items()]
        return "{\n" + ",\n".join(members) + f"\n{indent}}}" if members else "{}"
    if isinstance(value, list):
        items = [inner + dump_settings(item, inner) for item in value]
        return "[\n" + ",\n".join(items) + f"\n{indent}]" if items else "[]"
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)  # only our own values (the hook timeout) are Python numbers
    raise TypeError(f"cannot write {type(value).__name__} into settings")


def _string(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(text)  # a lone surrogate (an escape in the file) stays an escape
    return json.dumps(text, ensure_ascii=False)


def settings_target(path: Path) -> Path:
    """Return the file to edit: the final target of a symlinked settings file (so the link stays), which must have a folder."""
    target = Path(os.path.realpath(path))
    if not target.parent.is_dir():
        raise SettingsError(f"{target.parent} does not exist (settings file {path}); nothing was written")
    return target


def read_settings(path: Path) -> tuple[dict[str, Any], bytes | None]:
    """Return the settings in a file and its bytes (None and {} when there is no file)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise SettingsError(f"{path} is not a regular file; nothing was changed")
    except FileNotFoundError:
        return {}, None
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); nothing was changed") from None
    return parse_settings(text, str(path)), data


def write_settings(path: Path, target: Path, settings: dict[str, Any], before: bytes | None) -> bool:
    """Replace the target atomically, keeping the first backup; return whether a backup was made now."""
    try:
        text = dump_settings(settings) + "\n"
    except RecursionError:
        raise SettingsError(f"{path} is nested too deeply to edit safely; nothing was changed") from None
    backed_up = before is not None and _keep_first_backup(path.with_name(path.name + BACKUP_SUFFIX), before)
    mode = stat.S_IMODE(os.stat(target).st_mode) if before is not None else 0o600
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        # Claude Code writes this file too: never replace a change made since it was read.
        if _current(target) != before:
            raise SettingsError(f"{path} changed while it was being edited; nothing was changed (run the command again)")
        os.replace(temp, target)
    except BaseException:
        os.unlink(temp)
        raise
    return backed_up


def _current(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None


def _keep_first_backup(backup: Path, data: bytes) -> bool:
    """Write the backup unless one exists: it keeps the file as it was before agenthropic first changed it."""
    try:
        fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        # Made just now and not whole (a full disk): left, it would be kept as the first backup
        # by every later install, and uninstall would have nothing to give the file back from.
        with contextlib.suppress(OSError):
            os.unlink(backup)
        raise
    return True
