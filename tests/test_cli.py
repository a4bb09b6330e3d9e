"""The command line: clear errors with the documented exit codes, and documented options."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agenthropic_site.cli import build_parser, main
from conftest import DEMO_CORPUS, DEMO_EXPECTED, REPO, build


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agenthropic_site", *args], capture_output=True, text=True, timeout=60)


def test_missing_corpus_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run("build", "--corpus", str(tmp_path / "nope"), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "not found" in result.stderr
    assert not (tmp_path / "out" / "index.html").exists()


def test_corpus_that_is_a_file_is_exit_2(tmp_path: Path) -> None:
    corpus = tmp_path / "file.jsonl"
    corpus.write_text("{}\n")
    result = run("build", "--corpus", str(corpus), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "not a folder" in result.stderr


def test_output_parent_is_created(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "site"
    assert build(DEMO_CORPUS, out, tmp_path / "cache") in (0, 1)
    assert (out / "index.html").is_file()


def test_foreign_output_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    assert build(DEMO_CORPUS, out, tmp_path / "cache") == 2
    assert "refusing" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]


def test_cache_inside_corpus_or_output_is_refused(tmp_path: Path, demo_corpus: Path) -> None:
    assert build(demo_corpus, tmp_path / "out", demo_corpus / "cache") == 2
    assert build(demo_corpus, tmp_path / "out", tmp_path / "out" / "cache") == 2


def subcommands() -> dict:
    parser = build_parser()
    return dict(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def test_help_describes_every_option_of_every_command() -> None:
    commands = subcommands()
    assert {"build", "pricing"} <= set(commands)
    for name, command in commands.items():
        text = command.format_help()
        for action in command._actions:
            assert action.help, f"{name} {action.option_strings} has no help"
            for flag in action.option_strings:
                assert flag in text
        assert name in build_parser().format_help()


@pytest.mark.parametrize("columns", ["50", "120", None])
def test_help_is_as_wide_as_argparse_makes_it(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parsers' formatters take argparse's width (COLUMNS, else the terminal's, else 80) without importing shutil: the same help."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    parser = build_parser()
    ours = parser.format_help()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    assert ours == parser.format_help()
    for name, command in subcommands().items():
        ours = command.format_help()
        command.formatter_class = argparse.HelpFormatter
        assert ours == command.format_help(), name


def test_reading_a_build_command_line_imports_no_shutil() -> None:
    """argparse's own formatter imports shutil (and bz2, lzma) to ask for the terminal's width: 3.6 ms of every run."""
    code = ("import sys\nfrom agenthropic_site.cli import build_parser\n"
            "build_parser('build').parse_args(['build', '-q', '--corpus', 'c'])\nprint(sorted({'shutil', 'argparse'} & set(sys.modules)))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert shown.strip() == "['argparse']"


def test_the_readme_documents_every_command() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for name in subcommands():
        assert f"agenthropic {name}" in readme, f"README does not mention `agenthropic {name}`"


def test_pricing_lists_unpriced_models_of_the_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pricing", "--corpus", str(DEMO_CORPUS), "--cache", str(tmp_path / "c"), "-q"]) == 1
    out = capsys.readouterr().out
    assert "claude-sonnet-4-5" in out and "claude-nimbus-9: 5 requests, NO PRICE" in out
    assert main(["pricing", "--corpus", str(DEMO_CORPUS), "--cache", str(tmp_path / "c"), "-q", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    from fixtures.pricing import priced

    # the demo's unpriced models, from the generator's ground truth (fixtures/expected)
    truths = [json.loads(path.read_text()) for path in DEMO_EXPECTED.glob("*-*-*-*-*.json")]
    assert sorted(document["unpriced_models"]) == sorted({m for t in truths for m in t["by_model"] if not priced(m)})
    assert document["families"]["claude-sonnet-4-5"]["periods"][0]["long_context"]["threshold"] == 200000


def test_a_pricing_path_that_is_not_a_file_says_what_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, said in ((tmp_path / "missing.json", "pricing file not found"), (tmp_path, "is a folder"), (fifo, "is not a regular file")):
        assert main(["pricing", "--corpus", str(DEMO_CORPUS), "--cache", str(tmp_path / "c"), "--pricing", str(path)]) == 2
        assert said in capsys.readouterr().err


def test_no_command_prints_help_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_bad_now_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["build", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c"), "--now", "yesterday"])
    assert code == 2
    assert "ISO-8601" in capsys.readouterr().err


@pytest.mark.parametrize("now", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_clock_outside_the_calendar_in_utc_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], now: str) -> None:
    # Both parse, but are in the years 0 and 10000 in UTC: converting them raised OverflowError, a traceback.
    code = main(["build", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c"), "--now", now])
    assert code == 2 and "years 1 to 9999" in capsys.readouterr().err and not (tmp_path / "o").exists()


def _statuses(out: Path) -> dict[str, list[str]]:
    """Each session's status and its agents' statuses, as data/ says."""
    documents = (json.loads(path.read_text()) for path in sorted((out / "data" / "sessions").glob("*.json")))
    return {document["session_id"]: [document["status"], *(agent["status"] for agent in document["agents"])] for document in documents}


def test_a_watchdog_reaching_past_the_year_1_finds_nothing_stale(tmp_path: Path) -> None:
    # A clock in the year 1, or a watchdog longer than the calendar before the clock: the cut-off went
    # before the year 1 and raised OverflowError. Nothing is stale then, as with a clock before every transcript.
    def statuses(name: str, now: str, *minutes: str) -> dict[str, list[str]]:
        out = tmp_path / name
        assert main(["build", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--cache", str(tmp_path / f"{name}-cache"), "--now", now, "-q",
                     *(("--watchdog-minutes", *minutes) if minutes else ())]) == 1  # the demo has sessions it cannot price
        return _statuses(out)

    nothing_stale = statuses("before", "2000-01-01T00:00:00Z")
    assert statuses("demo", "2026-06-01T00:00:00Z") != nothing_stale  # the demo's clock ages some statuses
    assert statuses("year-1", "0001-01-01T00:00:00Z", "10") == nothing_stale
    assert statuses("long", "2026-06-01T00:00:00Z", "99999999999999999") == nothing_stale
    assert statuses("ten-thousand-years", "2026-06-01T00:00:00Z", "5256000000") == nothing_stale


def test_an_internal_error_is_exit_4_not_built_with_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import agenthropic_site.pipeline.build as build_module

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(build_module, "gather", broken)
    assert build(DEMO_CORPUS, tmp_path / "out", tmp_path / "cache") == 4
    assert "internal error" in capsys.readouterr().err


def test_docs_usage_lists_every_command_and_option() -> None:
    usage = (Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text()
    for name, command in subcommands().items():
        assert f"## agenthropic {name}" in usage, f"docs/usage.md has no section for `agenthropic {name}`"
        section = usage.split(f"## agenthropic {name}", 1)[1].split("\n## ", 1)[0]
        for action in command._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in section or f"{flag}`" in section, f"docs/usage.md does not document {name} {flag}"


def test_every_screenshot_the_docs_show_exists() -> None:
    """README.md and docs/*.md show PNGs from docs/screenshots/ (`make screenshots`) by relative path, with alt text."""
    shown = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        # Images and plain links alike: ![alt](path) and [text](path).
        for bang, alt, target in re.findall(r"(!?)\[([^\]]*)\]\(([^)\s]*screenshots/[^)\s]*\.png)\)", doc.read_text()):
            name = doc.relative_to(REPO).as_posix()
            assert alt.strip(), f"{name}: {target} has no {'alt text' if bang else 'link text'}"
            assert "://" not in target and not target.startswith("/"), f"{name}: {target} is not a relative path"
            assert (doc.parent / target).resolve().is_file(), f"{name} shows {target}, which does not exist"
            assert (doc.parent / target).stat().st_size < 250_000, f"{target} is too large for the repository"
            shown.append((name, target))
    assert {"README.md", "docs/usage.md"} <= {name for name, _ in shown}, shown


def test_a_theme_can_use_every_template_variable_the_docs_list(tmp_path: Path) -> None:
    """docs/usage.md "Themes" lists what templates get; a theme using all of it builds (undefined names fail)."""
    import re

    from conftest import DEMO_CORPUS, build

    usage = (Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text()
    themes = " ".join(usage[usage.index("### Themes") : usage.index("## agenthropic pricing")].split())
    model_part = themes[themes.index("`model` holds") : themes.index("`model.sessions` and")]
    summary_part = themes[themes.index("*summary*") : themes.index("The whole session")]
    model_fields = re.findall(r"`(\w+)`", model_part.replace("`model` holds", ""))
    summary_fields = re.findall(r"`(\w+)`", summary_part)
    assert {"tokens", "recent_sessions", "redactions"} <= set(model_fields) and {"agent_ids", "failed_agents"} <= set(summary_fields)
    templates = tmp_path / "theme" / "templates"
    templates.mkdir(parents=True)
    uses = "".join(f"{{{{ model.{name} is defined }}}}" for name in model_fields)
    uses += "{% for s in model.recent_sessions %}" + "".join(f"{{{{ s.{name} }}}}" for name in summary_fields) + "{% endfor %}"
    for name in ("root", "version", "chart", "search_index"):
        uses += f"{{{{ {name} }}}}"
    (templates / "index.html").write_text(f"<p>{uses}</p>")
    out = tmp_path / "site"
    assert build(DEMO_CORPUS, out, tmp_path / "cache", "--theme", str(tmp_path / "theme")) == 1  # 1: the demo's unpriced model
    page = (out / "index.html").read_text()
    assert "False" not in page  # `is defined` held for every model field


THEME_FAULTS = {  # a template's text -> what the one-line error says of it (line 2: the first line is fine)
    "<p>\n{% if %}\n": "line 2: TemplateSyntaxError: Expected an expression",
    "<p>\n{{ misspelt_name }}\n": "line 2: UndefinedError: 'misspelt_name' is undefined",
    "<p>\n{{ 1 // 0 }}\n": "line 2: ZeroDivisionError",
    "<p>\n{% include 'missing.html' %}\n": "line 2: TemplateNotFound: missing.html",
}


@pytest.mark.parametrize("text", [*THEME_FAULTS, b"\xff\xfe not UTF-8"], ids=["syntax", "undefined", "raises", "include", "bytes"])
def test_a_fault_in_a_themes_template_is_a_usage_error_naming_it(tmp_path: Path, text: str | bytes) -> None:
    """A theme's templates are the user's code: their faults are named with the file and line (exit 2), not reported as agenthropic's bugs."""
    from conftest import build_subprocess

    templates = tmp_path / "theme" / "templates"
    templates.mkdir(parents=True)
    (templates / "session.html").write_bytes(text if isinstance(text, bytes) else text.encode())
    done = build_subprocess(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache", options=("-q", "--theme", str(tmp_path / "theme")))
    said = THEME_FAULTS.get(text, "UnicodeDecodeError") if isinstance(text, str) else "UnicodeDecodeError"
    assert done.returncode == 2 and "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.stderr.startswith("agenthropic: the theme's template session.html") and said in done.stderr, done.stderr
    assert str(templates / "session.html") in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_fault_in_the_default_theme_stays_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a template of the user's --theme folder is the user's to fix: a shipped template's fault is agenthropic's (exit 4)."""
    from agenthropic_site.render import pages

    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("a bug in a shipped template")

    # A global the default theme's macros call: failing, it stands for a fault in a shipped template.
    monkeypatch.setattr(pages, "site_environment", _with_global(pages.site_environment, "status_badge_html", broken))
    templates = tmp_path / "theme" / "templates"
    templates.mkdir(parents=True)
    (templates / "search.html").write_text("{% extends 'base.html' %}")  # a theme that leaves the failing templates alone
    assert main(["build", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "-q",
                 "--theme", str(tmp_path / "theme")]) == 4


def test_agenthropics_own_errors_raised_in_a_themes_template_keep_their_way(tmp_path: Path) -> None:
    """A damaged cache found while a theme's template renders is repaired as anywhere else, not told as the theme's fault."""
    from agenthropic_site.cache.store import CacheDamaged
    from agenthropic_site.render.theme import ThemeError, environment, theme_dirs, theme_fault

    templates = tmp_path / "theme" / "templates"
    templates.mkdir(parents=True)
    (templates / "page.html").write_text("<p>\n{{ call() }}\n")
    dirs = theme_dirs(tmp_path / "theme")
    faults = []
    for raised in (CacheDamaged("a stored view", (("view", "s"),)), ZeroDivisionError("by zero")):
        def call(raised: Exception = raised) -> None:
            raise raised

        env = environment(dirs)
        env.globals["call"] = call
        with pytest.raises(type(raised)) as caught:
            env.get_template("page.html").render()
        faults.append(theme_fault(caught.value, dirs))
    assert faults[0] is None and isinstance(faults[1], ThemeError) and "page.html, line 2: ZeroDivisionError: by zero" in str(faults[1])


def _with_global(make: Any, name: str, value: object) -> Any:
    def made(*args: object, **kwargs: object) -> Any:
        env = make(*args, **kwargs)
        env.globals[name] = value
        return env

    return made


def test_a_theme_whose_search_script_cannot_take_split_rows_is_told_once(tmp_path: Path) -> None:
    """A theme's site.js from before split search rows (no agenthropicSearch.parts) gets a notice; the default's, or -q, none."""
    from conftest import build_subprocess

    default_script = (REPO / "themes" / "default" / "static" / "site.js").read_text()
    older = re.sub(r"\bparts\s*:[^\n]*\n", "\n", default_script)  # the handler and its table gone, as in a copy made before them
    assert older != default_script and not re.search(r"\bparts\s*:", older)
    notice = "has no agenthropicSearch.parts"
    for name, script, options, told in (
        ("older", older, (), True), ("current", default_script, (), False), ("older-quiet", older, ("-q",), False),
    ):
        static = tmp_path / name / "static"
        static.mkdir(parents=True)
        (static / "site.js").write_text(script)
        done = build_subprocess(DEMO_CORPUS, tmp_path / name / "site", tmp_path / name / "cache", options=(*options, "--theme", str(static.parent)))
        assert done.returncode == 1, done.stderr  # 1: the demo's unpriced model
        assert (notice in done.stderr) == told, (name, done.stderr)
        assert done.stderr.count(notice) <= 1
        assert (tmp_path / name / "site" / "static" / "site.js").read_text() == script  # the theme's script is still the one published


def test_an_empty_home_is_read_as_an_unset_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """With HOME empty, Python's expanduser("~") gives "/": the default cache was /.cache/agenthropic (made there as root)."""
    import pwd

    from agenthropic_site.cli import build_parser
    from agenthropic_site.commands.options import build_config
    from agenthropic_site.live.settings import default_settings_file
    from agenthropic_site.live.spool import spool_path

    for name in ("AGENTHROPIC_CACHE_DIR", "XDG_CACHE_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    for home, expected in (("", pwd.getpwuid(os.getuid()).pw_dir), ("/home/someone", "/home/someone")):
        monkeypatch.setenv("HOME", home)
        config = build_config(build_parser("build").parse_args(["build", "--now", "2026-06-01T00:00:00Z"]))
        assert (config.cache, config.corpus) == (Path(expected, ".cache", "agenthropic"), Path(expected, ".claude", "projects"))
        assert spool_path() == os.path.join(expected, ".cache", "agenthropic", "hooks", "spool.jsonl")  # where the hook writes
        assert default_settings_file() == Path(expected, ".claude", "settings.json")


def test_transcripts_where_claude_code_1_0_wrote_them_are_named_when_the_default_corpus_is_built(tmp_path: Path) -> None:
    """Some Claude Code 1.0 versions wrote to ~/.config/claude/projects, later ones to ~/.claude/projects again: a build saw half, silently."""
    home = tmp_path / "home"
    older = home / ".config" / "claude" / "projects"
    older.mkdir(parents=True)
    env = {name: value for name, value in os.environ.items() if name not in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "SOURCE_DATE_EPOCH")}
    env |= {"HOME": str(home), "SOURCE_DATE_EPOCH": "1780000000"}

    def build_default(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agenthropic_site", "build", "--out", str(tmp_path / "site"), *extra], capture_output=True,
                              text=True, timeout=120, env=env, cwd=tmp_path)

    said = f"notice: {older} holds Claude Code transcripts"
    assert said not in build_default().stderr  # an empty folder holds none
    (older / "-home-user-app").mkdir()
    alone = build_default()
    assert alone.returncode == 2
    assert alone.stderr.splitlines() == [f"{said} (some 1.0 versions wrote there): build it with --corpus {older}",
                                         f"agenthropic: corpus folder not found: {home / '.claude' / 'projects'}"]
    (home / ".claude" / "projects").mkdir(parents=True)
    both = build_default()
    assert both.returncode == 0, both.stderr
    assert f"{said} too (some 1.0 versions wrote there); this build reads {home / '.claude' / 'projects'}: build that folder with " \
           f"--corpus {older} and an --out of its own" in both.stderr.splitlines()
    assert said not in build_default("-q").stderr
    assert said not in build_default("-v", "--corpus", str(home / ".claude" / "projects")).stderr  # the corpus is chosen
    env["CLAUDE_CONFIG_DIR"] = str(home / ".claude")
    assert said not in build_default("-v").stderr
