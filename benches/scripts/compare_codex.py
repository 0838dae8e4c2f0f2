#!/usr/bin/env python3
"""Whole-process comparison of `bcode-prompt render` and Codex's
`codex debug prompt-input` (the peer in <workspace>/../shared/peers/codex) on the same
repositories, one process after the other, never in parallel.

    CARGO_TARGET_DIR=target-render-bench \\
        python3 benches/scripts/compare_codex.py [--runs 5] [--out DIR]

Repositories (built once under $BCODE_BENCH_CORPORA or <target>/bench-corpora,
in `codex-cmp/`; <target> = $CARGO_TARGET_DIR, a relative one taken from the
workspace root, else <workspace>/target): `small` = an empty git repository
(no commit), AGENTS.md and one skill; `n10000` = the same but with the 10,000-skill corpus
(`gen_corpus.py --n 10000 --seed 1`, `primary` root). The skills folder is
symlinked as `.agents/skills` for Codex; ours gets the same folder as a
configured root (`--set skills.sources.paths=[...]`), since a repository's
own skill folder may not link out of the repository (confinement, issue 12).

At n10000 ours runs twice: with defaults (every skill listed) and with
`--set skills.prompt.max_bytes=21717` (`ours_capped`, a catalog the size of
Codex's skills block), so the comparison can also be made at equal output.

Each run is `/usr/bin/time -v -o FILE CMD` in the repository: wall time is
measured around it with a monotonic clock (it includes the same ~1 ms of
`time` for both sides), peak memory is time's `Maximum resident set size`.
Runs alternate Codex, ours, Codex, ours, ... (with more sides, the order
turns by one each round) after one untimed warm-up of
each (page cache warm, Codex's CODEX_HOME already populated with its bundled
system skills, which makes Codex's figures the favourable ones).

`--also LABEL=BINARY` (repeatable) adds another build of ours to the same
alternation, run exactly as ours is (e.g. a binary built from an older
commit in a `git worktree`), so a change can be judged against the code it
replaced on the same machine in the same minutes; its ratio to Codex is
reported as `time_LABEL_over_codex`, and ours against it round by round as
`paired_ours_over_LABEL` (the median of the per-round ratios).

Results go to --out [<target>/bench-results/codex]. Needs a writable copy
of the peer with node_modules ($CODEX_DIR, default <target>/bench-peers/codex;
`cp -r ../shared/peers/codex <target>/bench-peers/codex && cd
<target>/bench-peers/codex && npm install`). Without it, only our figures are
printed.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
# The build folder, relative to the repository as cargo takes it from there.
TARGET = os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR") or "target")
CORPORA = os.environ.get("BCODE_BENCH_CORPORA", os.path.join(TARGET, "bench-corpora"))
# The peer harness lives in the project's shared folder beside the clone.
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
GEN = os.environ.get("GEN_CORPUS", os.path.join(SHARED, "peers", "pi", "gen_corpus.py"))
PROMPT = "fix the failing test"
# Bytes of Codex's <skills_instructions> block at 10,000 skills (measured).
CODEX_BUDGET = 21717

AGENTS_MD = """# Agent instructions

This repository is a benchmark fixture. Build with `cargo build`, test with
`cargo test --workspace`, and keep every change small and reviewed.

## Conventions

- Every module starts with a `//!` line saying what it is for.
- The core takes data, not paths; I/O lives at the edge.
- Parsing never fails; it reports typed diagnostics.
"""

ONE_SKILL = """---
name: fix-tests
description: Finds and fixes failing tests. Use when a test run reports failures.
---

# Fix tests

