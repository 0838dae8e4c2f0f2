#!/usr/bin/env python3
"""`bcode-prompt mcp` against `bcode-prompt skills list --json` on one tree.

For N skills in a repository's `.bcode/skills/` (copied from a generated
corpus), each round runs, one after the other with the order turning:
  - `skills list --json` in a fresh process, to /dev/null;
  - `mcp` in a fresh process: initialize, then every `skills/list` page, then
    one `resources/read` of a file (timed alone: it must walk no tree).
Both without the disk cache (`--set skills.disk_cache=false`), so both read
the tree; with `--cached`, both with their caches, warmed once first. With
`--idle S` the server is left running S seconds after the read, before its
input closes, so its peak includes what a long-running server holds (the
folder watches its first refreshes set up). Peak RSS comes from
/usr/bin/time. Prints per-round times, the medians and the median of
per-round ratios, as JSON.

usage: mcp_list.py BCODE_PROMPT CORPUS_DIR [--rounds 7] [--out DIR] [--cached] [--idle S]
The repository is made under --out (default: <target>/bench-results/mcp).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ENV_KEEP = ("PATH", "LANG")


def environment(home: Path) -> dict:
    env = {key: os.environ[key] for key in ENV_KEEP if key in os.environ}
    env["HOME"] = str(home)
    env["BCODE_STATE_DIR"] = str(home / "state")
    return env


def timed_rss(argv, env, stdin=None, driver=None):
    """Runs argv under /usr/bin/time -f %M; returns (seconds, peak KB, extra)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["/usr/bin/time", "-f", "%M"] + argv,
        stdin=subprocess.PIPE if driver else subprocess.DEVNULL,
        stdout=subprocess.PIPE if driver else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    extra = driver(proc) if driver else None
    if driver:
        proc.stdout.read()
        err = proc.stderr.read()
        proc.wait()
    else:
        _, err = proc.communicate()
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv} failed: {err.decode()[-500:]}")
    peak = int(err.decode().strip().splitlines()[-1])
    return seconds, peak, extra


def mcp_driver(proc, idle=0.0):
    def send(message):
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def answer(wanted):
        while True:
            line = proc.stdout.readline()
            if not line:
                sys.exit("the server closed its output")
            message = json.loads(line)
            if message.get("id") == wanted:
                return message

    start = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    answer(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    cursor, request, skills, first_file = None, 1, 0, None
    while True:
        params = {"cursor": cursor} if cursor else {}
        send({"jsonrpc": "2.0", "id": request, "method": "skills/list", "params": params})
        page = answer(request)["result"]
        request += 1
        skills += len(page["skills"])
        if first_file is None and page["skills"]:
            first_file = page["skills"][-1]["resources"][-1]["uri"]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    listed = time.perf_counter() - start
    read_start = time.perf_counter()
    send({"jsonrpc": "2.0", "id": request, "method": "resources/read", "params": {"uri": first_file}})
    answer(request)
    read = time.perf_counter() - read_start
    if idle:
        time.sleep(idle)
    proc.stdin.close()
    return {"skills": skills, "list_seconds": listed, "read_seconds": read}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("corpus")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out")
    parser.add_argument("--cached", action="store_true",
                        help="both sides with their caches (discovery's disk cache, the MCP digest cache), warmed once first")
    parser.add_argument("--idle", type=float, default=0.0,
                        help="seconds the server is left running after the read (its peak then includes its folder watches)")
    args = parser.parse_args()
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path(__file__).resolve().parents[2] / "target"))
    # Absolute: the program ignores a relative BCODE_STATE_DIR or HOME.
    out = Path(args.out).resolve() if args.out else target / "bench-results" / "mcp"
    repo = out / "repo"
    if not (repo / ".bcode" / "skills").is_dir():
        shutil.rmtree(repo, ignore_errors=True)
        (repo / ".git").mkdir(parents=True)
        shutil.copytree(args.corpus, repo / ".bcode" / "skills", symlinks=True)
    home = out / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = environment(home)
    base = [args.binary, "--repo", str(repo)]
    if not args.cached:
        base += ["--set", "skills.disk_cache=false"]
    else:
        timed_rss(base + ["skills", "list", "--json"], env)
        timed_rss(base + ["mcp"], env, driver=mcp_driver)
    driver = lambda proc: mcp_driver(proc, args.idle)
    rounds = []
    for n in range(args.rounds):
        order = ["list", "mcp"] if n % 2 == 0 else ["mcp", "list"]
        row = {}
        for which in order:
            if which == "list":
                seconds, peak, _ = timed_rss(base + ["skills", "list", "--json"], env)
                row["list"] = {"seconds": seconds, "peak_kb": peak}
            else:
                seconds, peak, extra = timed_rss(base + ["mcp"], env, driver=driver)
                row["mcp"] = {"seconds": seconds, "peak_kb": peak, **extra}
        rounds.append(row)
        print(json.dumps(row), file=sys.stderr)
    med = lambda xs: statistics.median(xs)
    summary = {
        "skills": rounds[0]["mcp"]["skills"],
        "rounds": len(rounds),
        "list_json_seconds": med([r["list"]["seconds"] for r in rounds]),
        "mcp_all_pages_seconds": med([r["mcp"]["list_seconds"] for r in rounds]),
        "mcp_process_seconds": med([r["mcp"]["seconds"] for r in rounds]),
        "time_ratio": med([r["mcp"]["list_seconds"] / r["list"]["seconds"] for r in rounds]),
        "list_json_peak_kb": med([r["list"]["peak_kb"] for r in rounds]),
        "mcp_peak_kb": med([r["mcp"]["peak_kb"] for r in rounds]),
        "memory_ratio": med([r["mcp"]["peak_kb"] / r["list"]["peak_kb"] for r in rounds]),
        "read_one_file_ms": 1000 * med([r["mcp"]["read_seconds"] for r in rounds]),
        "idle_seconds": args.idle,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
