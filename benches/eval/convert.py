#!/usr/bin/env python3
"""Turns public (task -> tool or skill) benchmarks into the routing
evaluation's data format, stdlib only:

    python3 benches/eval/convert.py SET --git-dir DIR --out OUT [--commit SHA]

SET is one of `metatool`, `swe-skills-bench`, `dotnet-artisan`. DIR is a git
directory (a clone's `.git`, or a bare mirror) of that set's upstream
repository; every file is read with `git show COMMIT:PATH`, so the data is
pinned to the commit below, not to whatever a work tree holds. OUT/SET/
receives:

  * `skills.jsonl`: one skill a line, sorted by name. Either
    `{"name", "description", "body", "upstream"}` (a tool that has no
    SKILL.md; the materialiser writes the front matter) or
    `{"name", "skill_md", "files", "upstream"}` (a real SKILL.md, kept byte
    for byte, and the text of the other files of its folder);
  * `queries*.jsonl`: one query a line, `{"id", "query", "expected": [names]}`;
  * `LICENSE`: the upstream licence, which its terms require to travel with
    copies;
  * `SOURCE.json`: repository, commit, licence, the files read and counts.

No text is written that the upstream does not hold: names are the upstream
identifiers made kebab-case (only for MetaTool, whose tools have no SKILL.md),
descriptions and bodies are upstream fields copied whole. README.md beside
this script says, set by set, which field became what. The same input gives
the same bytes.
"""

import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys

SETS = {
    "metatool": {
        "repo": "HowieHwong/MetaTool",
        "commit": "35e81bb7576826e980c80fed8f8c0a2b4a1e6fbb",
        "licence": "MIT",
    },
    "swe-skills-bench": {
        "repo": "GeniusHTX/SWE-Skills-Bench",
        "commit": "9a747da75106c611d69741b42d2d11d3b4e5204f",
        "licence": "MIT",
        # Skills whose own front matter forbids passing them on; their
        # tasks go too, having no right answer left.
        "exclude": {
            "xlsx": "its front matter says `license: Proprietary` (Anthropic's document skill)",
        },
    },
    "dotnet-artisan": {
        "repo": "novotnyllc/dotnet-marketplace",
        "commit": "0fa311868302c7a0b08c6f00d083ee5da1361b61",
        "licence": "MIT",
    },
}

# The Agent Skills limit on a name, which discovery enforces.
MAX_NAME = 64


class Upstream:
    """Reads files of one commit of a git directory."""

    def __init__(self, git_dir, commit):
        self.git_dir = git_dir
        self.commit = self._run("rev-parse", "--verify", commit + "^{commit}").strip()

    def _run(self, *args):
        out = subprocess.run(
            ["git", "--git-dir", self.git_dir, *args],
            check=True,
            capture_output=True,
        )
        return out.stdout.decode("utf-8")

    def read(self, path):
        return self._run("show", f"{self.commit}:{path}")

    def files(self, prefix):
        """Every file path under `prefix`, sorted."""
        listing = self._run("ls-tree", "-r", "--name-only", self.commit, "--", prefix)
        return sorted(line for line in listing.split("\n") if line)


