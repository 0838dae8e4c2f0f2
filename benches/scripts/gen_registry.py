#!/usr/bin/env python3
"""A deterministic corpus shaped like a public skill registry (issue 25
item 7), stdlib only:

    python3 benches/scripts/gen_registry.py --n 60000 --seed 1 --out DIR [--root primary]
        [--owner-repo-share 0.9344]

writes N flat skill folders `DIR/<root>/<name>/SKILL.md`, then
`DIR/MANIFEST.json` (parameters and the measured shape; written last, so its
presence means the corpus is complete). The same --n and --seed give the
same bytes.

The shape follows what a public registry of about 61,000 skills holds:

  * SKILL.md sizes drawn from a log-normal of median 5,800 bytes and 90th
    percentile 16,000 bytes, cut at 100,000 bytes (and one file of exactly
    100,000, the largest);
  * front matter with `name` (the folder's name; a few in Cyrillic or
    Chinese), a `description` of realistic length (median about 220
    characters, a few just over the 1,024 limit) written plain, quoted or folded,
    and a `metadata` map of string values (`author`, `version`, `tags`, some
    `category`/`homepage`) in about 95% of the files, block or flow style;
    some `license`, `allowed-tools` and `compatibility`; about 1% have an
    unquoted `: ` inside the description, which a loader recovers from;
  * a markdown body of headings, prose, lists and fenced code;
  * about one other file per folder (`references/REFERENCE.md`,
    `scripts/*.py`, `scripts/run.sh`, `LICENSE.txt`, `assets/*.json`): none
    in 10% of the folders, one in 80%, two in 10%;
  * with `--owner-repo-share F` (issue 41 item 4), a share F of the folders
    named `owner--repo--name` as a registry that mirrors repositories names
    them (57,000 of its 61,000: F = 0.9344), `name` still the short name.
    Each such id has consecutive hyphens, so each loads with a warning.
    The owner and repository are drawn from a generator of their own, so
    every SKILL.md and other file has the same bytes as without the flag;
    the default, 0, keeps the older corpora (`registry60000` and the nested
    fixture) as they were.

Every skill is valid; nothing is malformed, linked or nested (the peer's
`gen_corpus.py` covers those cases).
"""

import argparse
import json
import math
import os
import random
import shutil
import statistics

MEDIAN = 5_800
P90 = 16_000
LARGEST = 100_000
SMALLEST = 400
# The 90th percentile of a standard normal: sigma follows from median and p90.
Z90 = 1.2815515655446004
SIGMA = math.log(P90 / MEDIAN) / Z90

DOMAINS = """pdf docx xlsx pptx csv json yaml toml markdown latex git github gitlab
kubernetes helm terraform pulumi ansible docker nginx caddy systemd postgres mysql
sqlite redis kafka nats clickhouse duckdb bigquery snowflake spark pandas polars
react vue svelte astro nextjs django flask fastapi rails laravel spring rust go
python typescript node bun deno wasm graphql grpc openapi oauth stripe slack
linear jira notion figma svg image audio video ffmpeg browser playwright cypress
aws gcp azure cloudflare vercel supabase firebase i18n a11y seo security ci
release mobile android ios swift kotlin unity blender excel powerpoint""".split()

OBJECTS = """report schema migration changelog test-suite fixture dashboard pipeline
config template invoice form table chart diagram log trace benchmark dataset
notebook commit pull-request issue backup index query endpoint client webhook
cron secret certificate policy component style-guide translation transcript
thumbnail archive spreadsheet slide contract api-doc runbook incident alert
metric deployment cluster module package""".split()

ACTIONS = """builder validator linter formatter generator extractor converter
reviewer auditor optimizer migrator analyzer summarizer inspector debugger
scaffolder tester monitor profiler fixer writer renderer publisher planner
explorer checker helper toolkit expert assistant""".split()

# Lowercase words of scripts without ASCII, for the ids in other scripts.
FOREIGN = ["навык", "отчёт", "проверка", "перевод", "сборка", "技能", "报告", "翻译",
           "测试", "文档"]

VERBS = """Builds Checks Converts Reviews Audits Generates Extracts Migrates
Analyzes Summarizes Inspects Debugs Scaffolds Tests Monitors Profiles Fixes
Writes Renders Publishes Plans Explores Formats Lints Refactors Documents""".split()

WHERE = ["in large monorepos", "for production services", "across several environments",
         "with strict schema checks", "through the official CLI", "without network access",
         "in CI pipelines", "during code review", "for on-call engineers",
         "with reproducible output", "for data teams", "in regulated projects",
         "in legacy codebases", "with incremental caching", "before a release"]