Run the failing test alone, read the assertion, fix the code, run it again.
"""


def sh(args, cwd=None, env=None):
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def git_init(repo):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    sh(["git", "-c", "init.defaultBranch=main", "init", "-q", repo], env=env)


def prepare(base):
    """Both repositories; returns {name: (repo, skills folder)}."""
    repos = {}
    small_skills = os.path.join(base, "small-skills")
    os.makedirs(os.path.join(small_skills, "fix-tests"), exist_ok=True)
    with open(os.path.join(small_skills, "fix-tests", "SKILL.md"), "w") as f:
        f.write(ONE_SKILL)
    corpus = os.path.join(CORPORA, "n10000")
    if not os.path.exists(os.path.join(corpus, "MANIFEST.json")):
        sh(["python3", GEN, "--n", "10000", "--seed", "1", "--out", corpus, "--force"])
    for name, skills in (("small", small_skills), ("n10000", os.path.join(corpus, "primary"))):
        repo = os.path.join(base, name)
        if not os.path.isdir(os.path.join(repo, ".git")):
            shutil.rmtree(repo, ignore_errors=True)
            os.makedirs(repo)
            git_init(repo)
            with open(os.path.join(repo, "AGENTS.md"), "w") as f:
                f.write(AGENTS_MD)
            os.makedirs(os.path.join(repo, ".agents"), exist_ok=True)
            os.symlink(skills, os.path.join(repo, ".agents/skills"))
        # Fixtures made before confinement also linked `.bcode/skills`.
        if os.path.islink(os.path.join(repo, ".bcode/skills")):
            os.remove(os.path.join(repo, ".bcode/skills"))
        repos[name] = (repo, skills)
    return repos


def timed(cmd, cwd, env, out_path, time_path):
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", time_path] + cmd,
                              cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({proc.returncode}); see {time_path}")
    text = open(time_path).read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    return wall * 1000, rss / 1024


def codex_rendered(path):
    """Skills Codex listed and bytes of its whole input."""
    data = json.load(open(path))
    text = ""
    for item in data:
        for c in item.get("content", []) or []:
            text += c.get("text", "") or ""
    listed = re.findall(r"^- [^\n]*\(file: r(\d+)/", text, re.M)
    block = re.search(r"<skills_instructions>.*?</skills_instructions>", text, re.S)
    return {
        "skills_listed": len(listed),
        "skills_listed_from_repo": sum(1 for r in listed if r != "0"),
        "skills_block_bytes": len(block.group(0)) if block else 0,
        "input_json_bytes": os.path.getsize(path),
    }


def ours_rendered(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    start, end = text.find("<available_skills"), text.find("</available_skills>")
    return {
        "skills_listed": text.count("<skill>"),
        "catalog_bytes": (end - start) if start >= 0 and end > start else None,
        "output_bytes": len(text.encode()),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(TARGET, "bench-results", "codex"))
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=BINARY",
                        help="another build of ours to alternate with the others")
    args = parser.parse_args()
    # Absolute, since every side runs with the fixture as its working folder.
    also = {label: os.path.abspath(binary) for label, binary in
            (item.split("=", 1) for item in args.also)}
    subprocess.run(["cargo", "build", "--release", "-p", "bcode-prompt-cli"], cwd=ROOT, check=True)
    ours = os.path.join(TARGET, "release", "bcode-prompt")
    codex_dir = os.environ.get("CODEX_DIR", os.path.join(TARGET, "bench-peers", "codex"))
    codex = sorted(glob.glob(f"{codex_dir}/node_modules/@openai/codex-linux-*/vendor/*/bin/codex"))
    if not codex:
        print(f"no Codex binary under {codex_dir}/node_modules: our figures only", file=sys.stderr)
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(CORPORA, "codex-cmp")
    os.makedirs(base, exist_ok=True)
    repos = prepare(base)
    results = {"uptime_start": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}
    for name, (repo, skills) in repos.items():
        roots = f"skills.sources.paths={json.dumps([skills])}"
        # Each build of ours has its own HOME, so its disk cache (in the
        # state folder under HOME) is never one another build wrote.
        homes = {side: os.path.join(base, f"home-{side}-{name}") for side in ("codex", "ours", *also)}
        for home in homes.values():
            shutil.rmtree(home, ignore_errors=True)
            os.makedirs(os.path.join(home, ".codex"))
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("BCODE_", "CODEX_"))}
        sides = {
            "ours": ([ours, "--repo", repo, "--set", roots, "render", "--prompt", PROMPT],
                     dict(base_env, HOME=homes["ours"])),
        }
        for label, binary in also.items():
            sides[label] = ([binary] + sides["ours"][0][1:], dict(base_env, HOME=homes[label]))
        if name != "small":
            # Equal work in the prompt: our catalog capped at the size of
            # Codex's skills block (21.6 KB at 10,000 skills), so both sides
            # discover everything but list a few hundred.
            sides["ours_capped"] = ([ours, "--repo", repo, "--set", roots,
                                     "--set", f"skills.prompt.max_bytes={CODEX_BUDGET}",
                                     "render", "--prompt", PROMPT], dict(base_env, HOME=homes["ours"]))
        if codex:
            sides["codex"] = ([codex[0], "debug", "prompt-input", PROMPT],
                              dict(base_env, HOME=homes["codex"], CODEX_HOME=os.path.join(homes["codex"], ".codex")))
        order = [s for s in ("codex", "ours", *also, "ours_capped") if s in sides]
        samples = {s: [] for s in order}
        for side in order:  # warm-up, not timed
            cmd, env = sides[side]
            timed(cmd, repo, env, f"{args.out}/{side}-{name}-warmup.out", f"{args.out}/{side}-{name}-warmup.time")
        for i in range(args.runs):
            # The order turns by one each round, so every side follows every
            # other equally often: the process right after Codex's (95 MB of
            # Node exiting, its files written back) is measurably slower,
            # which put a fixed order's second side at a disadvantage.
            turn = i % len(order)
            for side in order[turn:] + order[:turn]:
                cmd, env = sides[side]
                samples[side].append(timed(cmd, repo, env, f"{args.out}/{side}-{name}.out",
                                           f"{args.out}/{side}-{name}-{i}.time"))
        entry = {"load_after": open("/proc/loadavg").read().split()[:3]}
        for side in order:
            walls = [w for w, _ in samples[side]]
            rsss = [r for _, r in samples[side]]
            entry[side] = {
                "wall_ms_median": statistics.median(walls),
                "wall_ms_all": [round(w, 1) for w in walls],
                "peak_rss_mib_median": statistics.median(rsss),
                "rendered": (codex_rendered if side == "codex" else ours_rendered)(f"{args.out}/{side}-{name}.out"),
            }
        # Another build against ours round by round: the median of the
        # per-round ratios, steadier than a ratio of medians when the machine
        # drifts during the run.
        for label in also:
            pairs = [a / b for (a, _), (b, _) in zip(samples["ours"], samples[label])]
            entry[f"paired_ours_over_{label}"] = statistics.median(pairs)
        for ours_side in ("ours", *also, "ours_capped"):
            if "codex" in entry and ours_side in entry:
                entry[f"time_{ours_side}_over_codex"] = entry[ours_side]["wall_ms_median"] / entry["codex"]["wall_ms_median"]
                entry[f"rss_{ours_side}_over_codex"] = entry[ours_side]["peak_rss_mib_median"] / entry["codex"]["peak_rss_mib_median"]
        results[name] = entry
        print(name, json.dumps(entry, indent=1), file=sys.stderr)
    results["uptime_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
