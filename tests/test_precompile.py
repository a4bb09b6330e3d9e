"""The default theme's templates ship compiled (render/compiled/): a first build compiles none, and renders the same bytes."""

from __future__ import annotations

import importlib
import traceback
from datetime import UTC, timedelta, timezone
from pathlib import Path

import jinja2
import pytest

from agenthropic_site.render import precompile, theme
from agenthropic_site.render.pages import site_environment
from tests.conftest import DEMO_CORPUS, build, tree_bytes

COMPILED = Path(precompile.__file__).parent / "compiled"
WRITE = "python -c 'from agenthropic_site.render import precompile; precompile.write_compiled_templates()'"


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every template Jinja compiles from its source in this process, with no template compiled before the test."""
    names: list[str] = []
    original = jinja2.Environment.compile

    def counted(self: jinja2.Environment, source: str, name: str | None = None, *args: object, **kwargs: object) -> object:
        names.append(str(name))
        return original(self, source, name, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(jinja2.Environment, "compile", counted)
    monkeypatch.setattr(theme, "_COMPILED", {})  # nothing another test of this process compiled
    return names


def test_the_shipped_code_is_jinjas_code_of_the_default_templates() -> None:
    """Each default template is listed with the checksum of its source now, and its code is what this Jinja compiles it to."""
    env = site_environment([theme.default_theme_dir()], None, UTC)
    expected = precompile.compiled_templates(env)
    shipped = {path.name: path.read_text(encoding="utf-8") for path in COMPILED.glob("*.py")}
    assert set(shipped) == set(expected), f"templates added or removed: run {WRITE}"
    listed = importlib.import_module(theme.COMPILED_PACKAGE).TEMPLATES
    assert listed == _listed(expected["__init__.py"]), f"a template changed: run {WRITE}"
    if importlib.import_module(theme.COMPILED_PACKAGE).OPTIONS != theme.compile_options(env):
        # Compiled by another Jinja than the one installed: no template may be taken from that code,
        # every build compiles them from their sources (run WRITE to ship this Jinja's code).
        assert all(theme.shipped_code(env, name, checksum) is None for name, (_, checksum) in listed.items())
        return
    assert shipped == expected, f"the shipped code is not what Jinja compiles the templates to: run {WRITE}"


def _listed(package_source: str) -> dict[str, tuple[str, str]]:
    namespace: dict[str, object] = {}
    exec(compile(package_source, "__init__.py", "exec"), namespace)
    listed = namespace["TEMPLATES"]
    assert isinstance(listed, dict)
    return listed


def test_a_first_build_compiles_no_default_template_and_renders_what_compiling_them_renders(
    compiles: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    assert build(DEMO_CORPUS, tmp_path / "shipped" / "site", tmp_path / "shipped" / "cache", "--jobs", "1") in (0, 1)
    assert compiles == []
    assert not list((tmp_path / "shipped" / "templates").glob("*")), "nothing compiled, nothing kept in the cache's folder"
    monkeypatch.setattr(theme, "shipped_code", lambda *args: None)
    assert build(DEMO_CORPUS, tmp_path / "compiled" / "site", tmp_path / "compiled" / "cache", "--jobs", "1") in (0, 1)
    assert sorted(set(compiles)) == sorted(theme.environment([theme.default_theme_dir()]).list_templates())
    assert tree_bytes(tmp_path / "shipped" / "site") == tree_bytes(tmp_path / "compiled" / "site")


def test_a_template_a_theme_overrides_is_compiled_from_its_own_source(compiles: list[str], tmp_path: Path) -> None:
    """Even when it only adds to the default template: its checksum is not the shipped one."""
    templates = tmp_path / "theme" / "templates"
    templates.mkdir(parents=True)
    base = (theme.default_theme_dir() / "templates" / "base.html").read_text(encoding="utf-8")
    (templates / "base.html").write_text(base.replace("</body>", "<p>themed footer</p></body>"), encoding="utf-8")
    assert build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache", "--jobs", "1", "--theme", str(tmp_path / "theme")) in (0, 1)
    assert compiles == ["base.html"]
    assert "<p>themed footer</p>" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_shipped_code_is_taken_only_for_its_source_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    env = site_environment([theme.default_theme_dir()], None, UTC)
    name = "base.html"
    source = (theme.default_theme_dir() / "templates" / name).read_text(encoding="utf-8")
    checksum = jinja2.BytecodeCache().get_source_checksum(source)
    code = theme.shipped_code(env, name, checksum)
    assert code is not None
    assert theme.shipped_code(env, name, jinja2.BytecodeCache().get_source_checksum(source + " ")) is None
    assert theme.shipped_code(env, "no such.html", checksum) is None
    other = jinja2.Environment(autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    assert theme.shipped_code(other, name, checksum) is None  # code compiled with autoescape on would escape what this one must not
    monkeypatch.setattr(importlib.import_module(theme.COMPILED_PACKAGE), "OPTIONS", theme.compile_options(env).replace(jinja2.__version__, "0.0"))
    assert theme.shipped_code(env, name, checksum) is None  # another Jinja's code


def test_each_environment_runs_the_shipped_code_in_a_namespace_of_its_own(compiles: list[str]) -> None:
    """Two environments of one process (a watch's builds, tests) never render with each other's filters, as modules shared by both would."""
    here, there = (site_environment([theme.default_theme_dir()], None, zone) for zone in (UTC, timezone(timedelta(hours=5))))
    first, second = here.get_template("transcript.html"), there.get_template("transcript.html")
    assert first.root_render_func.__globals__["environment"] is here
    assert second.root_render_func.__globals__["environment"] is there
    assert compiles == []  # the shipped code, run twice


def test_an_error_in_a_shipped_template_is_shown_at_the_template_s_own_line(compiles: list[str]) -> None:
    """A traceback through a default template run from its shipped code names the template's file and shows its line, not the compiled module's."""
    env = site_environment([theme.default_theme_dir()], None, UTC)
    template = env.get_template("report.html")
    assert compiles == []  # its shipped code, and that of base.html which it extends
    templates = theme.default_theme_dir() / "templates"
    assert template.filename == str(templates / "report.html")
    # Every function of it too, as when Jinja compiles a template from its file (a profiler names them so).
    assert {render.__code__.co_filename for render in (template.root_render_func, *template.blocks.values())} == {template.filename}
    with pytest.raises(jinja2.UndefinedError) as raised:
        template.render()  # without `root`, which base.html writes
    frames = traceback.extract_tb(raised.value.__traceback__)
    assert not [frame for frame in frames if frame.filename.startswith(str(COMPILED))]
    shown = [frame for frame in frames if frame.filename == str(templates / "base.html")]
    assert shown and "{{ root }}" in (frame := shown[-1]).line
    assert frame.line == (templates / "base.html").read_text(encoding="utf-8").splitlines()[frame.lineno - 1].strip()