WHEN = ["the user asks to {v} a {o}", "a task involves {d} {o} files",
        "working with {d} and the user mentions a {o}", "a {o} must be checked before merging",
        "the repository holds {d} configuration", "a {d} {o} fails and needs debugging",
        "preparing a {o} for review", "the user wants a summary of a {o}",
        "moving an old {o} to a newer {d} version", "a {d} {o} looks incomplete"]

AUTHORS = ["anthropics", "openai", "vercel-labs", "obra", "platform-team", "data-infra",
           "devex", "security-guild", "docs-team", "ml-ops", "jdoe", "m-kowalski",
           "li-wei", "acme-corp", "community"]

TAGS = """automation productivity writing testing devops data design security docs
frontend backend infra analytics review ai research finance legal education""".split()

LICENSES = ["MIT", "Apache-2.0", "BSD-3-Clause", "Complete terms in LICENSE.txt"]
TOOLS = ["Bash Read Write", "Read Grep Glob", "Bash(git:*) Read", "Read Write Edit",
         "Bash(python3:*) Read Write", "WebFetch Read"]

WORDS = """the a an this that each every any when if then before after while
file files folder project repository module function class command option
flag value result output input error warning message line column path name
section step example test build release version change update check validate
parse render format convert extract generate review summary table chart field
record row schema config setting environment variable script tool agent user
task request response server client cache index query batch stream event job
queue worker timeout retry limit size must should may can will always never
usually first next finally also only quickly safely carefully explicitly
automatically manually locally remotely""".split()

SECTIONS = ["When to use", "Quick start", "Setup", "Usage", "Workflow", "Examples",
            "Options", "Output format", "Troubleshooting", "Limitations", "Checklist",
            "Best practices", "Reference", "Common mistakes", "Advanced"]

LANGS = ["bash", "python", "json", "yaml", "typescript", "sql", "toml"]

# The other files of a folder, and how often each kind is drawn.
EXTRA_KINDS = ["reference", "python", "shell", "license", "json"]
EXTRA_WEIGHTS = [45, 20, 10, 15, 10]

LICENSE_TEXT = """Copyright (c) the skill's authors.

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files, to deal in the software
without restriction, including without limitation the rights to use, copy,
modify, merge, publish, distribute, sublicense, and/or sell copies of it,
subject to the following conditions: the above copyright notice and this
permission notice shall be included in all copies or substantial portions.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
"""


def cap(text):
    return text[:1].upper() + text[1:]


