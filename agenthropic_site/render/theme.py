"""Find the theme: a user's --theme folder overrides the default one file by file."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from agenthropic_site.errors import UserError

if TYPE_CHECKING:
    from types import CodeType

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


class ThemeError(UserError):
    """A template of the user's --theme that cannot be read, compiled or rendered, named with its line (exit 2)."""


def theme_fault(exc: BaseException, dirs: list[Path]) -> ThemeError | None:
    """Return what to tell when `exc` was raised in a template of the user's theme (`dirs` as theme_dirs gives them); None otherwise.

    A template of the user's theme is code the user wrote (docs/usage.md): a syntax error, a name
    it misspells, a file that is not UTF-8 are the user's to fix, not a bug of agenthropic's. An
    error with no template of that folder on its way is left as it is.
    """
    folders = [os.path.realpath(folder / "templates") + os.sep for folder in dirs[:-1]]  # the default theme is last
    if not folders or type(exc).__module__.startswith("agenthropic_site.") or isinstance(exc, MemoryError):
        return None  # agenthropic's own errors (a damaged cache, a full disk) and the machine's go their own way
    import traceback

    import jinja2

    places: list[tuple[str, int | None]] = []
    if isinstance(exc, jinja2.TemplateSyntaxError) and exc.filename:
        places.append((exc.filename, exc.lineno))
    for frame, frame_line in traceback.walk_tb(exc.__traceback__):
        # Jinja names a template's frames after its file; its loader, reading one, holds it as `filename`.
        named = frame.f_locals.get("filename") if frame.f_code.co_name == "get_source" else None
        places.append((named, None) if isinstance(named, str) else (frame.f_code.co_filename, frame_line))
    for path, line in reversed(places):  # the innermost first
        real = os.path.realpath(path)
        folder = next((folder for folder in folders if real.startswith(folder)), None)
        if folder is not None:
            said = exc.message if isinstance(exc, jinja2.TemplateSyntaxError) and exc.message else str(exc)
            at = f", line {line}" if line else ""
            return ThemeError(f"the theme's template {real[len(folder):]}{at}: {type(exc).__name__}: {' '.join(said.split())} ({path})")
    return None


