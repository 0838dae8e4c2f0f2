#!/usr/bin/env python3
"""The MCP consumer's listing against `skills list --json` of the same tree.

Issue 40's consumer figure: "the consumer's listing of a 10,000-skill server
is at most 2x `skills list --json` of the same tree served locally". Two
repositories under --out:
  - `served/`, whose `.bcode/skills/` is a copy of CORPUS_DIR;
  - `consumer/`, with no skills of its own, whose user config names one MCP
    server: `BCODE_PROMPT --repo served/ mcp` (stdio).
Each round runs, one after the other with the order turning:
  - local:    `BCODE_PROMPT --repo served/ skills list --json`;
  - consumed: `BCODE_PROMPT --repo consumer/ skills list --json`, which
    starts the server, discovers it, lists every page and checks each entry.
Both without the disk caches (`skills.disk_cache=false` for the listing
process and for the server it starts); with `--cached`, both with their
caches, warmed once first. Wall seconds and peak RSS (/usr/bin/time; the
consumer's own, not its server's) per round, the medians and the median of
per-round ratios, as JSON. The skill counts of both listings are
reported (the server leaves out skills SEP-2640 cannot carry).

usage: mcp_consume.py BCODE_PROMPT CORPUS_DIR [--rounds 7] [--out DIR] [--cached]
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


def run(argv, env):
    """Runs argv under /usr/bin/time -f %M; returns (seconds, peak KB, stdout)."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv} failed: {proc.stderr.decode()[-800:]}")
    peak = int(proc.stderr.decode().strip().splitlines()[-1])
    return seconds, peak, proc.stdout


def count(listing: bytes) -> int:
    value = json.loads(listing)
    skills = value["skills"] if isinstance(value, dict) else value
    return len(skills)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("corpus")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out")
    parser.add_argument("--cached", action="store_true",
                        help="both sides with their disk caches, warmed once first")
    args = parser.parse_args()
    binary = str(Path(args.binary).resolve())
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path(__file__).resolve().parents[2] / "target"))
    # Absolute: the program ignores a relative BCODE_STATE_DIR or HOME.
    out = Path(args.out).resolve() if args.out else target / "bench-results" / "mcp-consume"
    served = out / "served"
    if not (served / ".bcode" / "skills").is_dir():
        shutil.rmtree(served, ignore_errors=True)
        (served / ".git").mkdir(parents=True)
        shutil.copytree(args.corpus, served / ".bcode" / "skills", symlinks=True)
    consumer = out / "consumer"
    (consumer / ".git").mkdir(parents=True, exist_ok=True)
    cache = "true" if args.cached else "false"
    local_home, consumer_home = out / "home-local", out / "home-consumer"
    for home in (local_home, consumer_home):
        (home / ".config" / "bcode").mkdir(parents=True, exist_ok=True)
    (local_home / ".config" / "bcode" / "bcode.toml").write_text(
        f"[skills]\ndisk_cache = {cache}\ninclude_user_skills = false\n")
    server_args = json.dumps(["--repo", str(served), "--set", f"skills.disk_cache={cache}", "mcp"])
    (consumer_home / ".config" / "bcode" / "bcode.toml").write_text(
        f"[skills]\ndisk_cache = {cache}\ninclude_user_skills = false\n\n"
        "[[skills.mcp_servers]]\n"
        'name = "served"\n'
        f"command = {json.dumps(binary)}\n"
        f"args = {server_args}\n"
        "timeout_ms = 120000\n")
    local = [binary, "--repo", str(served), "skills", "list", "--json"]
    consumed = [binary, "--repo", str(consumer), "skills", "list", "--json"]
    local_env, consumer_env = environment(local_home), environment(consumer_home)
    # The server started by the consumer writes its own state beside it.
    _, _, a = run(local, local_env)
    _, _, b = run(consumed, consumer_env)
    # The server leaves out what SEP-2640 cannot carry (it names each such
    # skill on its stderr), so the consumed listing may be a little shorter;
    # both counts are reported.
    if count(b) == 0 or count(b) > count(a):
        sys.exit(f"the listings differ: {count(a)} skills local, {count(b)} consumed")
    rounds = []
    for n in range(args.rounds):
        order = ["local", "consumed"] if n % 2 == 0 else ["consumed", "local"]
        row = {}
        for which in order:
            argv, env = (local, local_env) if which == "local" else (consumed, consumer_env)
            seconds, peak, _ = run(argv, env)
            row[which] = {"seconds": seconds, "peak_kb": peak}
        rounds.append(row)
        print(json.dumps(row), file=sys.stderr)
    med = statistics.median
    summary = {
        "skills_local": count(a),
        "skills_consumed": count(b),
        "rounds": len(rounds),
        "cached": args.cached,
        "local_seconds": med([r["local"]["seconds"] for r in rounds]),
        "consumed_seconds": med([r["consumed"]["seconds"] for r in rounds]),
        "time_ratio": med([r["consumed"]["seconds"] / r["local"]["seconds"] for r in rounds]),
        "local_peak_kb": med([r["local"]["peak_kb"] for r in rounds]),
        "consumed_peak_kb": med([r["consumed"]["peak_kb"] for r in rounds]),
        "memory_ratio": med([r["consumed"]["peak_kb"] / r["local"]["peak_kb"] for r in rounds]),
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
