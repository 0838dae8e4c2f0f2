#!/usr/bin/env python3
"""Whole-process cost of the git facts of a render against `git status
--porcelain` (issue 43), one process after the other, never in parallel:

    python3 benches/scripts/git_speed.py --bin <target>/release/bcode-prompt \\
        --repo DIR [--repo DIR]... [--runs 9] [--codex DIR] [--out FILE]

For each repository (a checkout of a real project, or one made by
`gen_git_repo.py`), in three states:

  * `steady`: nothing changes between rounds (the index fresh, our caches
    warm);
  * `commit`: each round first changes one file (the first tracked one)
    and commits it
    (`git commit -qam`), so the index was just rewritten, `HEAD` is new and
    the changed entry is racily clean; then each side runs once;
  * `clone`: each round clones the repository afresh (`git clone -q`, local,
    so every entry was just checked out and the index just written) into a
    scratch folder, then each side runs once in the clone (run last, it
    takes long on a large repository).

Sides, run in one round in turning order: `git` (`git status --porcelain`),
`full` (`bcode-prompt render`), `nogit` (the same with the three git
sections off: their difference is what the git facts cost), and, with
`--codex`, `codex` (`codex debug prompt-input` through the peer's
`prompt-input.sh`); with `--base`, `base_full` and `base_nogit`: the same
two sides of another build (old against new, same rounds). Ours runs with a private `HOME` whose state folder
persists across rounds (so what the render remembers is used, as on a
user's machine); Codex with its script's private home. Each time is the wall
time around the process (monotonic clock) and its CPU time (user + system,
from `wait4`). Medians over rounds; ratios are medians of per-round ratios.
Results go to --out as JSON and a table on stdout.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

GIT_OFF = [
    "system_prompt.sections.git_revision=false",
    "system_prompt.sections.worktree_context=false",
    "system_prompt.sections.dynamic_repository_context=false",
]


def run(cmd, cwd, env=None):
    """(wall seconds, cpu seconds) of one process; its output discarded."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed in {cwd} ({proc.returncode})")
    return wall, usage.ru_utime + usage.ru_stime


def sides(args, home):
    env = dict(os.environ)
    env.update({"HOME": home, "XDG_STATE_HOME": os.path.join(home, "state"),
                "XDG_CONFIG_HOME": os.path.join(home, "config")})
    env.pop("BCODE_STATE_DIR", None)
    now = ["--now", "2026-12-03T12:00:00Z"]
    out = {
        "git": (["git", "status", "--porcelain"], None),
        "full": ([args.bin, "render", *now], env),
        "nogit": ([args.bin, *sum((["--set", s] for s in GIT_OFF), []),
                   "render", *now], env),
    }
    if args.base:
        # The other build, with its own home, so neither reads what the
        # other remembered.
        base_home = os.path.join(home, "base")
        base_env = dict(env)
        base_env.update({"HOME": base_home,
                         "XDG_STATE_HOME": os.path.join(base_home, "state"),
                         "XDG_CONFIG_HOME": os.path.join(base_home, "config")})
        out["base_full"] = ([args.base, "render", *now], base_env)
        out["base_nogit"] = ([args.base, *sum((["--set", s] for s in GIT_OFF), []),
                              "render", *now], base_env)
    if args.codex:
        out["codex"] = ([os.path.join(args.codex, "prompt-input.sh"), "."], None)
    return out


def git(repo, *cmd):
    subprocess.run(["git", "-C", repo, *cmd], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def measure(args, repo, state, scratch):
    home = tempfile.mkdtemp(prefix="home-", dir=scratch)
    table = sides(args, home)
    names = list(table)
    rounds = []
    # One untimed warm-up of each side (page cache, our state folder).
    where = repo
    if state == "clone":
        where = os.path.join(scratch, "clone")
    for rnd in range(args.runs + 1):
        if state == "commit":
            tracked = subprocess.run(["git", "-C", repo, "ls-files"], check=True,
                                     capture_output=True, text=True).stdout
            path = os.path.join(repo, tracked.split("\n", 1)[0])
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"round {rnd}\n")
            git(repo, "-c", "user.name=bench", "-c", "user.email=b@example.invalid",
                "commit", "-qam", f"round {rnd}")
        elif state == "clone":
            shutil.rmtree(where, ignore_errors=True)
            git(scratch, "clone", "-q", repo, where)
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        got = {}
        for name in order:
            cmd, env = table[name]
            got[name] = run(cmd, where, env)
        if rnd > 0:
            rounds.append(got)
    if state == "clone":
        shutil.rmtree(where, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    med = lambda xs: statistics.median(xs)
    result = {"state": state, "repo": repo, "runs": args.runs}
    for name in names:
        result[f"{name}_wall_ms"] = round(1000 * med([r[name][0] for r in rounds]), 1)
        result[f"{name}_cpu_ms"] = round(1000 * med([r[name][1] for r in rounds]), 1)
    for k in (0, 1):
        kind = "wall" if k == 0 else "cpu"
        result[f"gitfacts_over_git_{kind}"] = round(med(
            [(r["full"][k] - r["nogit"][k]) / r["git"][k] for r in rounds]), 3)
        result[f"full_over_git_{kind}"] = round(med(
            [r["full"][k] / r["git"][k] for r in rounds]), 3)
        if "base_full" in names:
            result[f"base_gitfacts_over_git_{kind}"] = round(med(
                [(r["base_full"][k] - r["base_nogit"][k]) / r["git"][k] for r in rounds]), 3)
            result[f"gitfacts_over_base_{kind}"] = round(med(
                [(r["full"][k] - r["nogit"][k]) / (r["base_full"][k] - r["base_nogit"][k])
                 for r in rounds]), 3)
            result[f"full_over_base_{kind}"] = round(med(
                [r["full"][k] / r["base_full"][k] for r in rounds]), 3)
        if "codex" in names:
            result[f"full_over_codex_{kind}"] = round(med(
                [r["full"][k] / r["codex"][k] for r in rounds]), 3)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--repo", action="append", required=True)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--states", default="steady,commit,clone")
    parser.add_argument("--base", help="another build of bcode-prompt, run as two more sides "
                        "(base_full, base_nogit) in the same rounds, with its own home")
    parser.add_argument("--codex", help="a writable copy of the peer, npm-installed")
    parser.add_argument("--out")
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    if args.base:
        args.base = os.path.abspath(args.base)
    results = []
    for repo in args.repo:
        repo = os.path.abspath(repo)
        with tempfile.TemporaryDirectory(prefix="git-speed-") as scratch:
            for state in args.states.split(","):
                result = measure(args, repo, state, scratch)
                print(json.dumps(result, sort_keys=True), flush=True)
                results.append(result)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
