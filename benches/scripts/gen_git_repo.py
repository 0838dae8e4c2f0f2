#!/usr/bin/env python3
"""A deterministic git repository of many files, for the git sections'
figures (issue 43), stdlib and the `git` command only:

    python3 benches/scripts/gen_git_repo.py --files 100000 --seed 1 --out DIR

writes N small text files under DIR in a tree shaped like a large monorepo
(top-level packages, nested source folders, 1 to 40 files a folder, file
sizes drawn from a log-normal of median about 1.5 KB), commits them in one
commit with a fixed author, committer and date, then `git gc` packs the
objects, as a clone leaves them. Last, `DIR/.git/bench-manifest.json`
(parameters and the shape) is written; its presence means the repository
is complete. The same --files and --seed give the same commit id.

The files are left as a checkout leaves them: the index was written right
after them, so many entries are racily clean until git refreshes the
index (`git status`); `--settle` runs `git status` once to refresh it.
"""

import argparse
import json
import os
import random
import shutil
import subprocess

WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu "
    "xi omicron pi rho sigma tau upsilon phi chi psi omega request response "
    "handler buffer cursor index token stream parser render config module"
).split()


def shape(rng, files):
    """Folder paths and how many files each holds, summing to `files`."""
    folders = []
    total = 0
    packages = max(1, files // 2500)
    while total < files:
        package = f"packages/pkg{len(folders) % packages:03d}"
        depth = rng.randint(1, 4)
        parts = [package] + [
            f"{rng.choice(WORDS)}{rng.randint(0, 99)}" for _ in range(depth)
        ]
        count = min(files - total, rng.randint(1, 40))
        folders.append(("/".join(parts), count))
        total += count
    return folders


def body(rng, path):
    size = int(min(64_000, max(40, rng.lognormvariate(7.3, 0.9))))
    lines = [f"// {path}"]
    length = len(lines[0])
    while length < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines) + "\n"


def git(out, *args, env=None):
    subprocess.run(["git", "-C", out, *args], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    parser.add_argument("--settle", action="store_true",
                        help="run `git status` once so the index is fresh")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    written = 0
    names = set()
    for folder, count in shape(rng, args.files):
        os.makedirs(os.path.join(out, folder), exist_ok=True)
        for i in range(count):
            name = f"{folder}/{rng.choice(WORDS)}_{i}.txt"
            if name in names:
                name = f"{folder}/file_{i}_{written}.txt"
            names.add(name)
            with open(os.path.join(out, name), "w", encoding="utf-8") as f:
                f.write(body(rng, name))
            written += 1
    with open(os.path.join(out, "AGENTS.md"), "w", encoding="utf-8") as f:
        f.write("# Agents\n\nA generated repository for the git benches.\n")
    env = dict(os.environ)
    env.update({
        "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    })
    git(out, "init", "-q", "-b", "main", env=env)
    # No background `gc --auto` racing the explicit one below.
    git(out, "config", "gc.auto", "0", env=env)
    git(out, "add", "-A", env=env)
    git(out, "commit", "-q", "-m", "generated", env=env)
    git(out, "gc", "-q", env=env)
    if args.settle:
        git(out, "status", "--porcelain", env=env)
    head = subprocess.run(["git", "-C", out, "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    manifest = {
        "files": written + 1,
        "folders": len({n.rsplit("/", 1)[0] for n in names}),
        "seed": args.seed,
        "head": head,
    }
    with open(os.path.join(out, ".git", "bench-manifest.json"), "w",
              encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(manifest, sort_keys=True))


if __name__ == "__main__":
    main()
