#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seeds from the repository's test corpora,
# for `cargo fuzz run <target>`. Run from anywhere: paths are relative to
# the repository root. The same sources are listed in
# fuzz/checks/src/seeds.rs (the replay test reads them in place); keep the
# two in step.
#
#   fuzz/seeds/<target>/   the committed handful, copied as they are
#   markdown under tests/fixtures, tests/cases and ../shared/corpus (beside
#   the clone, when present): whole files for `document`, their YAML front
#   matter for `front_matter_yaml` and `yaml_differential`
#   TOML under tests/cases and config-schema: every file for
#   `front_matter_toml`, bcode.toml files and the example for `config`
#   generated: TOML front matter of 25,000 short keys for
#   `front_matter_toml` (fuzz/checks/src/seeds.rs `toml_flood`)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
corpus=fuzz/corpus
targets=(front_matter_yaml front_matter_toml document config yaml_differential)

for target in "${targets[@]}"; do
    mkdir -p "$corpus/$target"
    cp fuzz/seeds/"$target"/* "$corpus/$target/"
done

# A flat, readable file name for a source path.
name() { printf '%s' "$1" | sed 's|^\.\./||; s|[/ ]|_|g'; }

markdown() {
    for dir in tests/fixtures tests/cases ../shared/corpus; do
        [ -d "$dir" ] && find "$dir" -type f -name '*.md'
    done | sort
}

toml() {
    find tests/cases config-schema -type f -name '*.toml' | sort
}

markdown | while IFS= read -r file; do
    cp "$file" "$corpus/document/$(name "$file")"
    # The text between a first line `---` and the next line `---`.
    if [ "$(head -n 1 "$file")" = "---" ]; then
        front="$(awk 'NR == 1 { next } /^---$/ { exit } { print }' "$file")"
        printf '%s\n' "$front" > "$corpus/front_matter_yaml/$(name "$file").yaml"
        cp "$corpus/front_matter_yaml/$(name "$file").yaml" "$corpus/yaml_differential/"
    fi
done

toml | while IFS= read -r file; do
    cp "$file" "$corpus/front_matter_toml/$(name "$file")"
    case "$(basename "$file")" in
        bcode.toml | bcode.example.toml) cp "$file" "$corpus/config/$(name "$file")" ;;
    esac
done

# Issue 24's flood, over the front-matter budget: too large to commit.
awk 'BEGIN { print "description = \"d\""; for (i = 0; i < 25000; i++) printf "k%x=1\n", i }' \
    > "$corpus/front_matter_toml/generated-25000-short-keys.toml"

for target in "${targets[@]}"; do
    echo "$corpus/$target: $(find "$corpus/$target" -type f | wc -l) seeds"
done
