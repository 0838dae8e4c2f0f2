#!/usr/bin/env bash
# Side-by-side measurement of Pi's skill loader (the peer harness) and ours on
# the same gen_corpus.py corpora, one run after the other, never in parallel.
#
#   CARGO_TARGET_DIR=target-bench benches/scripts/compare_pi.sh
#
# Environment (defaults in brackets; <target> = $CARGO_TARGET_DIR, a relative
# one taken from the workspace root, else <workspace>/target):
#   PI_DIR       a writable copy of the peer folder with node_modules [<target>/bench-peers/pi]
#   CORPORA      where the corpora are (re)used [<target>/bench-corpora]
#   OUT          where raw results go [<target>/bench-results/pi]
#   SIZES        corpus sizes ["100 1000 10000"]
#   ONESHOTS     one-shot processes per side and size [5]
#   ITERATIONS   in-process timed runs per side and size [20]
#   GEN_CORPUS   the peer's corpus generator [<workspace>/../shared/peers/pi/gen_corpus.py]
# Then: python3 benches/scripts/summarize.py "$OUT" > table.md
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
workspace="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in
    /*) ;;
    *) target="$workspace/$target" ;;
esac
# Absolute from here on, so cargo builds where this script looks.
export CARGO_TARGET_DIR="$target"
PI_DIR="${PI_DIR:-$target/bench-peers/pi}"
CORPORA="${CORPORA:-$target/bench-corpora}"
OUT="${OUT:-$target/bench-results/pi}"
SIZES="${SIZES:-100 1000 10000}"
ONESHOTS="${ONESHOTS:-5}"
ITERATIONS="${ITERATIONS:-20}"
# The peer harness lives in the project's shared folder beside the clone.
GEN="${GEN_CORPUS:-$workspace/../shared/peers/pi/gen_corpus.py}"

if [ ! -d "$PI_DIR/node_modules" ]; then
    echo "no $PI_DIR/node_modules: copy the peer folder there and run npm ci" >&2
    exit 1
fi
(cd "$workspace" && cargo build --release -p bcode-benches --bin skills_oneshot) >&2
ours="$target/release/skills_oneshot"
mkdir -p "$OUT" "$CORPORA"
uptime > "$OUT/uptime-start.txt"

for n in $SIZES; do
    dir="$CORPORA/n$n"
    [ -f "$dir/MANIFEST.json" ] || python3 "$GEN" --n "$n" --seed 1 --out "$dir" --force >&2
    roots=("$dir/primary" "$dir/secondary")
    echo "== n$n (load: $(cut -d, -f3- < /proc/loadavg 2>/dev/null || uptime))" >&2
    for i in $(seq 1 "$ONESHOTS"); do
        (cd "$PI_DIR" && /usr/bin/time -v -o "$OUT/pi-n$n-oneshot$i.time" \
            node bench.mjs --iterations 0 --warmup 0 --catalog "$OUT/pi-catalog-n$n.txt" \
            --diagnostics "$OUT/pi-diagnostics-n$n.json" "${roots[@]}") > "$OUT/pi-n$n-oneshot$i.json"
        /usr/bin/time -v -o "$OUT/ours-n$n-oneshot$i.time" \
            "$ours" --catalog "$OUT/ours-catalog-n$n.txt" --diagnostics "$OUT/ours-diagnostics-n$n.tsv" \
            "${roots[@]}" > "$OUT/ours-n$n-oneshot$i.json"
    done
    (cd "$PI_DIR" && node bench.mjs --iterations "$ITERATIONS" --catalog /dev/null "${roots[@]}") \
        > "$OUT/pi-n$n-warm.json"
    "$ours" --iterations "$ITERATIONS" "${roots[@]}" > "$OUT/ours-n$n-warm.json"
done
uptime > "$OUT/uptime-end.txt"
echo "results in $OUT" >&2
