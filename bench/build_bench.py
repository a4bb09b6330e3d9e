"""Measure whole builds: cold, no-change and one-append, with peak RSS, on generated corpora.

Usage: python bench/build_bench.py [--sessions 100 1000] [--seed 7] [--session-kb 400]
Each build runs as its own `agenthropic build` process; wall time and peak RSS are that process's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from fixtures.generate import DEFAULT_SESSION_KB  # noqa: E402
WORK = REPO / "bench" / ".work"
PYCACHE = WORK / "pycache"
NOW = "2026-06-01T00:00:00Z"
BUILT = (0, 1)  # the exit codes of a build that made its site (1: some sessions failed or are left out of the totals)


def base_env(home: Path) -> dict[str, str]:
    """The environment of every measured process: its own HOME, and compiled bytecode kept.

    Bytecode goes to bench/.work/pycache (PYTHONPYCACHEPREFIX), so a source file without a .pyc
    (an edited checkout, or PYTHONDONTWRITEBYTECODE in the environment) is compiled once, before
    the first measured build (a warm-up, or `compileall`), never inside one; nothing is written next
    to the sources.
    """
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
           "TZ": "UTC", "NO_COLOR": "1", "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def package_copy(folder: Path, pythonpath: str | None) -> str:
    """Copy the working tree's package and theme into folder/src; return the PYTHONPATH that runs agenthropic from there.

    An edit to the checkout during a measurement would otherwise change the code the builds run,
    and the code identity that keys the cache (an append measured as a full build).
    """
    src = folder / "src"
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(REPO / "agenthropic_site", src / "agenthropic_site", ignore=shutil.ignore_patterns("__pycache__"))
    if (REPO / "themes").is_dir():
        shutil.copytree(REPO / "themes", src / "themes")  # the default theme, found next to the package in a checkout
    return os.pathsep.join(filter(None, [str(src), pythonpath]))


def timed_build(corpus: Path, out: Path, cache: Path, env: dict[str, str] | None = None, cwd: Path = REPO) -> tuple[float, float]:
    """Run one build (in `env`, else this process's environment) from `cwd`; return (wall seconds, peak RSS MiB of that process).

    `python -m` puts its working folder first on sys.path: a build meant to run a `package_copy`
    runs from a folder outside the checkout, or the checkout's package shadows the copy.
    """
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(corpus), "--out", str(out),
                                "--cache", str(cache), "--now", NOW, "-q"], cwd=cwd, env=env)
    _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage, not the largest child's so far
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; keep Popen from waiting again
    check_built(process.returncode, f"{corpus} -> {out}")
    return wall, usage.ru_maxrss / 1024


def check_built(code: int, what: str) -> None:
    """Stop the benchmark when a measured build did not make its site (`what` names the build)."""
    if code not in BUILT:
        # A build that stopped measures nothing: run with another interpreter, every build stopped at
        # its first Markdown text and the figures of the failures were printed as a ratio.
        raise SystemExit(f"a measured build failed (exit {code}): {what}")


def measure(count: int, seed: int, session_kb: int) -> dict[str, float]:
    corpus = WORK / f"scale-{count}-{seed}" if session_kb == DEFAULT_SESSION_KB else WORK / f"scale-{count}-{seed}-{session_kb}kb"
    if not corpus.is_dir():
        subprocess.run([sys.executable, "-m", "fixtures.generate", "--sessions", str(count), "--seed", str(seed), "--out", str(corpus),
                        "--session-kb", str(session_kb)], cwd=REPO, check=True, capture_output=True)
    scratch = WORK / f"build-{count}"
    shutil.rmtree(scratch, ignore_errors=True)
    copy = scratch / "corpus"
    shutil.copytree(corpus, copy)
    out, cache = scratch / "site", scratch / "cache"
    env = base_env(scratch / "home")  # the checkout's package, compiled once before the first measured build
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "agenthropic_site")], env=env, check=True)
    cold, cold_rss = timed_build(copy, out, cache, env)
    nochange, nochange_rss = timed_build(copy, out, cache, env)
    nochange2, _ = timed_build(copy, out, cache, env)
    target = sorted(copy.rglob("*.jsonl"))[len(list(copy.rglob("*.jsonl"))) // 2]
    last = target.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    with target.open("ab") as handle:
        handle.write(last + b"\n")  # a copy of a real line: a replayed request, as a live session appends
    append, append_rss = timed_build(copy, out, cache, env)
    size = sum(p.stat().st_size for p in copy.rglob("*") if p.is_file())
    site = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    shutil.rmtree(scratch, ignore_errors=True)
    return {"sessions": count, "corpus_mb": size / 1e6, "site_mb": site / 1e6, "cold_s": cold, "cold_rss_mb": cold_rss,
            "nochange_s": min(nochange, nochange2), "nochange_rss_mb": nochange_rss, "append_s": append, "append_rss_mb": append_rss}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--session-kb", type=int, default=DEFAULT_SESSION_KB, help="approximate size of each generated session")
    args = parser.parse_args()
    print("| sessions | corpus MB | site MB | cold s / peak RSS MB | no-change s / MB | one-append s / MB |")
    print("|---:|---:|---:|---:|---:|---:|")
    for count in args.sessions:
        r = measure(count, args.seed, args.session_kb)
        print(f"| {r['sessions']} | {r['corpus_mb']:.0f} | {r['site_mb']:.0f} | {r['cold_s']:.1f} / {r['cold_rss_mb']:.0f} | "
              f"{r['nochange_s']:.2f} / {r['nochange_rss_mb']:.0f} | {r['append_s']:.2f} / {r['append_rss_mb']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