def kebab(identifier):
    """`SummarizeAnything_pr` -> `summarize-anything-pr`: camel humps and
    every run of characters other than ASCII letters and digits become one
    hyphen, and the result is lowercased."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", identifier)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", s)
    s = re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()
    if not s or len(s) > MAX_NAME:
        sys.exit(f"{identifier!r} gives no usable skill name ({s!r})")
    return s


def convert_metatool(up, source):
    """MetaTool's ToolE data: 199 tools, 20,614 single-tool and 497
    two-tool queries (written by ChatGPT/GPT-4 for the benchmark)."""
    des = json.loads(up.read("dataset/plugin_des.json"))
    info = json.loads(up.read("dataset/plugin_info.json"))
    single = list(csv.DictReader(io.StringIO(up.read("dataset/data/all_clean_data.csv"))))
    multi = json.loads(up.read("dataset/data/multi_tool_query_golden.json"))
    source["files"] = [
        "dataset/plugin_des.json",
        "dataset/plugin_info.json",
        "dataset/data/all_clean_data.csv",
        "dataset/data/multi_tool_query_golden.json",
    ]

    # The longer text the plugin's vendor wrote for the model, when the
    # tool is one plugin of the OpenAI store (153 of 199); the other 46
    # are MetaTool's merged tools (`FinanceTool`, ...), which have only the
    # one-line description. Two store names appear twice: both texts kept.
    for_model = {}
    for entry in info:
        texts = for_model.setdefault(entry["name_for_model"], [])
        text = entry.get("description_for_model") or ""
        if text and text not in texts:
            texts.append(text)

    names = {}
    skills = []
    for tool in sorted(des):
        name = kebab(tool)
        if name in names:
            sys.exit(f"{tool!r} and {names[name]!r} both become {name!r}")
        names[name] = tool
        description = des[tool].strip()
        body_parts = [t.strip() for t in for_model.get(tool, []) if t.strip() != description]
        skills.append(
            {
                "name": name,
                "description": description,
                "body": "\n\n".join(body_parts),
                "upstream": tool,
            }
        )
    by_tool = {tool: name for name, tool in names.items()}

    singles = []
    for i, row in enumerate(single, start=1):
        tool = row["Tool"]
        if tool not in by_tool:
            sys.exit(f"single-tool query {i} names unknown tool {tool!r}")
        singles.append({"id": f"single-{i:05d}", "query": row["Query"], "expected": [by_tool[tool]]})
    multis = []
    for i, row in enumerate(multi, start=1):
        missing = [t for t in row["tool"] if t not in by_tool]
        if missing:
            sys.exit(f"multi-tool query {i} names unknown tools {missing}")
        multis.append(
            {"id": f"multi-{i:04d}", "query": row["query"], "expected": [by_tool[t] for t in row["tool"]]}
        )
    source["counts"] = {
        "skills": len(skills),
        "skills_with_body": sum(1 for s in skills if s["body"]),
        "queries.jsonl": len(singles),
        "queries-multi.jsonl": len(multis),
    }
    return skills, {"queries.jsonl": singles, "queries-multi.jsonl": multis}


def skill_folder_record(up, name, folder, upstream):
    """A real skill folder: its SKILL.md byte for byte and its other files."""
    files = {}
    for path in up.files(folder + "/"):
        rel = path[len(folder) + 1 :]
        if rel == "SKILL.md" or os.path.basename(rel) == ".gitkeep":
            continue
        files[rel] = up.read(path)
    return {"name": name, "skill_md": up.read(folder + "/SKILL.md"), "files": files, "upstream": upstream}


def convert_swe_skills_bench(up, source):
    """SWE-Skills-Bench: 49 skills, each with software-engineering task
    descriptions in ten batches (`tasks/batchN/<skill id>.md`)."""
    excluded = SETS["swe-skills-bench"]["exclude"]
    skill_ids = sorted(
        {p.split("/")[1] for p in up.files("skills/") if p.endswith("/SKILL.md") and p.count("/") == 2}
    )
    skills = [
        skill_folder_record(up, s, f"skills/{s}", f"skills/{s}") for s in skill_ids if s not in excluded
    ]
    known = {s["name"] for s in skills}
    queries = []
    skipped = []
    for path in up.files("tasks/"):
        if not path.endswith(".md"):
            continue
        batch, filename = path.split("/")[1:3]
        skill = filename[: -len(".md")]
        if skill not in known:
            # The task's skill is not in the benchmark's skills/ folder
            # (`dotnet-backend-patterns`), or was excluded: no right answer
            # to rank.
            skipped.append(path)
            continue
        queries.append({"id": f"{batch}-{skill}", "query": up.read(path), "expected": [skill]})
    source["files"] = ["skills/*/SKILL.md", "tasks/batch*/*.md"]
    source["excluded_skills"] = excluded
    source["skipped_queries"] = skipped
    source["counts"] = {"skills": len(skills), "queries.jsonl": len(queries)}
    return skills, {"queries.jsonl": queries}


def convert_dotnet_artisan(up, source):
    """dotnet-artisan's 130 skills as of the commit before they were merged
    into eight, with the plugin's own routing prompts of that commit."""
    skills = []
    for path in up.files("skills/"):
        parts = path.split("/")
        if len(parts) == 4 and parts[3] == "SKILL.md":
            folder = "/".join(parts[:3])
            skills.append(skill_folder_record(up, parts[2], folder, folder))
    skills.sort(key=lambda s: s["name"])
    known = {s["name"] for s in skills}
    queries = []
    for i, row in enumerate(json.loads(up.read("tests/trigger-corpus.json")), start=1):
        queries.append({"id": f"trigger-{i:03d}", "query": row["query"], "expected": [row["expected_skill"]]})
    for row in json.loads(up.read("tests/agent-routing/cases.json")):
        # `optional_skills` (acceptable extras) and `disallowed_skills` are
        # not scored: the expected skill is the one right answer.
        queries.append({"id": f"routing-{row['case_id']}", "query": row["prompt"], "expected": [row["expected_skill"]]})
    unknown = [q["id"] for q in queries if not set(q["expected"]) <= known]
    if unknown:
        sys.exit(f"queries expecting unknown skills: {unknown}")
    source["files"] = ["skills/*/*/SKILL.md (and the other files of those folders)", "tests/trigger-corpus.json", "tests/agent-routing/cases.json"]
    source["counts"] = {"skills": len(skills), "queries.jsonl": len(queries)}
    return skills, {"queries.jsonl": queries}


CONVERTERS = {
    "metatool": convert_metatool,
    "swe-skills-bench": convert_swe_skills_bench,
    "dotnet-artisan": convert_dotnet_artisan,
}


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True))
            f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--git-dir", required=True, help="git directory of the upstream repository")
    parser.add_argument("--commit", help="override the pinned commit (the data then differs from README.md)")
    parser.add_argument("--out", required=True, help="folder receiving SET/")
    args = parser.parse_args()

    meta = SETS[args.set]
    up = Upstream(args.git_dir, args.commit or meta["commit"])
    source = {"set": args.set, "repository": meta["repo"], "commit": up.commit, "licence": meta["licence"]}
    skills, query_files = CONVERTERS[args.set](up, source)

    out = os.path.join(args.out, args.set)
    os.makedirs(out, exist_ok=True)
    write_jsonl(os.path.join(out, "skills.jsonl"), skills)
    for filename, rows in query_files.items():
        write_jsonl(os.path.join(out, filename), rows)
    with open(os.path.join(out, "LICENSE"), "w", encoding="utf-8", newline="\n") as f:
        f.write(up.read("LICENSE"))
    with open(os.path.join(out, "SOURCE.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(source, f, ensure_ascii=False, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(source["counts"], sort_keys=True))


if __name__ == "__main__":
    main()
