"""Drives `bcode-prompt mcp` with the official MCP Python SDK's client.

Usage: python_sdk.py BCODE_PROMPT REPO
Prints one JSON document: what the client saw (capabilities, the skills
listing, a skills/get, resources listed and read, and the error of an
unknown skill), for the Rust test to compare with the tree.
"""

import asyncio
import json
import sys
from typing import Any

from pydantic import TypeAdapter

import mcp
from mcp import types
from mcp.client.stdio import StdioServerParameters, stdio_client


class Custom(types.Request[dict[str, Any] | None, str]):
    """A request the SDK has no type for (the skills extension's methods)."""


async def main(binary: str, repo: str) -> None:
    server = StdioServerParameters(command=binary, args=["--repo", repo, "mcp"])
    seen: dict[str, Any] = {}
    async with stdio_client(server) as (read, write):
        async with mcp.ClientSession(read, write) as session:
            init = await session.initialize()
            caps = init.capabilities.model_dump(by_alias=True, exclude_none=True)
            seen["extensions"] = caps.get("extensions")
            seen["resources_capability"] = "resources" in caps
            anything = TypeAdapter(dict[str, Any])
            seen["skills"] = await session.send_request(
                Custom(method="skills/list", params={}), anything
            )
            first = seen["skills"]["skills"][0]["uri"]
            seen["get"] = await session.send_request(
                Custom(method="skills/get", params={"uri": first}), anything
            )
            listed = await session.list_resources()
            seen["resources"] = [str(r.uri) for r in listed.resources]
            read_back = {}
            for entry in seen["skills"]["skills"]:
                for resource in entry["resources"]:
                    result = await session.read_resource(resource["uri"])
                    content = result.contents[0]
                    read_back[resource["uri"]] = getattr(content, "text", None) or getattr(
                        content, "blob", None
                    )
            seen["read"] = read_back
            try:
                await session.send_request(
                    Custom(method="skills/get", params={"uri": "skill://nope/SKILL.md"}),
                    anything,
                )
                seen["unknown_error"] = None
            except mcp.MCPError as err:
                seen["unknown_error"] = err.code
    print(json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
