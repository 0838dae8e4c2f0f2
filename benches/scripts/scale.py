#!/usr/bin/env python3
"""Whole processes against the floor (issue 14): one table of time and peak
memory for `bcode-prompt skills catalog`, `render` and `skills list --json`
beside the floor tool (`floor`: one thread, walk, open each SKILL.md, read
8 KiB, no parsing), on generated corpora, with runs interleaved.

    CARGO_TARGET_DIR=target-bench python3 benches/scripts/scale.py            # full table
    CARGO_TARGET_DIR=target-bench python3 benches/scripts/scale.py --runs 3 --corpora empty flat1 flat1000

Corpora (made once, reused; never committed), from the peer's generator
`gen_corpus.py --seed 1` into $CORPORA [<target>/bench-corpora]:
  flatN   `--n N --malformed-fraction 0 --structural-fraction 0`: one flat
          root (`flatN/primary`) of N skill folders; N = 1, 1000, 10000, 60000
  n10000  the default fractions (the 10,000-skill corpus of the Pi
          comparisons), roots `primary` then `secondary`
  empty   an empty root, the fixed cost of a process (for per-skill figures)
  flat1   one skill: the fixed cost of a process that also runs the code
          every skill needs (loading, parsing, formatting), whose pages an
          empty root's process never touches (about 250 KiB); per-skill
          figures are given beyond both

Each command runs once untimed (page cache warm; `render` writes its disk
cache), then --runs timed rounds, each round running every command of every
corpus once: floor, catalog, render, render without the disk cache,
list --json [, pi], corpora and commands in an order that turns by one each
round. Wall time = a monotonic clock around `/usr/bin/time -v` (its own
~1 ms on every command alike); memory = its "Maximum resident set size"
(a launcher of its size, not this Python process, whose size the kernel
would report as the child's peak). Medians of the rounds; time ratios are
paired: the median over the rounds of each round's own ratio.

Environment: CARGO_TARGET_DIR (relative to the repository) [target], the
<target> of these defaults; CORPORA; GEN_CORPUS [<repo>/../shared/peers/pi/gen_corpus.py];
OUT [<target>/bench-results/scale]; PI_DIR, a writable copy of the Pi peer
folder with node_modules, e.g. <target>/bench-peers/pi (the 10,000-skill
memory comparison; skipped without it). The measured commands' `--repo` is
an empty folder in the system's temporary folder (removed at the end),
outside any git work tree, so the git sections find no repository, as
before the defaults moved; under the build folder, inside the workspace,
git discovery would find the workspace's own repository.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def target_dir():
    target = Path(os.environ.get("CARGO_TARGET_DIR") or "target")
    return target if target.is_absolute() else REPO / target


def gen_corpus_script():
    default = REPO.parent / "shared" / "peers" / "pi" / "gen_corpus.py"
    return Path(os.environ.get("GEN_CORPUS", default))


def corpus(corpora, name):
    """(roots, description) of one corpus, generated when missing."""
    out = corpora / name
    if name == "empty":
        (out / "primary").mkdir(parents=True, exist_ok=True)
        return [out / "primary"]
    if not (out / "MANIFEST.json").exists():
        args = [sys.executable, str(gen_corpus_script()), "--seed", "1", "--out", str(out), "--force"]
        if name.startswith("flat"):
            args += ["--n", name[4:], "--malformed-fraction", "0", "--structural-fraction", "0"]
        else:
            args += ["--n", name[1:]]
        subprocess.run(args, check=True, stdout=sys.stderr)
    if name.startswith("flat"):
        return [out / "primary"]
    return [out / "primary", out / "secondary"]


def commands(roots, work, repo, pi_dir):
    """Name -> (argv, cwd, env) of every measured command for `roots`, with
    `repo` (an empty folder outside any git work tree) as `--repo`."""
    bin_dir = target_dir() / "release"
    prompt = str(bin_dir / "bcode-prompt")
    home = work / "home"
    for d in (repo, home):
        d.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
    }
    paths = "[" + ",".join(json.dumps(str(r)) for r in roots) + "]"
    base = [prompt, "--repo", str(repo),
            "--set", f"skills.sources.paths={paths}",
            "--set", "skills.include_user_skills=false"]
    render = ["render", "--now", "2026-01-01T00:00:00Z", "--timezone", "UTC"]
    cmds = {
        "floor": ([str(bin_dir / "floor")] + [str(r) for r in roots], None, env),
        "catalog": (base + ["skills", "catalog"], None, env),
        "render": (base + render, None, env),
        "render_nocache": (base + ["--set", "skills.disk_cache=false"] + render, None, env),
        "list_json": (base + ["skills", "list", "--json"], None, env),
    }
    if pi_dir:
        node = shutil.which("node") or "node"
        cmds["pi"] = ([node, "bench.mjs", "--iterations", "0", "--warmup", "0",
                       "--catalog", "/dev/null"] + [str(r) for r in roots],
                      str(pi_dir), dict(env, PATH=os.environ.get("PATH", "")))
    return cmds


def run_once(argv, cwd, env, time_out):
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-v", "-o", str(time_out)] + argv, cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.monotonic() - start) * 1000.0
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}")
    rss = None
    for line in time_out.read_text().splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split(":")[1]) / 1024.0
    return wall, rss


def skill_files(cmds):
    """How many SKILL.md files the floor finds (its JSON line says)."""
    floor_argv = cmds["floor"][0]
    return json.loads(subprocess.run(floor_argv, check=True, capture_output=True).stdout)["files"]


def rotated(items, by):
    return items[by % len(items):] + items[:by % len(items)]


def measure(corpora, runs, out, pi_dir):
    """Every command of every corpus once per round, corpora and commands in
    an order that turns by one each round, so a VM that drifts between
    minutes slows every size and command of a round alike, and no command
    always runs after the same one. Samples keep their round, for paired
    ratios."""
    time_out = out / "time.txt"
    with tempfile.TemporaryDirectory(prefix="bcode-scale-repos-") as repos:
        plan = []
        for name, roots in corpora:
            cmds = commands(roots, out / "work" / name, Path(repos) / name / "repo",
                            pi_dir if name == "n10000" else None)
            plan.append((name, skill_files(cmds), cmds))
        return measure_plan(plan, runs, time_out)


def measure_plan(plan, runs, time_out):
    """The warm-up and the timed rounds of `plan` (see `measure`)."""
    for name, _, cmds in plan:
        print(f"== warm-up {name} (load {' '.join(loadavg())})", file=sys.stderr)
        for argv, cwd, env in cmds.values():
            run_once(argv, cwd, env, time_out)  # page cache warm; writes render's disk cache
    samples = {name: {k: {"wall": [], "rss": []} for k in cmds} for name, _, cmds in plan}
    for round_ in range(runs):
        print(f"== round {round_ + 1}/{runs} (load {' '.join(loadavg())})", file=sys.stderr)
        for name, _, cmds in rotated(plan, round_):
            for key in rotated(list(cmds), round_):
                argv, cwd, env = cmds[key]
                wall, rss = run_once(argv, cwd, env, time_out)
                samples[name][key]["wall"].append(wall)
                samples[name][key]["rss"].append(rss)
    results = []
    for name, files, _ in plan:
        result = {"corpus": name, "skill_files": files, "runs": runs, "commands": {}}
        for key, s in samples[name].items():
            result["commands"][key] = {
                "wall_ms": statistics.median(s["wall"]),
                "rss_mib": statistics.median(s["rss"]),
                "wall_samples": s["wall"],
                "rss_samples": s["rss"],
            }
        results.append(result)
    return results


def paired(a, b):
    """Median over the rounds of a / b, the samples of one round paired."""
    return statistics.median(x / y for x, y in zip(a, b))


LABELS = {
    "floor": "floor (1 thread)",
    "catalog": "`skills catalog`",
    "render": "`render` (disk cache warm)",
    "render_nocache": "`render`, `skills.disk_cache=false`",
    "list_json": "`skills list --json`",
    "pi": "Pi `bench.mjs` one-shot",
}


def table(results):
    lines = ["| corpus | SKILL.md files | command | wall ms (median) | × floor (paired) | max RSS MiB | × catalog (time paired / memory) |",
             "|---|---:|---|---:|---:|---:|---|"]
    for r in results:
        c = r["commands"]
        floor = c["floor"]["wall_samples"]
        cat = c["catalog"]
        for key, m in c.items():
            vs_cat = ""
            if key == "list_json":
                vs_cat = f"{paired(m['wall_samples'], cat['wall_samples']):.2f} / {m['rss_mib'] / cat['rss_mib']:.2f}"
            if key == "pi":
                vs_cat = f"ours / Pi memory: catalog {cat['rss_mib'] / m['rss_mib']:.3f}, render {c['render_nocache']['rss_mib'] / m['rss_mib']:.3f}"
            lines.append(f"| {r['corpus']} | {r['skill_files']} | {LABELS[key]} | {m['wall_ms']:.1f} | "
                         f"{paired(m['wall_samples'], floor):.2f} | {m['rss_mib']:.1f} | {vs_cat} |")
    return "\n".join(lines)


def per_skill(results, base_name):
    """Time and memory per skill beyond the process of `base_name` (the
    empty root, or the one-skill root), flat corpora larger than it only:
    (figure - base's figure) / (skills - base's skills). Time is paired by
    round: each round's figure uses that round's base run, so drift between
    rounds cancels; the cells are medians over the rounds. Two time spreads
    (the highest per-skill figure over the lowest): of those medians, and
    the median of each round's own spread (biased upwards: the highest of
    noisy values over the lowest is above 1 even when nothing differs)."""
    by = {r["corpus"]: r for r in results}
    base = by.get(base_name)
    if not base:
        return ""
    # The sizes compared: flat roots of 1,000 skills and more.
    flats = [r for r in results if r["corpus"].startswith("flat") and r["skill_files"] >= 1000]
    if len(flats) < 2:
        return ""
    lines = ["| command | " + " | ".join(f"{r['corpus']} µs / KiB per skill" for r in flats) +
             " | time spread: of medians (per round) | memory spread |",
             "|---|" + "---:|" * len(flats) + "---|---|"]
    for key in ("floor", "catalog", "render", "render_nocache", "list_json"):
        fixed = base["commands"][key]
        cells, times, mems, by_round = [], [], [], []
        for r in flats:
            n = r["skill_files"] - base["skill_files"]
            c = r["commands"][key]
            rounds = [(w - e) * 1000.0 / n for w, e in zip(c["wall_samples"], fixed["wall_samples"])]
            by_round.append(rounds)
            t = statistics.median(rounds)
            m = (c["rss_mib"] - fixed["rss_mib"]) * 1024.0 / n
            times.append(t)
            mems.append(m)
            cells.append(f"{t:.1f} / {m:.2f}")
        round_spreads = [max(v) / min(v) for v in zip(*by_round) if min(v) > 0]
        spread_t = f"{max(times) / min(times):.2f}" if min(times) > 0 else "-"
        if round_spreads:
            spread_t += f" ({statistics.median(round_spreads):.2f})"
        spread_m = f"{max(mems) / min(mems):.2f}" if min(mems) > 0 else "-"
        lines.append(f"| {LABELS[key]} | " + " | ".join(cells) + f" | {spread_t} | {spread_m} |")
    return "\n".join(lines)


def loadavg():
    path = Path("/proc/loadavg")
    return path.read_text().split()[:3] if path.exists() else []


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--corpora", nargs="*",
                   default=["empty", "flat1", "flat1000", "flat10000", "flat60000", "n10000"])
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--tables-from", metavar="SUMMARY_JSON",
                   help="print the tables of an earlier run's summary.json, measuring nothing")
    args = p.parse_args()
    if args.tables_from:
        summary = json.loads(Path(args.tables_from).read_text())
        print_tables(summary["results"], summary["load_start"], summary["load_end"], summary["results"][0]["runs"])
        return
    out = Path(os.environ.get("OUT", target_dir() / "bench-results" / "scale"))
    out.mkdir(parents=True, exist_ok=True)
    corpora = Path(os.environ.get("CORPORA", target_dir() / "bench-corpora"))
    pi_dir = os.environ.get("PI_DIR")
    if pi_dir and not (Path(pi_dir) / "node_modules").is_dir():
        sys.exit(f"PI_DIR={pi_dir} has no node_modules: copy the peer folder there and run npm ci")
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "bcode-prompt-cli",
                        "-p", "bcode-benches", "--bin", "bcode-prompt", "--bin", "floor"],
                       cwd=REPO, check=True, env=dict(os.environ, CARGO_TARGET_DIR=str(target_dir())))
    load = loadavg()
    results = measure([(name, corpus(corpora, name)) for name in args.corpora], args.runs, out, pi_dir)
    load_end = loadavg()
    summary = {"load_start": load, "load_end": load_end, "results": results}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print_tables(results, load, load_end, args.runs)


def print_tables(results, load, load_end, runs):
    print(f"load average {' '.join(load)} at start, {' '.join(load_end)} at end; {runs} rounds\n")
    print(table(results))
    for base, words in (("empty", "an empty root's process"),
                        ("flat1", "a one-skill root's process (which runs the code every skill does)")):
        spread = per_skill(results, base)
        if spread:
            print(f"\nPer skill, beyond {words} (wall and max RSS):\n")
            print(spread)


if __name__ == "__main__":
    main()
