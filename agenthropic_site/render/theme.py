"""Find the theme: a user's --theme folder overrides the default one file by file."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2


PACKAGE_DIR = Path(__file__).resolve().parent.parent


def default_theme_dir() -> Path:
    """Return the shipped default theme: inside the wheel, else the checkout's top-level themes/."""
    for candidate in (PACKAGE_DIR / "themes" / "default", PACKAGE_DIR.parent / "themes" / "default"):
        if (candidate / "templates").is_dir():
            return candidate
    raise FileNotFoundError("the default theme is missing from this installation")


def theme_dirs(user_theme: Path | None) -> list[Path]:
    """Return theme folders, most specific first."""
    dirs = [default_theme_dir()]
    if user_theme is not None:
        dirs.insert(0, user_theme)
    return dirs


def environment(dirs: list[Path], bytecode_dir: Path | None = None) -> jinja2.Environment:
    """Return a Jinja environment with autoescape on for every template.

    With `bytecode_dir`, compiled templates are kept there (keyed by each template's source),
    so a build that renders a few pages does not compile every template again.
    """
    import jinja2

    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(folder / "templates")) for folder in dirs])
    bytecode = None
    if bytecode_dir is not None:
        bytecode_dir.mkdir(mode=0o700, exist_ok=True)
        bytecode = jinja2.FileSystemBytecodeCache(str(bytecode_dir))
    return jinja2.Environment(
        loader=loader,
        bytecode_cache=bytecode,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def static_files(dirs: list[Path]) -> dict[str, bytes]:
    """Return static files by relative path; earlier folders win."""
    files: dict[str, bytes] = {}
    for folder in reversed(dirs):
        static = folder / "static"
        if static.is_dir():
            for path in sorted(static.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    files[path.relative_to(static).as_posix()] = path.read_bytes()
    return dict(sorted(files.items()))



def theme_digest(dirs: list[Path]) -> bytes:
    """Hash every template and static file of the theme folders, so a theme change is seen."""
    digest = hashlib.sha256()
    for folder in dirs:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()