class Gen:
    """Text from one seeded generator; pools built once keep 60,000 bodies
    fast to write."""

    def __init__(self, rng):
        self.rng = rng
        r = rng
        sentences = []
        for _ in range(1200):
            words = [r.choice(WORDS) for _ in range(r.randint(7, 20))]
            if r.random() < 0.3:
                words.insert(r.randrange(len(words)), f"`{r.choice(DOMAINS)}`")
            sentences.append(cap(" ".join(words)) + r.choice(".....?"))
        self.sentences = sentences
        self.paragraphs = [" ".join(r.choice(sentences) for _ in range(r.randint(2, 6)))
                           for _ in range(600)]
        self.lists = []
        for _ in range(300):
            numbered = r.random() < 0.4
            items = [r.choice(sentences) for _ in range(r.randint(3, 8))]
            self.lists.append("\n".join(f"{i + 1}. {s}" if numbered else f"- {s}"
                                        for i, s in enumerate(items)))
        self.codes = []
        for _ in range(300):
            lang = r.choice(LANGS)
            lines = [self.code_line(lang) for _ in range(r.randint(3, 18))]
            self.codes.append(f"```{lang}\n" + "\n".join(lines) + "\n```")

    def code_line(self, lang):
        r = self.rng
        d, o = r.choice(DOMAINS), r.choice(OBJECTS)
        return {
            "bash": f"{d} {o} --{r.choice(WORDS)} ./{r.choice(WORDS)}/{o}.{r.choice(['md', 'json', 'txt'])}",
            "python": f"{o.replace('-', '_')} = load_{d}(path, {r.choice(WORDS)}=True)",
            "json": f'  "{r.choice(WORDS)}": "{d}-{o}",',
            "yaml": f"{r.choice(WORDS)}: {d}-{o}",
            "typescript": f"const {r.choice(WORDS)} = await {d}.{r.choice(WORDS)}('{o}');",
            "sql": f"SELECT {r.choice(WORDS)} FROM {o.replace('-', '_')} WHERE {r.choice(WORDS)} = 1;",
            "toml": f'{r.choice(WORDS)} = "{d}"',
        }[lang]

    def block(self):
        r = self.rng
        x = r.random()
        if x < 0.55:
            return r.choice(self.paragraphs)
        if x < 0.8:
            return r.choice(self.lists)
        return r.choice(self.codes)

    def markdown(self, title, size):
        """Markdown of about `size` bytes (at least a heading)."""
        r = self.rng
        out = [f"# {title}\n\n{r.choice(self.paragraphs)}\n"]
        n = len(out[0])
        while n < size:
            part = f"\n## {r.choice(SECTIONS)}\n\n"
            for _ in range(r.randint(1, 3)):
                part += self.block() + "\n\n"
            out.append(part)
            n += len(part)
        text = "".join(out)
        if len(text) > size:
            # Cut at a line end, so no fence or word is left half-written.
            cut = text.rfind("\n", 0, size)
            text = text[:cut + 1] if cut > len(out[0]) else text[:size]
        return text

    def pad(self, data, size):
        """`data` made exactly `size` bytes long with a last line of prose
        (a markdown cut at a line end falls short by up to a paragraph)."""
        missing = size - len(data)
        if missing < 2:
            return data
        words = []
        while sum(len(w) + 1 for w in words) < missing:
            words.append(self.rng.choice(WORDS))
        line = " ".join(words)[:missing - 1]
        return data + (line[:-1] + ".").encode() + b"\n"

    def description(self, d, o):
        r = self.rng
        target = min(1000, max(40, int(r.lognormvariate(math.log(220), 0.55))))
        v = r.choice(VERBS)
        text = f"{v} {d} {o.replace('-', ' ')}s {r.choice(WHERE)}."
        when = r.choice(WHEN).format(v=v.lower().rstrip("s"), o=o.replace("-", " "), d=d)
        text += f" Use when {when}."
        while len(text) < target:
            text += " " + r.choice([
                f"Supports {r.choice(DOMAINS)} and {r.choice(DOMAINS)} inputs.",
                f"Produces a {r.choice(OBJECTS).replace('-', ' ')} as its result.",
                f"Works {r.choice(WHERE)}.",
                "Not for one-off edits, where plain tools are quicker.",
                f"Reports each problem with its file, line and a suggested fix for {d}.",
                r.choice(self.sentences),
            ])
        if len(text) > target + 40:
            text = text[:target].rsplit(" ", 1)[0].rstrip(",;:") + "."
        return text

    def scalar(self, text):
        """`text` as a description value, in the styles registries use."""
        r = self.rng
        x = r.random()
        if x < 0.6:
            return " " + text
        if x < 0.85:
            return " " + json.dumps(text, ensure_ascii=False)
        if x < 0.9:
            return " '" + text.replace("'", "''") + "'"
        lines, line = [], ""
        for word in text.split(" "):
            if line and len(line) + len(word) > 76:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
        return " >-\n" + "".join(f"  {line}\n" for line in lines).rstrip("\n")

    def metadata(self, d):
        r = self.rng
        version = r.choice(['"1.0.0"', "1.0.0", "1.10", '"2.1"', "0.3.2", '"1.2.0"'])
        fields = [("author", r.choice(AUTHORS)), ("version", version),
                  ("tags", json.dumps(", ".join(sorted(set(r.sample(TAGS, r.randint(1, 4)))))))]
        if r.random() < 0.3:
            fields.append(("category", r.choice(TAGS)))
        if r.random() < 0.2:
            fields.append(("homepage", json.dumps(f"https://github.com/{r.choice(AUTHORS)}/{d}-skills")))
        if r.random() < 0.1:
            return "metadata: {" + ", ".join(f"{k}: {v}" for k, v in fields) + "}\n"
        return "metadata:\n" + "".join(f"  {k}: {v}\n" for k, v in fields)

    def front_matter(self, name, d, o):
        r = self.rng
        text = self.description(d, o)
        if r.random() < 0.01:
            # An unquoted `: ` a loader recovers from (written plain on purpose).
            value = " " + text.rstrip(".") + ". Note: works offline."
        else:
            value = self.scalar(text)
        lines = [f"name: {name}\n", f"description:{value}\n"]
        if r.random() < 0.4:
            lines.append(f"license: {r.choice(LICENSES)}\n")
        if r.random() < 0.15:
            lines.append(f"allowed-tools: {r.choice(TOOLS)}\n")
        if r.random() < 0.05:
            lines.append(f"compatibility: Needs {d} and network access to its API.\n")
        if r.random() < 0.95:
            lines.append(self.metadata(d))
        return "---\n" + "".join(lines) + "---\n\n"

    def extra(self, kind, d, o, size):
        """(relative path, text) of one other file of a skill folder."""
        r = self.rng
        if kind == "reference":
            return "references/REFERENCE.md", self.markdown(f"{cap(d)} {o} reference", size)
        if kind == "python":
            lines = ['"""Helper script of the skill."""', "import sys", ""]
            while sum(len(x) + 1 for x in lines) < size:
                lines.append(self.code_line("python"))
            return f"scripts/{o.replace('-', '_')}.py", "\n".join(lines) + "\n"
        if kind == "shell":
            lines = ["#!/bin/sh", "set -eu"]
            while sum(len(x) + 1 for x in lines) < size:
                lines.append(self.code_line("bash"))
            return "scripts/run.sh", "\n".join(lines) + "\n"
        if kind == "license":
            return "LICENSE.txt", LICENSE_TEXT
        lines = ["{"]
        while sum(len(x) + 1 for x in lines) < size:
            lines.append(self.code_line("json"))
        lines.append('  "end": true\n}')
        return f"assets/{o}.json", "\n".join(lines) + "\n"


