#!/usr/bin/env python3
"""`bcode-prompt mcp --http` under load on loopback, and a `skills/list` page
over HTTP against the same page over stdio (issue 40, item 2). Stdlib only.

Makes a repository of N skills (each a `SKILL.md` of about 2 KB and a
`refs/guide.md`) under --out, then:

  1. page cost: one client, one connection (kept alive), asks for the same
     `skills/list` page (the second: 100 entries, built and cached by the
     first ask) R times over stdio and R times over HTTP, in turns of 50,
     and reports the median seconds per answer, each side's own, and their
     ratio. Both sides are timed from the request written to the answer
     parsed, by the same Python client.
  2. load: C clients (threads, each its own kept-alive connection) for S
     seconds, each looping: a `skills/list` page (the cursor drawn from the
     listing), a `skills/get` and a `resources/read` of a file it lists.
     Reports requests, errors, the latency percentiles of each method, and
     the server's peak and final resident memory (VmHWM, VmRSS from
     /proc). Every request loop is bounded in count and time and targets
     127.0.0.1 only.

usage: mcp_http_load.py BCODE_PROMPT [--skills 1000] [--clients 50]
       [--seconds 60] [--rounds 400] [--out DIR]
Prints one JSON document.
"""

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

LIST = "skills/list"


def make_repo(root: Path, skills: int) -> Path:
    repo = root / "repo"
    marker = repo / ".made"
    if marker.exists() and marker.read_text() == str(skills):
        return repo
    skills_dir = repo / ".bcode" / "skills"
    skills_dir.mkdir(parents=True, exist_ok=True)
    (repo / ".git").mkdir(exist_ok=True)
    rng = random.Random(1)
    words = "parse render invoice ledger image archive deploy cluster query index".split()
    for n in range(skills):
        name = f"skill-{n:05d}"
        folder = skills_dir / name / "refs"
        folder.mkdir(parents=True, exist_ok=True)
        body = " ".join(rng.choice(words) for _ in range(300))
        (skills_dir / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Use when asked to {rng.choice(words)} {rng.choice(words)}.\n---\n{body}\n"
        )
        (folder / "guide.md").write_text(f"# Guide {n}\n" + body[:500] + "\n")
    marker.write_text(str(skills))
    return repo


def env_for(root: Path) -> dict:
    home = root / "home"
    state = root / "state"
    home.mkdir(exist_ok=True)
    state.mkdir(exist_ok=True)
    return {"HOME": str(home), "BCODE_STATE_DIR": str(state), "PATH": os.environ.get("PATH", "")}


def memory(pid: int) -> dict:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            found[key] = int(value.split()[0]) / 1024
    return found


class Stdio:
    def __init__(self, binary, repo, env):
        self.proc = subprocess.Popen(
            [binary, "--repo", str(repo), "mcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}})

    def call(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Http:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.conn.request("POST", "/mcp", body, {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        })
        response = self.conn.getresponse()
        data = response.read()
        if response.status != 200:
            return {"error": {"status": response.status, "body": data[:200].decode(errors="replace")}}
        return json.loads(data)


def start_http(binary, repo, env):
    proc = subprocess.Popen(
        [binary, "--repo", str(repo), "mcp", "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        if " at http://" in line:
            port = int(line.rsplit(":", 1)[1].split("/")[0])
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, port
    proc.kill()
    sys.exit("the HTTP server did not start")


def page_cost(binary, repo, env, rounds):
    stdio = Stdio(binary, repo, env)
    proc, port = start_http(binary, repo, env)
    http_client = Http(port)
    cursor = {"cursor": "100"}
    # Warm both: every entry built, the page cached by neither transport
    # (a page is made again for each ask).
    for client in (stdio, http_client):
        listing = client.call(LIST, {})
        while listing["result"].get("nextCursor"):
            listing = client.call(LIST, {"cursor": listing["result"]["nextCursor"]})
    times = {"stdio": [], "http": []}
    done = 0
    while done < rounds:
        for name, client in (("stdio", stdio), ("http", http_client)):
            for _ in range(50):
                started = time.perf_counter()
                answer = client.call(LIST, cursor)
                times[name].append(time.perf_counter() - started)
                assert len(answer["result"]["skills"]) == 100, answer
        done += 50
    stdio.close()
    proc.terminate()
    proc.wait(timeout=30)
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {
        "rounds": rounds,
        "median_s": medians,
        "p90_s": {name: statistics.quantiles(values, n=10)[-1] for name, values in times.items()},
        "http_over_stdio": medians["http"] / medians["stdio"],
    }


def load(binary, repo, env, clients, seconds, skills):
    proc, port = start_http(binary, repo, env)
    latencies = {LIST: [], "skills/get": [], "resources/read": []}
    errors = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    pages = max(1, skills // 100)

    def client(seed):
        rng = random.Random(seed)
        conn = Http(port)
        mine = {key: [] for key in latencies}
        bad = []
        # Bounded by the clock and by a count.
        for _ in range(1_000_000):
            if time.monotonic() >= stop_at:
                break
            cursor = rng.randrange(pages) * 100
            steps = [(LIST, {"cursor": str(cursor)} if cursor else {})]
            for method, params in steps:
                started = time.perf_counter()
                try:
                    answer = conn.call(method, params)
                except Exception as err:  # a refused or dropped connection counts
                    bad.append(str(err))
                    conn = Http(port)
                    continue
                mine[method].append(time.perf_counter() - started)
                if "error" in answer:
                    bad.append(answer["error"])
                    continue
                skill = rng.choice(answer["result"]["skills"])
                for method2, params2 in (("skills/get", {"uri": skill["uri"]}),
                                         ("resources/read", {"uri": rng.choice(skill["resources"])["uri"]})):
                    started = time.perf_counter()
                    answer2 = conn.call(method2, params2)
                    mine[method2].append(time.perf_counter() - started)
                    if "error" in answer2:
                        bad.append(answer2["error"])
        with lock:
            for key, values in mine.items():
                latencies[key].extend(values)
            errors.extend(bad)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    peak_rss = 0.0
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        peak_rss = max(peak_rss, memory(proc.pid).get("VmRSS", 0.0))
        time.sleep(0.5)
    for thread in threads:
        thread.join()
    final = memory(proc.pid)
    proc.terminate()
    code = proc.wait(timeout=30)

    def pct(values, q):
        values = sorted(values)
        return values[min(len(values) - 1, int(q * len(values)))] if values else None

    return {
        "clients": clients,
        "seconds": seconds,
        "requests": {key: len(values) for key, values in latencies.items()},
        "requests_per_s": sum(len(v) for v in latencies.values()) / seconds,
        "errors": len(errors),
        "first_errors": errors[:5],
        "latency_ms": {
            key: {q: (pct(values, p) or 0) * 1000 for q, p in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))}
            for key, values in latencies.items()
        },
        "server_peak_rss_mb_sampled": peak_rss,
        "server_vmhwm_mb": final.get("VmHWM"),
        "server_rss_mb_end": final.get("VmRSS"),
        "exit_code": code,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--out", default="target/bench-results/mcp-http")
    args = parser.parse_args()
    root = Path(args.out).resolve()
    root.mkdir(parents=True, exist_ok=True)
    repo = make_repo(root, args.skills)
    env = env_for(root)
    result = {
        "skills": args.skills,
        "page": page_cost(args.binary, repo, env, args.rounds),
        "load": load(args.binary, repo, env, args.clients, args.seconds, args.skills),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
