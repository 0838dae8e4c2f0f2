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
  registryN  `gen_registry.py --n N --seed 1` (this folder): N flat skill
          folders shaped like a public registry (SKILL.md median 5.8 KB,
          p90 16 KB, largest 100 KB, `metadata` in ~95%, about one other
          file per folder); issue 25 item 7 names registry60000
  owned-registryN  the same with `--owner-repo-share 0.9344`: 93% of the
          folders named `owner--repo--name`, each a warning (issue 41 item
          4 names owned-registry61000)

`--nested` measures instead a repository rendered from its root and from a
folder three levels down (issue 25 item 7): `<CORPORA>/nested-registry10000`,
a git repository with `gen_registry.py --n 10000` as its `.agents/skills`,
one skill in each source kind of the folders between (`a/.bcode/skills`,
`a/b/skills`, `a/b/c/.agents/skills`, `a/b/c/.claude/skills`) and
`AGENTS.md` at the root, all committed and packed. Every round runs the floor of its
`.agents/skills` and `render` with `--repo <root>` and `--repo <root>/a/b/c`,
disk cache warm and off, with every default section and with the three git
sections off (libgit2's status walk of the 28,000 folders is most of a
render here, the same from either folder), order turning. `--strace` also counts, with
`strace -f`, the SKILL.md files each render opens (a warm disk cache should
open none) and those `skills catalog` opens on each corpus.

Each command runs once untimed (page cache warm; `render` writes its disk
cache), then --runs timed rounds, each round running every command of every
corpus once: floor, catalog, render, render without the disk cache,
list --json [, pi], corpora and commands in an order that turns by one each
round. Wall time = a monotonic clock around `/usr/bin/time -v` (its own
~1 ms on every command alike); CPU time = its user + system time (10 ms
steps; steadier than wall time on a loaded machine, and given beside it in
the nested table); memory = its "Maximum resident set size"
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


def gen_registry_script():
    return Path(__file__).resolve().parent / "gen_registry.py"


def gen_registry(n, out, root="primary", extra=()):
    """`gen_registry.py --n n --seed 1` into `out`, then a wait past the
    discovery's two-second racy window, so the warm-up render's disk cache
    is written (a stamp inside the window makes a snapshot untrusted)."""
    subprocess.run([sys.executable, str(gen_registry_script()), "--n", str(n), "--seed", "1",
                    "--out", str(out), "--root", root, "--force", *extra], check=True,
                   stdout=sys.stderr)
    time.sleep(2.1)


def corpus(corpora, name):
    """(roots, description) of one corpus, generated when missing."""
    out = corpora / name
    if name == "empty":
        (out / "primary").mkdir(parents=True, exist_ok=True)
        return [out / "primary"]
    if name.startswith("owned-registry"):
        if not (out / "MANIFEST.json").exists():
            gen_registry(int(name[len("owned-registry"):]), out,
                         extra=["--owner-repo-share", "0.9344"])
        return [out / "primary"]
    if name.startswith("registry"):
        if not (out / "MANIFEST.json").exists():
            gen_registry(int(name[len("registry"):]), out)
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
    rss, cpu = None, 0.0
    for line in time_out.read_text().splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split(":")[1]) / 1024.0
        elif "User time (seconds)" in line or "System time (seconds)" in line:
            cpu += float(line.split(":")[1]) * 1000.0
    return wall, rss, cpu


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
    samples = {name: {k: {"wall": [], "rss": [], "cpu": []} for k in cmds} for name, _, cmds in plan}
    for round_ in range(runs):
        print(f"== round {round_ + 1}/{runs} (load {' '.join(loadavg())})", file=sys.stderr)
        for name, _, cmds in rotated(plan, round_):
            for key in rotated(list(cmds), round_):
                argv, cwd, env = cmds[key]
                wall, rss, cpu = run_once(argv, cwd, env, time_out)
                samples[name][key]["wall"].append(wall)
                samples[name][key]["rss"].append(rss)
                samples[name][key]["cpu"].append(cpu)
    results = []
    for name, files, _ in plan:
        result = {"corpus": name, "skill_files": files, "runs": runs, "commands": {}}
        for key, s in samples[name].items():
            result["commands"][key] = {
                "wall_ms": statistics.median(s["wall"]),
                "rss_mib": statistics.median(s["rss"]),
                "wall_samples": s["wall"],
                "rss_samples": s["rss"],
                "cpu_ms": statistics.median(s["cpu"]),
                "cpu_samples": s["cpu"],
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


# The nested fixture: the skills of the folders between the root and the
# working folder (folder, source kind folder in it, skill name). The same
# layout as `nested_repo` in benches/src/lib.rs, which reuses this fixture.
NESTED_WORK = "a/b/c"
NESTED_SKILLS = [("a", ".bcode/skills", "pkg-a-helper"), ("a/b", "skills", "pkg-b-helper"),
                 ("a/b/c", ".agents/skills", "pkg-c-helper"), ("a/b/c", ".claude/skills", "pkg-c-compat")]


def git(repo, *args):
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                    "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
                    "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args],
                   cwd=repo, check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null"))


def nested_repo(corpora, n=10_000):
    """The repository of the nested measurement (see the module docs),
    built once under `corpora` and reused; (root, skills folder)."""
    base = corpora / f"nested-registry{n}"
    repo = base / "repo"
    if not (base / "COMPLETE").exists():
        if base.exists():
            shutil.rmtree(base)
        gen_registry(n, repo, ".agents/skills")
        (repo / "MANIFEST.json").rename(base / "MANIFEST.json")
        (repo / "AGENTS.md").write_text("# Agent instructions\n\nBuild with `make`, test with `make test`.\n")
        for package, kind, name in NESTED_SKILLS:
            skill = repo / package / kind / name
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: Helps with the package under {package}. "
                "Use when working there.\n---\n\n# Package helper\n\nRun the package's tests first.\n")
        for i, folder in enumerate(["a", "a/b", "a/b/c"]):
            (repo / folder / "src").mkdir(parents=True, exist_ok=True)
            (repo / folder / "src" / "main.rs").write_text(f"//! Package {i}.\nfn main() {{}}\n")
        # Files dated an hour back before the commit, so git sees no racily
        # clean entries and every status run stats without reading.
        past = time.time() - 3600
        for dirpath, _, files in os.walk(repo):
            for f in files:
                os.utime(os.path.join(dirpath, f), (past, past))
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "nested fixture")
        # Packed, as a clone is: libgit2 reads the 20,000 loose trees and
        # blobs of a fresh commit one file each (1.5 s a render, measured).
        git(repo, "repack", "-adq")
        git(repo, "status", "--porcelain")
        time.sleep(2.1)
        (base / "COMPLETE").write_text("")
    return repo, repo / ".agents" / "skills"


