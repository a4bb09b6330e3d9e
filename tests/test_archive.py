"""`agenthropic snapshot`: deterministic archives that round-trip; untrusted snapshots are refused."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from agenthropic_site.audit.archive import MANIFEST, ArchiveError, read_snapshot, read_tree, snapshot_site
from agenthropic_site.audit.compare import is_session_json
from agenthropic_site.cli import main
from conftest import tree_bytes


def test_two_snapshots_of_the_same_site_are_byte_identical(demo_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert main(["snapshot", "--site", str(demo_site), "--out", str(tmp_path / "one.tar.gz")]) == 0
    # The same files elsewhere, with other mtimes and modes, archive to the same bytes.
    copy = tmp_path / "elsewhere" / "site"
    shutil.copytree(demo_site, copy)
    for path in copy.rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    os.chmod(copy / "index.html", 0o600)
    assert main(["snapshot", "--site", str(copy), "--out", str(tmp_path / "two.tgz")]) == 0
    one = (tmp_path / "one.tar.gz").read_bytes()
    assert one == (tmp_path / "two.tgz").read_bytes()
    assert one[:2] == b"\x1f\x8b" and one[3] == 0 and one[4:8] == b"\0\0\0\0"  # no name, mtime 0 in the gzip header
    with tarfile.open(tmp_path / "one.tar.gz") as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == [MANIFEST, *sorted(tree_bytes(demo_site))]
    assert {(m.type, m.mode, m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {(tarfile.REGTYPE, 0o644, 0, 0, "", "", 0)}


def test_source_date_epoch_sets_the_member_times(demo_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert main(["snapshot", "--site", str(demo_site), "--out", str(tmp_path / "s.tar.gz")]) == 0
    with tarfile.open(tmp_path / "s.tar.gz") as tar:
        assert {m.mtime for m in tar.getmembers()} == {1767225600}
    # "²" passes str.isdigit() and fails int(); int() refuses more than 4,300 digits: both ended in a traceback.
    for wrong in ("yesterday", "\u00b2", "9" * 5000, "-1"):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", wrong)
        assert main(["snapshot", "--site", str(demo_site), "--out", str(tmp_path / "t.tar.gz")]) == 2
        assert not (tmp_path / "t.tar.gz").exists()


def test_a_snapshot_round_trips(demo_site: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.tar.gz"
    assert main(["snapshot", "--site", str(demo_site), "--out", str(out)]) == 0
    site = tree_bytes(demo_site)
    assert read_snapshot(out) == site
    with tarfile.open(out) as tar:
        tar.extractall(tmp_path / "extracted", filter="data")
    extracted = tree_bytes(tmp_path / "extracted")
    assert MANIFEST in extracted
    del extracted[MANIFEST]
    assert extracted == site


def test_a_redaction_pass_maps_bytes_before_archiving(demo_site: Path, tmp_path: Path) -> None:
    def mask(rel: str, data: bytes) -> bytes:
        return data.replace(b"api-server", b"[project]")

    listed = snapshot_site(demo_site, tmp_path / "r.tar.gz", redact=mask)
    files = read_snapshot(tmp_path / "r.tar.gz")
    assert files == {rel: mask(rel, data) for rel, data in tree_bytes(demo_site).items()}
    assert listed == {rel: (len(data), hashlib.sha256(data).hexdigest()) for rel, data in files.items()}
    assert any(b"api-server" in data for data in tree_bytes(demo_site).values())
    assert all(b"api-server" not in data for data in files.values())


def test_a_site_file_changed_while_it_is_archived_writes_no_snapshot(demo_site: Path, tmp_path: Path) -> None:
    """The files are read twice (the manifest, which names their digests, comes first): a change between the two is refused."""
    site = tmp_path / "site"
    shutil.copytree(demo_site, site)
    count, read = len(tree_bytes(site)), []

    def edit_once_read(rel: str, data: bytes) -> bytes:  # called as each file is first read; the last one edits the first
        read.append(rel)
        if len(read) == count:
            (site / read[0]).write_bytes(b"changed meanwhile")
        return data

    with pytest.raises(ArchiveError) as refused:
        snapshot_site(site, tmp_path / "s.tar.gz", redact=edit_once_read)
    assert str(refused.value) == f"{read[0]} in the site folder changed while it was archived; nothing was written"
    assert not (tmp_path / "s.tar.gz").exists() and not list(tmp_path.glob(".tmp-*"))


def test_refuses_a_folder_without_the_marker_and_an_archive_inside_the_site(demo_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "index.html").write_text("mine")
    assert main(["snapshot", "--site", str(plain), "--out", str(tmp_path / "p.tar.gz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".agenthropic-site" in err
    assert main(["snapshot", "--site", str(demo_site), "--out", str(demo_site / "inside.tar.gz")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (demo_site / "inside.tar.gz").exists() and not (tmp_path / "p.tar.gz").exists()


def test_the_default_archive_sits_beside_the_site(demo_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    shutil.copytree(demo_site, site)
    monkeypatch.chdir(tmp_path)
    assert main(["snapshot"]) == 0
    assert read_snapshot(tmp_path / "site-snapshot.tar.gz") == tree_bytes(site)


def hostile(path: Path, *members: tuple[tarfile.TarInfo, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def regular(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def link(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize(
    "member",
    [
        (regular("/etc/evil"), b"x"),
        (regular("../evil"), b"x"),
        (regular("data/../../evil"), b"x"),
        (regular("data/\x1b[2Jevil"), b"x"),
        (link("index.html", tarfile.SYMTYPE, "/etc/passwd"), b""),
        (link("report.html", tarfile.LNKTYPE, ".agenthropic-site"), b""),
        (link("dev", tarfile.CHRTYPE), b""),
        (link("fifo", tarfile.FIFOTYPE), b""),
    ],
    ids=["absolute", "dotdot", "inner-dotdot", "escape-sequence", "symlink", "hardlink", "device", "fifo"],
)
def test_untrusted_snapshot_members_are_refused(tmp_path: Path, member: tuple[tarfile.TarInfo, bytes], capsys: pytest.CaptureFixture[str]) -> None:
    bad = hostile(tmp_path / "bad.tar.gz", (regular(".agenthropic-site"), b"m"), member)
    with pytest.raises(ArchiveError):
        read_tree(bad)
    assert main(["diff", str(bad), str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_tree_read_for_a_diff_keeps_only_the_sessions_json_whole(demo_site: Path, tmp_path: Path) -> None:
    """A diff held both trees whole (248 MB for two sites of 120 MB): it reads the sessions' JSON, and compares the rest by digest."""
    snapshot_site(demo_site, tmp_path / "s.tar.gz")
    for source in (demo_site, tmp_path / "s.tar.gz"):
        whole, read = read_tree(source), read_tree(source, is_session_json)
        assert set(read) == set(whole) and any(is_session_json(rel) for rel in read), source
        for rel, data in read.items():
            assert data == (whole[rel] if is_session_json(rel) else hashlib.sha256(whole[rel]).digest()), (source, rel)


