#!/usr/bin/env python3
"""Writes one evaluation set (the output of convert.py) as a folder of
skills that discovery reads like any other root, stdlib only:

    python3 benches/eval/materialise.py SET_DIR --out OUT [--force]

SET_DIR holds `skills.jsonl` and `queries*.jsonl` (each may be gzipped,
`*.jsonl.gz`). OUT receives:

  * `skills/<name>/SKILL.md` for every skill: a real SKILL.md byte for byte
    with the other files of its folder, or, for a tool without one, front
    matter `name` and `description` (a JSON-quoted YAML string, so any
    character survives) followed by the tool's body text;
  * `queries*.jsonl`, uncompressed, for `route_eval --queries`.

An existing OUT/skills is replaced only with --force. The same input gives
the same bytes.
"""

import argparse
import gzip
import json
import os
import posixpath
import re
import shutil
import sys

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def find(set_dir, stem):
    for candidate in (stem, stem + ".gz"):
        path = os.path.join(set_dir, candidate)
        if os.path.exists(path):
            return path
    return None


def safe_relative(rel):
    """A supporting file's path stays inside its skill's folder."""
    norm = posixpath.normpath(rel)
    if norm.startswith(("/", "../")) or norm == ".." or "\\" in rel:
        sys.exit(f"refusing the file path {rel!r}")
    return norm


def skill_md(record):
    if "skill_md" in record:
        return record["skill_md"]
    description = json.dumps(record["description"], ensure_ascii=False)
    text = f"---\nname: {record['name']}\ndescription: {description}\n---\n"
    if record["body"]:
        text += "\n" + record["body"].rstrip("\n") + "\n"
    return text


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set_dir")
    parser.add_argument("--out", required=True)
    parser.add_argument("--force", action="store_true", help="replace an existing OUT/skills")
    args = parser.parse_args()

    skills_path = find(args.set_dir, "skills.jsonl")
    if skills_path is None:
        sys.exit(f"no skills.jsonl(.gz) in {args.set_dir}")
    skills_root = os.path.join(args.out, "skills")
    if os.path.exists(skills_root):
        if not args.force:
            sys.exit(f"{skills_root} exists; pass --force to replace it")
        shutil.rmtree(skills_root)

    seen = set()
    with open_text(skills_path) as f:
        for line in f:
            record = json.loads(line)
            name = record["name"]
            if not NAME.match(name) or name in seen:
                sys.exit(f"bad or repeated skill name {name!r}")
            seen.add(name)
            folder = os.path.join(skills_root, name)
            write(os.path.join(folder, "SKILL.md"), skill_md(record))
            for rel, text in sorted(record.get("files", {}).items()):
                write(os.path.join(folder, *safe_relative(rel).split("/")), text)

    queries = sorted(
        f for f in os.listdir(args.set_dir) if re.match(r"^queries[A-Za-z0-9_-]*\.jsonl(\.gz)?$", f)
    )
    for filename in queries:
        with open_text(os.path.join(args.set_dir, filename)) as src:
            write(os.path.join(args.out, filename.removesuffix(".gz")), src.read())
    print(json.dumps({"skills": len(seen), "query_files": [q.removesuffix(".gz") for q in queries]}))


if __name__ == "__main__":
    main()