def nested_commands(repo, skills, work):
    """Name -> (argv, cwd, env): the floor of the root's skills and the four
    renders (root / three levels down, disk cache warm / off)."""
    bin_dir = target_dir() / "release"
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TZ": "UTC",
           "LANG": "C.UTF-8"}
    render = ["render", "--now", "2026-01-01T00:00:00Z", "--timezone", "UTC"]

    def prompt(folder, *sets):
        argv = [str(bin_dir / "bcode-prompt"), "--repo", str(folder),
                "--set", "skills.include_user_skills=false"]
        for s in sets:
            argv += ["--set", s]
        return (argv + render, None, env)

    nested = repo / NESTED_WORK
    git_off = ["system_prompt.sections.git_revision=false",
               "system_prompt.sections.worktree_context=false",
               "system_prompt.sections.dynamic_repository_context=false"]
    return {
        "floor": ([str(bin_dir / "floor"), str(skills)], None, env),
        "root_warm": prompt(repo),
        "nested_warm": prompt(nested),
        "root_nocache": prompt(repo, "skills.disk_cache=false"),
        "nested_nocache": prompt(nested, "skills.disk_cache=false"),
        "root_warm_gitoff": prompt(repo, *git_off),
        "nested_warm_gitoff": prompt(nested, *git_off),
        "root_nocache_gitoff": prompt(repo, "skills.disk_cache=false", *git_off),
        "nested_nocache_gitoff": prompt(nested, "skills.disk_cache=false", *git_off),
    }


