"""`agenthropic snapshot`: archive a built site as a deterministic .tar.gz."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agenthropic_site.audit import MANIFEST
from agenthropic_site.config import ConfigError, is_inside
from agenthropic_site.errors import EXIT_OK, report


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `snapshot` command."""
    command = subparsers.add_parser(
        "snapshot",
        help="write a deterministic .tar.gz archive of a built site, with a manifest",
        description="Archive a site built by `agenthropic build` as a .tar.gz whose bytes depend only on the site's "
        "files: sorted members, owner 0:0, mode 0644, mtime $SOURCE_DATE_EPOCH (else 0), no time or name in the gzip "
        f"header. {MANIFEST} (the first member) lists every file's path, size and SHA-256; the site's files follow "
        "at the top level of the archive. Credential shapes (API keys, tokens, private keys) in the HTML and JSON "
        f"files are masked unless --no-redact is given; {MANIFEST} counts the masks by kind, never what they were. "
        "Exit codes: 0 written; 2 usage error, unreadable site or unwritable archive.",
    )
    command.add_argument("--site", type=Path, default=Path("site"), metavar="DIR",
                         help="the built site folder to archive; it must hold the .agenthropic-site marker (default: ./site)")
    command.add_argument("--out", type=Path, metavar="FILE",
                         help="the archive to write, ending in .tar.gz or .tgz; never inside the site folder "
                         "(default: <site>-snapshot.tar.gz beside the site folder)")
    command.add_argument("--no-redact", dest="redact", action="store_false",
                         help="archive the site's bytes as they are, without masking credential shapes in its HTML and JSON "
                         "files (default: mask them, as build --redact does)")
    command.set_defaults(handler=run_snapshot)


def run_snapshot(args: argparse.Namespace) -> int:
    """Write the snapshot and print its path; return the exit code."""
    # Imported here: every command's options are registered on each start, `build` included.
    from agenthropic_site.audit.archive import SNAPSHOT_SUFFIXES, ArchiveError, default_snapshot_path, snapshot_mtime, snapshot_site

    site: Path = args.site
    out: Path = args.out if args.out is not None else default_snapshot_path(site)
    try:
        if not out.name.endswith(SNAPSHOT_SUFFIXES):
            raise ConfigError(f"the snapshot name must end in .tar.gz or .tgz: {out}")
        if is_inside(out, site):
            raise ConfigError(f"the snapshot {out} would be inside the site folder {site}; choose another --out")
        if out.is_dir():
            raise ConfigError(f"the snapshot path is a folder: {out}")
        if args.redact:
            from agenthropic_site.render.redact import Redactor as Masks

            masks = Masks()
            snapshot_site(site, out, mtime=snapshot_mtime(os.environ), redact=masks.file, counts=masks.report)
            masked = {kind: count for kind, count in masks.report().items() if count}
            if masked:
                listed = ", ".join(f"{kind} {count}" for kind, count in masked.items())
                print(f"agenthropic: masked {sum(masked.values())} credential(s) in the snapshot: {listed}", file=sys.stderr)
        else:
            snapshot_site(site, out, mtime=snapshot_mtime(os.environ))
    except (ArchiveError, ConfigError) as exc:
        return report(exc)
    print(out)
    return EXIT_OK
