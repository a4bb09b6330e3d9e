"""`agenthropic hook` (record one hook event) and `agenthropic hooks install|uninstall`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agenthropic_site.errors import report
from agenthropic_site.live.settings import (
    BACKUP_SUFFIX,
    HOOK_EVENTS,
    SettingsError,
    default_settings_file,
    hook_command,
    install,
    read_first_settings,
    read_settings,
    settings_target,
    uninstall,
    write_settings,
)


def _run_hook(args: argparse.Namespace) -> int:
    from agenthropic_site.live.spool import run_hook

    return run_hook()


def _run_hooks(args: argparse.Namespace) -> int:
    path = args.settings or default_settings_file()
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    try:
        target = settings_target(path)
        settings, before = read_settings(target)
        if args.action == "install":
            settings, count = install(settings, hook_command(args.cache))
            verb = "added"
        else:
            settings, count = uninstall(settings, read_first_settings(backup))
            verb = "removed"
        backed_up = write_settings(path, target, settings, before) if count else False
    except OSError as exc:
        where = exc.filename or path  # a write that fails (a full disk) names no file
        return report(SettingsError(f"cannot change {where}: {exc.strerror or exc}; nothing was changed"))
    except SettingsError as exc:
        return report(exc)
    note = ""
    if backed_up:
        note = f" (backup: {backup.name})"
    elif count and os.path.lexists(backup):
        note = f" (the first backup stays in {backup.name})"
    print(f"{path}: {count} agenthropic hook entr{'y' if count == 1 else 'ies'} {verb}{note}")
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
        "Code's settings.json (a symlinked file is edited where it points, the link kept). Every other hook and setting "
        "is kept, numbers exactly as written; installing twice adds nothing; the first change backs the file up next to "
        "it, and later changes keep that backup; uninstall leaves the \"hooks\" object and event lists the backup shows "
        "the file had, even empty; a file that is not strict JSON (NaN, Infinity included) or a folder that does not exist "
        "is refused.",
    )
    hooks.add_argument("action", choices=("install", "uninstall"), help="install or uninstall")
    hooks.add_argument("--settings", type=Path, metavar="FILE",
                       help="settings file to change (default: $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)")
    hooks.add_argument("--cache", type=Path, metavar="DIR",
                       help="cache folder the hooks write to (default: the build's default cache folder); "
                       "use the same folder as `agenthropic build --cache`")
    hooks.set_defaults(handler=_run_hooks)
