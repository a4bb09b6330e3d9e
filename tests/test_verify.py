"""`agenthropic verify`: passes on the demo corpus, names the failing check on a planted fault."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from agenthropic_site.cli import main
from agenthropic_site.audit.verify import Check, exit_code, forest_problems, run_checks
from conftest import DEMO_NOW, tree_bytes

CHECKS = ["deterministic", "token-truth", "dag", "incremental"]
# A build that writes random bytes into a page after building: nondeterminism planted on purpose.
NOISY_BUILD = """\
import os
import sys

from agenthropic_site.cli import main

code = main(sys.argv[1:])
out = sys.argv[sys.argv.index("--out") + 1]
with open(os.path.join(out, "index.html"), "ab") as handle:
    handle.write(os.urandom(16))
sys.exit(code)
"""


@pytest.mark.slow
def test_verify_passes_on_the_demo_corpus_and_leaves_nothing_behind(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    corpus_before = tree_bytes(demo_corpus)
    assert main(["verify", "--corpus", str(demo_corpus), "--now", DEMO_NOW, "-q"]) == 0
    rows = [line.split()[:2] for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [[name, "pass"] for name in CHECKS]
    assert tree_bytes(demo_corpus) == corpus_before  # read-only: the append happened on a copy
    assert list(temp.iterdir()) == []


@pytest.mark.slow
def test_an_absolute_link_inside_the_corpus_points_into_the_copy(demo_corpus: Path, tmp_path: Path) -> None:
    """A link to a folder of the corpus by its absolute path: copied as it was, it pointed out of the copy (exit 3, every check failed)."""
    project = sorted(path for path in demo_corpus.iterdir() if path.is_dir())[0]
    (demo_corpus / "alias").symlink_to(project.resolve())  # as `ln -s "$PWD/project" alias` makes it
    (demo_corpus / "relative").symlink_to(project.name)
    built = tmp_path / "direct"
    assert main(["build", "--corpus", str(demo_corpus), "--out", str(built / "site"), "--cache", str(built / "cache"), "--now", DEMO_NOW, "-q"]) == 1
    work = tmp_path / "work"
    work.mkdir()
    checks = run_checks(demo_corpus, work, now=DEMO_NOW)
    assert [(check.name, check.status) for check in checks] == [(name, "pass") for name in CHECKS], checks
    copied = work / "corpus"
    assert (copied / "alias").readlink() == copied / project.name and (copied / "relative").readlink() == Path(project.name)


def checks_with_planted_build(corpus: Path, tmp_path: Path, source: str) -> list[Check]:
    """Run every check on `corpus` with builds made by a script of this source (given the build's arguments)."""
    script = tmp_path / "planted_build.py"
    script.write_text(source)
    work = tmp_path / "work"
    work.mkdir()
    return run_checks(corpus, work, now=DEMO_NOW, build_command=(sys.executable, str(script), "build"))


@pytest.mark.slow
def test_verify_names_the_check_a_planted_fault_breaks(demo_corpus: Path, tmp_path: Path) -> None:
    checks = checks_with_planted_build(demo_corpus, tmp_path, NOISY_BUILD)
    status = {check.name: check for check in checks}
    assert [check.name for check in checks] == CHECKS
    assert status["deterministic"].status == "fail" and "index.html" in status["deterministic"].detail
    assert status["incremental"].status == "fail"
    assert status["token-truth"].status == status["dag"].status == "pass"
    assert exit_code(checks) == 1


def test_a_missing_corpus_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--corpus", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not found" in err


def test_the_dag_check_finds_cycles_second_parents_and_orphans() -> None:
    def doc(edges: list[tuple[str, str]], unlinked: tuple[str, ...] = ()) -> dict:
        parents = {child: parent for parent, child in edges}
        agents = [{"agent_id": a, "parent_agent_id": parents.get(a)} for a in ("main", "a", "b", "c")]
        return {"session_id": "main", "agents": agents, "unlinked_agents": list(unlinked),
                "edges": [{"parent": p, "child": c, "source": "test"} for p, c in edges]}

    assert forest_problems(doc([("main", "a"), ("a", "b"), ("main", "c")])) == []
    assert forest_problems(doc([("main", "a"), ("a", "b")], unlinked=("c",))) == []
    assert any("cycle" in p for p in forest_problems(doc([("main", "a"), ("b", "c"), ("c", "b")])))
    assert any("two parents" in p for p in forest_problems(doc([("main", "a"), ("main", "b"), ("a", "c"), ("b", "c")])))
    assert any("not listed as unlinked" in p for p in forest_problems(doc([("main", "a"), ("main", "b")])))
    assert any("does not have" in p for p in forest_problems(doc([("main", "a"), ("main", "b"), ("main", "c"), ("main", "ghost")])))


# A build that ends as one on a full disk does: exit 1, its own line, nothing published.
FULL_DISK_BUILD = """\
import sys

print("agenthropic: no space left for the cache in CACHE (database or disk is full); the site was left whole", file=sys.stderr)
sys.exit(1)
"""


def test_a_build_that_published_nothing_fails_every_check(demo_corpus: Path, tmp_path: Path) -> None:
    # Exit 1 was taken for "finished, sessions left out": the empty site was read as one, two checks
    # failed on a KeyError and the graph check passed on no session at all.
    checks = checks_with_planted_build(demo_corpus, tmp_path, FULL_DISK_BUILD)
    assert [check.status for check in checks] == ["fail"] * 4, checks
    assert all("exited 1: agenthropic: no space left for the cache" in check.detail for check in checks), checks


@pytest.mark.slow
def test_a_temporary_folder_without_room_is_a_one_line_error_or_failed_builds(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a real full file system: too small for the copy, one line and exit 2; room for the copy only, every check fails."""
    from test_hostile_cache import mounted

    corpus_bytes = sum(path.stat().st_size + 4096 for path in demo_corpus.rglob("*"))  # a block for each entry, at most
    for size, expected in ((corpus_bytes // 2, 2), (corpus_bytes + 256 * 1024, 1)):
        with mounted(tmp_path / f"temp-{size}", f"size={size}") as temp:
            monkeypatch.setattr(tempfile, "tempdir", str(temp))
            assert main(["verify", "--corpus", str(demo_corpus), "--now", DEMO_NOW, "-q"]) == expected
            out, err = capsys.readouterr()
            if expected == 2:
                assert out == "" and err.count("\n") == 1 and f"cannot copy the corpus into the temporary folder {temp}" in err, err
                assert "No space left on device" in err
            else:
                rows = [line.split()[:2] for line in out.splitlines()[1:]]
                assert rows == [[name, "fail"] for name in CHECKS], out
                assert out.lower().count("no space left") == 4, out  # the cache's or the output's, named in each row
            assert list(temp.iterdir()) == []  # the copies went with the run