def test_a_snapshot_that_does_not_match_its_manifest_is_refused(demo_site: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.tar.gz"
    snapshot_site(demo_site, good)
    with tarfile.open(good) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]  # type: ignore[union-attr]
    tampered = [(m, b"<p>changed</p>" if m.name == "index.html" else data) for m, data in members]
    with pytest.raises(ArchiveError, match="manifest"):
        read_tree(hostile(tmp_path / "tampered.tar.gz", *tampered))
    with pytest.raises(ArchiveError, match="manifest"):  # as a diff reads it: index.html kept as its digest only
        read_tree(tmp_path / "tampered.tar.gz", is_session_json)
    with pytest.raises(ArchiveError, match="not a readable snapshot"):
        (tmp_path / "junk.tar.gz").write_bytes(b"not a tar")
        read_tree(tmp_path / "junk.tar.gz")


@pytest.mark.parametrize("entry", [{"path": 5}, {"path": None}, {"path": ["a"]}, {"size": "9"}, {"size": 1.5}, {"sha256": 7}, "index.html"])
def test_a_manifest_entry_of_the_wrong_kind_is_refused(tmp_path: Path, entry: object, capsys: pytest.CaptureFixture[str]) -> None:
    # A path that is not a string (5, null) was compared and sorted with the members' names: a traceback, exit 4.
    files = [{"path": "index.html", "size": 3, "sha256": hashlib.sha256(b"<p>").hexdigest(), **entry} if isinstance(entry, dict) else entry]
    manifest = json.dumps({"format": "agenthropic-snapshot/1", "files": files}).encode()
    bad = hostile(tmp_path / "bad.tar.gz", (regular(MANIFEST), manifest), (regular(".agenthropic-site"), b""), (regular("index.html"), b"<p>"))
    with pytest.raises(ArchiveError, match="MANIFEST.json is malformed"):
        read_tree(bad)
    assert main(["diff", str(bad), str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_snapshot_and_a_build_publishing_the_same_site_take_turns(tmp_path: Path) -> None:
    """The site's marker file is locked: shared while a snapshot reads, exclusive while a build publishes."""
    import threading
    import time

    from agenthropic_site.render.writer import site_lock
    from conftest import DEMO_CORPUS, build

    site = tmp_path / "site"
    assert build(DEMO_CORPUS, site, tmp_path / "cache") == 1
    snapshot: dict[str, bytes] = {}
    with site_lock(site, True):  # as a build does while it moves its pages into place
        reader = threading.Thread(target=lambda: snapshot.update(read_tree(site)))
        reader.start()
        reader.join(0.5)
        assert reader.is_alive(), "the snapshot read a site that was being published"
        (site / "index.html").write_bytes(b"the next build's index")
    reader.join(30)
    assert snapshot["index.html"] == b"the next build's index"

    (site / "index.html").unlink()  # the next build has a page to publish
    with site_lock(site, False):  # as a snapshot does while it reads
        builder = threading.Thread(target=build, args=(DEMO_CORPUS, site, tmp_path / "cache"))
        builder.start()
        deadline = time.monotonic() + 60
        while not list(site.glob(".agenthropic/staging/*/*.part")) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the build has staged its pages and waits to publish them
        assert list(site.glob(".agenthropic/staging/*/*.part")), "the build never staged its pages"
        builder.join(0.5)
        assert builder.is_alive() and not (site / "index.html").exists(), "the build published under a reader"
    builder.join(60)
    assert (site / "index.html").is_file()
