"""Where agenthropic keeps its own files: their names, and the default cache folder; and where `dot` is.

No imports beyond `os`: the no-change check reads these before anything else loads
(pipeline/stamp.py), and the modules that write the files take the names from here.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` is slow to import, and this module is read first (mypy reads the name)
if TYPE_CHECKING:
    from collections.abc import Mapping

# The output folder's bookkeeping, not part of the site (snapshot, diff and verify skip it): the
# folder's claim, and the manifest of what the last build published beside its staging folders.
MARKER = ".agenthropic-site"  # claims a folder for agenthropic's builds (render/writer.py prepare_output)
STATE = ".agenthropic"
MANIFEST_NAME = "manifest"
MANIFEST_HEADER = b"agenthropic-site-manifest 1\n"
UNKNOWN = "-"  # a manifest entry whose bytes match no known inputs (its publishing was cut short)

# The cache folder's files: the SQLite cache (and its write-ahead log) and the hook spool's folder.
CACHE_FILE = "cache.sqlite3"
CACHE_FILES = (CACHE_FILE, f"{CACHE_FILE}-wal")
SPOOL_FOLDER = "hooks"


def home_folder(env: Mapping[str, str]) -> str:
    """Return the user's home folder: `$HOME`, or the password database's entry when HOME is unset or empty."""
    # Python's expanduser("~") takes an empty HOME as it is, so the default cache was
    # /.cache/agenthropic (made there by root): an empty HOME is read as Python reads an unset one.
    home = env.get("HOME", "")
    if home:
        return home
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):  # no password database (Windows), or no entry for this user
        return os.path.expanduser("~")


def default_cache_dir(env: Mapping[str, str], home: str) -> str:
    """Return `$AGENTHROPIC_CACHE_DIR`, else `$XDG_CACHE_HOME/agenthropic`, else `~/.cache/agenthropic`."""
    explicit = env.get("AGENTHROPIC_CACHE_DIR", "").strip()
    if explicit:
        return os.path.expanduser(explicit)
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    if xdg:
        return os.path.join(os.path.expanduser(xdg), "agenthropic")
    return os.path.join(home, ".cache", "agenthropic")


def dot_on_path() -> bool:
    """Tell whether Graphviz's `dot` is a command on PATH (shutil.which's rule for a command name, without importing shutil)."""
    # One rule for the no-change check, which imports almost nothing (pipeline/stamp.py), and for the
    # build's signatures: they must agree on whether graphs can be drawn.
    for folder in os.get_exec_path():
        path = os.path.join(folder, "dot")
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return True
    return False
