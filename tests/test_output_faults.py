"""A build that cannot write its output ends with a clear error and leaves the previous site as it was."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

import agenthropic_site.render.writer as writer_module
from conftest import build, tree_bytes

SESSION = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"


def fail_after(monkeypatch: pytest.MonkeyPatch, count: int, error: int) -> None:
    """Let `count` output files be staged, then fail like a full (or read-only) disk."""
    real = writer_module._create_staged
    calls = [0]

    def create_staged(folder: int) -> tuple[int, str]:
        calls[0] += 1
        if calls[0] > count:
            raise OSError(error, "simulated")
        return real(folder)

    monkeypatch.setattr(writer_module, "_create_staged", create_staged)


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS])
def test_a_failed_write_keeps_the_previous_site(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], error: int) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    assert build(demo_corpus, out, cache) == 1
    before = tree_bytes(out)
    # Change every page (a new theme stylesheet changes no page, so change the data instead).
    shutil.rmtree(next(p for p in demo_corpus.rglob("*") if p.name == SESSION and p.is_dir()))
    next(demo_corpus.rglob(f"{SESSION}.jsonl")).unlink()
    fail_after(monkeypatch, 2, error)
    assert build(demo_corpus, out, cache) == 1
    assert "the previous site was left as it was" in capsys.readouterr().err
    assert tree_bytes(out) == before  # not one file changed, no temporary file left
    monkeypatch.undo()
    assert build(demo_corpus, out, cache) == 1  # the next build succeeds and the site follows the corpus
    assert not (out / "sessions" / SESSION).exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_first_build_that_fails_leaves_no_empty_folders(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    """Pages' folders are made as they are rendered: a failed first build left them all, empty (52 after a theme fault)."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "mine.txt").write_text("a user's file in a folder the build never made")
    (out / "empty-of-mine").mkdir()
    (out / ".git" / "refs" / "tags").mkdir(parents=True)  # git needs its empty folders
    (out / "sessions" / ".keep").mkdir(parents=True)
    (out / ".agenthropic-site").write_text("")  # an output folder the user made ours
    fail_after(monkeypatch, 40, errno.ENOSPC)
    assert build(demo_corpus, out, cache, "--jobs", jobs) == 1
    said = capsys.readouterr().err
    assert "; nothing was published" in said and "previous site" not in said, said  # there was none
    left = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if not path.relative_to(out).as_posix().startswith(".agenthropic/"))
    assert left == [".agenthropic", ".agenthropic-site", ".git", ".git/refs", ".git/refs/tags", "empty-of-mine", "notes", "notes/mine.txt",
                    "sessions", "sessions/.keep"], left
    monkeypatch.undo()
    assert build(demo_corpus, out, cache) == 1 and (out / "index.html").is_file()
    # The folders looked in are the folders a site is made of.
    assert sorted(path.name for path in out.iterdir() if path.is_dir() and path.name not in (".agenthropic", ".git", "empty-of-mine", "notes")) == sorted(
        writer_module.SITE_FOLDERS)


def test_no_folder_is_judged_empty_while_another_build_publishes(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build publishing into the folder moves files into folders it may have just made: a failing build leaves them then."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    out.mkdir()
    (out / ".agenthropic-site").write_text("")
    fail_after(monkeypatch, 40, errno.ENOSPC)
    with writer_module.site_lock(out, True):  # held as a publishing build holds it
        assert build(demo_corpus, out, cache, "--jobs", "1") == 1
    assert (out / "sessions").is_dir() and not any((out / "sessions").rglob("*.html"))  # left, empty, for the publisher


def test_a_site_folder_that_is_a_link_is_never_walked_when_a_build_fails(demo_corpus: Path, tmp_path: Path) -> None:
    """The build refuses to write through `sessions -> elsewhere`; failing, it must not empty folders where the link points."""
    out, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    (elsewhere / "empty-but-mine").mkdir(parents=True)
    out.mkdir()
    (out / ".agenthropic-site").write_text("")
    (out / "sessions").symlink_to(elsewhere)
    assert build(demo_corpus, out, tmp_path / "cache") == 1  # a link in the output folder: one line, nothing written through it
    assert (elsewhere / "empty-but-mine").is_dir() and (out / "sessions").is_symlink()