def names(rng, n):
    """`n` distinct `domain-object-action` names (a few in another script),
    with their domain and object."""
    combos = [(d, o, a) for d in DOMAINS for o in OBJECTS for a in ACTIONS]
    rng.shuffle(combos)
    out = []
    for i in range(n):
        d, o, a = combos[i % len(combos)]
        name = f"{d}-{o}-{a}"
        if i >= len(combos):
            name += f"-{i // len(combos) + 1}"
        if rng.random() < 0.003:
            name = f"{rng.choice(FOREIGN)}-{name}"
        out.append((name, d, o))
    return out


REPOS = ["skills", "agent-skills", "claude-skills", "awesome-skills", "dotfiles",
         "toolkit", "prompts", "plugins", "ai-tools", "workflows"]


def folder_names(seed, entries, share):
    """The folder of each (name, domain, object): `owner--repo--name` for
    round(share × n) of them, chosen and named by a generator seeded apart
    from the text's, else the name itself."""
    rng = random.Random(f"owner-repo-{seed}")
    chosen = set(rng.sample(range(len(entries)), round(share * len(entries))))
    out = []
    for i, (name, d, _) in enumerate(entries):
        if i in chosen:
            owner = rng.choice(AUTHORS)
            repo = rng.choice(REPOS + [f"{d}-skills", f"{owner}-{d}"])
            out.append(f"{owner}--{repo}--{name}")
        else:
            out.append(name)
    return out


def sizes(rng, n):
    """SKILL.md sizes: the log-normal of the module docs, one exactly LARGEST."""
    out = [min(LARGEST, max(SMALLEST, int(rng.lognormvariate(math.log(MEDIAN), SIGMA))))
           for _ in range(n)]
    if n:
        out[rng.randrange(n)] = LARGEST
    return out


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=60_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    p.add_argument("--root", default="primary", help="the skills folder, relative to --out")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.add_argument("--owner-repo-share", type=float, default=0.0,
                   help="share of folders named owner--repo--name (0.9344: 57,000 of 61,000)")
    args = p.parse_args()

    rng = random.Random(args.seed)
    gen = Gen(rng)
    root = os.path.join(args.out, args.root)
    if os.path.exists(args.out):
        if not args.force:
            raise SystemExit(f"{args.out} exists (use --force)")
        shutil.rmtree(args.out)
    os.makedirs(root)

    written, with_metadata, extras = [], 0, 0
    entries = names(rng, args.n)
    folders = folder_names(args.seed, entries, args.owner_repo_share)
    owner_repo = sum("--" in f for f in folders)
    for (name, d, o), size, folder_name in zip(entries, sizes(rng, args.n), folders):
        folder = os.path.join(root, folder_name)
        os.mkdir(folder)
        head = gen.front_matter(name, d, o)
        with_metadata += "\nmetadata:" in head
        title = " ".join(cap(w) for w in name.split("-"))
        text = head + gen.markdown(title, max(1, size - len(head.encode())))
        data = gen.pad(text.encode(), size)
        with open(os.path.join(folder, "SKILL.md"), "wb") as f:
            f.write(data)
        written.append(len(data))
        x = rng.random()
        count = 0 if x < 0.1 else 1 if x < 0.9 else 2
        kinds = []
        while len(kinds) < count:
            kind = rng.choices(EXTRA_KINDS, EXTRA_WEIGHTS)[0]
            if kind not in kinds:
                kinds.append(kind)
        for kind in kinds:
            extra_size = min(60_000, max(200, int(rng.lognormvariate(math.log(3_000), 0.8))))
            rel, body = gen.extra(kind, d, o, extra_size)
            path = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(body)
            extras += 1

    ordered = sorted(written)
    manifest = {
        "generator": "benches/scripts/gen_registry.py",
        "n": args.n,
        "seed": args.seed,
        "root": args.root,
        "skill_md_bytes": {
            "median": statistics.median(ordered) if ordered else 0,
            "p90": percentile(ordered, 0.9) if ordered else 0,
            "max": ordered[-1] if ordered else 0,
            "total": sum(ordered),
        },
        "with_metadata": with_metadata,
        "other_files": extras,
    }
    if args.owner_repo_share:
        manifest["owner_repo_share"] = args.owner_repo_share
        manifest["owner_repo_folders"] = owner_repo
    with open(os.path.join(args.out, "MANIFEST.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(json.dumps(manifest))


if __name__ == "__main__":
    main()