def environment(dirs: list[Path], bytecode_dir: Path | None = None) -> jinja2.Environment:
    """Return a Jinja environment with autoescape on for every template.

    With `bytecode_dir`, compiled templates are kept there (keyed by each template's source),
    so a build that renders a few pages does not compile every template again.
    """
    import jinja2

    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(folder / "templates")) for folder in dirs])
    disk = None
    if bytecode_dir is not None:
        bytecode_dir.mkdir(mode=0o700, exist_ok=True)
        disk = jinja2.FileSystemBytecodeCache(str(bytecode_dir))
    return jinja2.Environment(
        loader=loader,
        bytecode_cache=_bytecode_cache_class()(disk),
        # An environment lives for one build (a watch makes a new one for each): a template loaded
        # once in it need not be stat-ed again on every page to see whether its file changed.
        auto_reload=False,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


_BYTECODE_CLASS: list[type] = []
_COMPILED: dict[str, bytes] = {}  # this process's compiled templates, by name and source checksum
_DUMPED: set[tuple[str, str]] = set()  # (cache folder, name and checksum) this process wrote there


def _bytecode_cache_class() -> type:
    """Return the bytecode cache class (made on first use: jinja2 is imported only to render)."""
    if _BYTECODE_CLASS:
        return _BYTECODE_CLASS[0]
    import jinja2

    class ProcessBytecodeCache(jinja2.BytecodeCache):
        """Keep compiled templates in this process, and in the cache folder when there is one.

        A watch rebuilds, and tests build, many times in one process, each with a new
        Environment: keyed by each template's name and source, a template is compiled once.
        """

        def __init__(self, disk: jinja2.FileSystemBytecodeCache | None) -> None:
            self.disk = disk

        def get_bucket(self, environment: jinja2.Environment, name: str, filename: str | None, source: str) -> jinja2.bccache.Bucket:
            key, checksum = self.get_cache_key(name, filename), self.get_source_checksum(source)
            bucket = jinja2.bccache.Bucket(environment, key, checksum)
            # A default template as shipped is taken as the package compiled it, before any folder is read.
            bucket.code = shipped_code(environment, name, checksum, filename)
            if bucket.code is None:
                self.load_bytecode(bucket)
            return bucket

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            key = bucket.key + bucket.checksum
            compiled = _COMPILED.get(key)
            if compiled is not None:
                bucket.bytecode_from_string(compiled)
                # Render workers, and other processes, read it from the folder: written once a process.
                if self.disk is not None and (self.disk.directory, key) not in _DUMPED:
                    self._to_disk(bucket, key)
                return
            if self.disk is not None:
                self.disk.load_bytecode(bucket)
                if bucket.code is not None:
                    _COMPILED[key] = bucket.bytecode_to_string()
                    _DUMPED.add((self.disk.directory, key))

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            key = bucket.key + bucket.checksum
            _COMPILED[key] = bucket.bytecode_to_string()
            if self.disk is not None:
                self._to_disk(bucket, key)

        def _to_disk(self, bucket: jinja2.bccache.Bucket, key: str) -> None:
            assert self.disk is not None
            self.disk.dump_bytecode(bucket)
            _DUMPED.add((self.disk.directory, key))

    _BYTECODE_CLASS.append(ProcessBytecodeCache)
    return ProcessBytecodeCache


# Where the default theme's templates are kept compiled (written by render/precompile.py).
COMPILED_PACKAGE = "agenthropic_site.render.compiled"


def compile_options(env: jinja2.Environment) -> str:
    """Say what, besides a template's source, the code Jinja compiles it to depends on: Jinja's version and the environment's syntax options."""
    import jinja2

    return repr((
        jinja2.__version__, env.autoescape, env.trim_blocks, env.lstrip_blocks, env.keep_trailing_newline, env.newline_sequence,
        env.block_start_string, env.block_end_string, env.variable_start_string, env.variable_end_string, env.comment_start_string,
        env.comment_end_string, env.line_statement_prefix, env.line_comment_prefix, env.optimized, env.is_async, sorted(env.extensions),
    ))


def shipped_code(env: jinja2.Environment, name: str, checksum: str, filename: str | None = None) -> CodeType | None:
    """Return a template's code as the package ships it, when its source (SHA-1 `checksum`) and `env`'s options are those it was compiled for.

    Compiling the default theme's templates took a first build (an empty cache) 0.14 s of its process.
    Jinja's code of a template is Python source (render/compiled/): Python keeps its bytecode as it
    does the package's, and each environment runs that code in a namespace of its own (`Template.from_code`).
    The code names `filename`, the template's own file, as code compiled from it would: Jinja takes a
    template's file from its code, and a traceback shows the template's lines from it (the compiled
    module's lines by the template's numbers, else).
    """
    import importlib
    import importlib.abc
    import importlib.util

    try:
        compiled = importlib.import_module(COMPILED_PACKAGE)
        module, shipped_checksum = compiled.TEMPLATES.get(name, ("", ""))
        if shipped_checksum != checksum or compiled.OPTIONS != compile_options(env):
            return None
        spec = importlib.util.find_spec(f"{COMPILED_PACKAGE}.{module}")
        if spec is None or not isinstance(spec.loader, importlib.abc.InspectLoader):
            return None
        code = spec.loader.get_code(spec.name)
        return code if code is None or filename is None else _named(code, filename)
    except (ImportError, OSError, SyntaxError, ValueError, AttributeError):
        return None  # an installation without them, or with a damaged one: the template is compiled from its source


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


# The default site.js hands a large session's search files to `agenthropicSearch.parts` (render/search.py parts_js).
_TAKES_PARTS = re.compile(rb"\bparts\s*:")


def search_script_takes_parts(static: dict[str, bytes]) -> bool:
    """Tell whether the site's search script (of `static_files`) handles a session whose search rows are split into files."""
    return "site.js" not in static or _TAKES_PARTS.search(static["site.js"]) is not None


def theme_digest(dirs: list[Path]) -> bytes:
    """Hash every template and static file of the theme folders, so a theme change is seen."""
    digest = hashlib.sha256()
    for folder in dirs:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def _named(code: CodeType, filename: str) -> CodeType:
    """Return `code`, and every function's code in it, as compiled from `filename`."""
    constants = tuple(_named(constant, filename) if isinstance(constant, type(code)) else constant for constant in code.co_consts)
    return code.replace(co_filename=filename, co_consts=constants)
