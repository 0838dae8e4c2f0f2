"""Serves a folder of skills with FastMCP's skills server (SEP-2640) over
stdio, or over Streamable HTTP at http://127.0.0.1:PORT/mcp.

Usage: fastmcp_skills.py SKILLS_DIR [--http PORT]
FastMCP (4.1.6 on PyPI) publishes `skills/list` and `skills/get` on protocol
2026-07-28 only, reached with `server/discover`; a client that only sends
`initialize` sees the files as plain resources.
"""

import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension


def main(root: str, port: int | None) -> None:
    server = FastMCP("fastmcp-skills")
    provider = SkillsDirectoryProvider(roots=Path(root), experimental_skills=True)
    server.add_provider(provider)
    server.add_extension(SkillsExtension(providers=[provider]))
    if port is None:
        server.run(transport="stdio", show_banner=False)
    else:
        server.run(transport="http", host="127.0.0.1", port=port, show_banner=False)


if __name__ == "__main__":
    http = len(sys.argv) == 4 and sys.argv[2] == "--http"
    main(sys.argv[1], int(sys.argv[3]) if http else None)
