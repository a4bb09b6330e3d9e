"""Compile the default theme's templates ahead of time, into render/compiled/ (theme.py `shipped_code` takes them)."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

from agenthropic_site.render.pages import site_environment
from agenthropic_site.render.theme import compile_options, default_theme_dir

if TYPE_CHECKING:
    import jinja2


def compiled_templates(env: jinja2.Environment) -> dict[str, str]:
    """Return the files of render/compiled/ for the templates `env` finds, by file name: each template's code, and the package that lists them."""
    files, listed = {}, []
    for name in sorted(env.list_templates()):
        module = "t_" + re.sub(r"[^A-Za-z0-9]", "_", name)
        assert module + ".py" not in files, f"two templates would be kept in {module}.py"
        assert env.loader is not None
        source, _, _ = env.loader.get_source(env, name)
        # The code exactly as Jinja compiles it (no header: its line numbers map back to the template's).
        files[module + ".py"] = env.compile(source, name, None, raw=True)
        listed.append(f"    {name!r}: ({module!r}, {hashlib.sha1(source.encode('utf-8')).hexdigest()!r}),")
    files["__init__.py"] = "\n".join([
        '"""The default theme\'s templates, compiled by Jinja ahead of time (theme.py `shipped_code`): a first build compiles none.',
        "",
        "Written by `python -c 'from agenthropic_site.render import precompile; precompile.write_compiled_templates()'`; do not edit.",
        '"""',
        "",
        f"OPTIONS = {compile_options(env)!r}",
        "# Each template's module and the SHA-1 of the source it was compiled from (as Jinja's bytecode cache checks it).",
        "TEMPLATES = {",
        *listed,
        "}",
        "",
    ])
    return files


def write_compiled_templates() -> None:
    """Write render/compiled/ for the default theme's templates (after one changes: tests/test_precompile.py asks for it)."""
    folder = Path(__file__).parent / "compiled"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.py"):
        old.unlink()
    for file_name, text in compiled_templates(site_environment([default_theme_dir()], None, UTC)).items():
        (folder / file_name).write_text(text, encoding="utf-8")