def strace_opens(argv, cwd, env, out):
    """(opens of a SKILL.md, all opens) one run of `argv` attempts, counted
    with `strace -f` over every open call, failed ones too (a call another
    thread interrupts is split over two lines, and only the first names the
    file); None without strace."""
    if not shutil.which("strace"):
        return None
    trace = out / "strace.txt"
    subprocess.run(["strace", "-f", "-qq", "-o", str(trace), "-e", "trace=open,openat,openat2"] + argv,
                   cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    calls = [line for line in trace.read_text(errors="replace").splitlines()
             if "resumed>" not in line]
    return sum('SKILL.md"' in line for line in calls), len(calls)


NESTED_LABELS = {
    "floor": "floor of the root's `.agents/skills` (1 thread)",
    "root_warm": "`render --repo <root>`, disk cache warm",
    "nested_warm": "`render --repo <root>/a/b/c`, disk cache warm",
    "root_nocache": "`render --repo <root>`, `skills.disk_cache=false`",
    "nested_nocache": "`render --repo <root>/a/b/c`, `skills.disk_cache=false`",
    "root_warm_gitoff": "the same, git sections off: `<root>`, warm",
    "nested_warm_gitoff": "git sections off: `<root>/a/b/c`, warm",
    "root_nocache_gitoff": "git sections off: `<root>`, no disk cache",
    "nested_nocache_gitoff": "git sections off: `<root>/a/b/c`, no disk cache",
}


def nested_table(result):
    c = result["commands"]
    floor = c["floor"]["wall_samples"]
    lines = ["| command | wall ms (median) | CPU ms (median) | × floor (paired) | max RSS MiB | "
             "nested / root, wall: paired / of medians; CPU: paired / of medians; memory |",
             "|---|---:|---:|---:|---:|---|"]
    for key, m in c.items():
        vs = ""
        if key.startswith("nested_"):
            root = c["root_" + key[len("nested_"):]]  # its pair from the root
            vs = (f"**{paired(m['wall_samples'], root['wall_samples']):.3f}** / "
                  f"{m['wall_ms'] / root['wall_ms']:.3f}; ")
            if "cpu_samples" in m and min(root["cpu_samples"]) > 0:
                vs += (f"**{paired(m['cpu_samples'], root['cpu_samples']):.3f}** / "
                       f"{m['cpu_ms'] / root['cpu_ms']:.3f}; ")
            vs += f"{m['rss_mib'] / root['rss_mib']:.3f}"
        cpu = f"{m['cpu_ms']:.0f}" if "cpu_ms" in m else "-"
        lines.append(f"| {NESTED_LABELS[key]} | {m['wall_ms']:.1f} | {cpu} | {paired(m['wall_samples'], floor):.2f} | "
                     f"{m['rss_mib']:.1f} | {vs} |")
    if result.get("strace"):
        lines.append("")
        lines.append("Open calls (strace -f), of " + str(result["skill_files"]) + " SKILL.md files in the repository:")
        for key, (skill_md, total) in result["strace"].items():
            lines.append(f"- {key}: {skill_md} of a SKILL.md, {total} in all")
    return "\n".join(lines)


def measure_nested(corpora, runs, out, with_strace):
    repo, skills = nested_repo(corpora)
    cmds = nested_commands(repo, skills, out / "work" / "nested")
    files = sum(1 for _ in repo.rglob("SKILL.md"))
    [result] = measure_plan([("nested-registry10000", files, cmds)], runs, out / "time.txt")
    if with_strace:
        result["strace"] = {key: strace_opens(*cmds[key], out) for key in
                            ("root_warm", "nested_warm", "root_nocache", "nested_nocache")}
    return result


def loadavg():
    path = Path("/proc/loadavg")
    return path.read_text().split()[:3] if path.exists() else []


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--corpora", nargs="*",
                   default=["empty", "flat1", "flat1000", "flat10000", "flat60000", "n10000"])
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--nested", action="store_true",
                   help="measure the render from a folder three levels down instead (see above)")
    p.add_argument("--strace", action="store_true",
                   help="also count the SKILL.md files each command opens")
    p.add_argument("--tables-from", metavar="SUMMARY_JSON",
                   help="print the tables of an earlier run's summary.json, measuring nothing")
    args = p.parse_args()
    if args.tables_from:
        summary = json.loads(Path(args.tables_from).read_text())
        if "nested" in summary:
            print_nested(summary)
            return
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
    if args.nested:
        load = loadavg()
        result = measure_nested(corpora, args.runs, out, args.strace)
        summary = {"load_start": load, "load_end": loadavg(), "nested": result}
        (out / "nested-summary.json").write_text(json.dumps(summary, indent=1))
        print_nested(summary)
        return
    load = loadavg()
    roots = [(name, corpus(corpora, name)) for name in args.corpora]
    results = measure(roots, args.runs, out, pi_dir)
    load_end = loadavg()
    summary = {"load_start": load, "load_end": load_end, "results": results}
    if args.strace:
        summary["strace"] = catalog_opens(roots, out)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print_tables(results, load, load_end, args.runs)
    if args.strace:
        print("\nSKILL.md files `skills catalog` opens (strace -f):")
        for name, counts in summary["strace"].items():
            print(f"- {name}: {counts}")


def catalog_opens(roots, out):
    """Corpus -> (SKILL.md files, all files) `skills catalog` opens."""
    counts = {}
    with tempfile.TemporaryDirectory(prefix="bcode-scale-repos-") as repos:
        for name, paths in roots:
            cmds = commands(paths, out / "work" / name, Path(repos) / name / "repo", None)
            counts[name] = strace_opens(*cmds["catalog"], out)
    return counts


def print_nested(summary):
    result = summary["nested"]
    print(f"load average {' '.join(summary['load_start'])} at start, {' '.join(summary['load_end'])} at end; "
          f"{result['runs']} rounds; {result['skill_files']} SKILL.md files\n")
    print(nested_table(result))


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
