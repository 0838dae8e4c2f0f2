#!/usr/bin/env python3
"""Turn compare_pi.sh results (and criterion's estimates, when present) into
the markdown tables of the Pi comparison (benches/README.md, benches/notes/).

    python3 benches/scripts/summarize.py [OUT] [CRITERION_DIR]

OUT defaults to <target>/bench-results/pi, where compare_pi.sh writes
(<target> = $CARGO_TARGET_DIR, a relative one taken from the workspace
root, else <workspace>/target); CRITERION_DIR to
$CARGO_TARGET_DIR/criterion (or ./target/criterion).
"""
import glob
import json
import os
import re
import statistics
import sys

WORKSPACE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# os.path.join keeps an absolute CARGO_TARGET_DIR as it is.
TARGET = os.path.join(WORKSPACE, os.environ.get("CARGO_TARGET_DIR") or "target")
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TARGET, "bench-results", "pi")
crit = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")


def load(path):
    with open(path) as f:
        return json.loads(f.read().strip().splitlines()[-1])


def oneshots(side, n):
    return [load(p) for p in sorted(glob.glob(f"{out}/{side}-n{n}-oneshot*.json"))]


def rss_mb(side, n):
    vals = []
    for p in glob.glob(f"{out}/{side}-n{n}-oneshot*.time"):
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(p).read())
        if m:
            vals.append(int(m.group(1)) / 1024)
    return statistics.median(vals) if vals else None


def wall_s(side, n):
    vals = []
    for p in glob.glob(f"{out}/{side}-n{n}-oneshot*.time"):
        m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", open(p).read())
        if m:
            vals.append(int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3)))
    return statistics.median(vals) if vals else None


def criterion_ms(*parts):
    path = os.path.join(crit, *parts, "new", "estimates.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6


def med(xs, key):
    vals = [x[key] for x in xs if x.get(key) is not None]
    return statistics.median(vals) if vals else None


def f(x, digits=2):
    return "–" if x is None else f"{x:.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


sizes = sorted({int(m) for m in re.findall(r"-n(\d+)-warm", " ".join(os.listdir(out)))})
rows = []
print("| corpus | Pi cold load ms (median of one-shots) | ours cold build ms (criterion median) | ours cold, first build in a one-shot ms | **cold: Pi / ours** | ours unchanged rebuild ms (criterion) | **ours cold / rebuild** | Pi warm format ms | ours format ms (criterion) | **format: Pi / ours** | Pi one-shot peak RSS MB | ours one-shot peak RSS MB | **RSS: ours / Pi** | Pi one-shot wall s | ours one-shot wall s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in sizes:
    pi1, us1 = oneshots("pi", n), oneshots("ours", n)
    piw, usw = load(f"{out}/pi-n{n}-warm.json"), load(f"{out}/ours-n{n}-warm.json")
    pi_cold = med(pi1, "cold_load_ms")
    us_cold = criterion_ms("discovery", "cold", str(n)) or usw["load_ms_median"]
    us_rebuild = criterion_ms("discovery", "unchanged_rebuild", str(n)) or usw["rebuild_ms_median"]
    pi_fmt = piw["format_ms_median"]
    us_fmt = criterion_ms("catalog", "format", str(n)) or usw["format_ms_median"]
    pr, ur = rss_mb("pi", n), rss_mb("ours", n)
    print(f"| n{n} | {f(pi_cold, 1)} | {f(us_cold)} | {f(med(us1, 'cold_load_ms'))} | **{f(ratio(pi_cold, us_cold), 1)}×** "
          f"| {f(us_rebuild)} | **{f(ratio(us_cold, us_rebuild), 1)}×** | {f(pi_fmt)} | {f(us_fmt, 3)} "
          f"| **{f(ratio(pi_fmt, us_fmt), 1)}×** | {f(pr, 0)} | {f(ur, 1)} | **{f(ratio(ur, pr), 3)}** "
          f"| {f(wall_s('pi', n))} | {f(wall_s('ours', n))} |")

print()
print("In-process medians of the one-shot binary's own loop (`--iterations`), for cross-checking criterion:")
print()
print("| corpus | Pi warm load ms | ours cold build ms | ours rebuild ms | Pi warm format ms | ours format ms |")
print("|---|---:|---:|---:|---:|---:|")
for n in sizes:
    piw, usw = load(f"{out}/pi-n{n}-warm.json"), load(f"{out}/ours-n{n}-warm.json")
    print(f"| n{n} | {f(piw['load_ms_median'])} | {f(usw['load_ms_median'])} | {f(usw['rebuild_ms_median'])} "
          f"| {f(piw['format_ms_median'])} | {f(usw['format_ms_median'])} |")

print()
print("Counts on the same corpus:")
print()
print("| corpus | Pi skills loaded | ours skills (registry) | Pi in catalog | ours in catalog | Pi diagnostics (by type) | ours diagnostics (by severity) | Pi catalog bytes | ours catalog bytes |")
print("|---|---:|---:|---:|---:|---|---|---:|---:|")
for n in sizes:
    p, u = oneshots("pi", n)[0], oneshots("ours", n)[0]
    pd = ", ".join(f"{k} {v}" for k, v in p["diagnostics_by_type"].items())
    ud = ", ".join(f"{k} {v}" for k, v in u["diagnostics_by_severity"].items())
    print(f"| n{n} | {p['skills']} | {u['skills']} | {p['catalog_skills']} | {u['catalog_skills']} "
          f"| {p['diagnostics']} ({pd}) | {u['diagnostics']} ({ud}) | {p['catalog_bytes']} | {u['catalog_bytes']} |")
for n in sizes[-1:]:
    u = oneshots("ours", n)[0]
    print()
    print(f"Our diagnostics by code, n{n}: " + ", ".join(f"`{k}` {v}" for k, v in u["diagnostics_by_code"].items()))
