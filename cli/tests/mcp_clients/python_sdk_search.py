"""Routes a task through `bcode-prompt mcp` with the official MCP Python SDK's client.

Usage: python_sdk_search.py BCODE_PROMPT REPO QUERY
Prints one JSON document: what the client saw (the tools capability, the
tools listed, a `search_skills` call for QUERY as the SDK returns it, after
checking its structured content against the tool's output schema, the
resource its first result names, read back, a call with bad arguments, and
the error of an unknown tool), for the Rust test to compare with the tree.
"""

import asyncio
import json
import sys
from typing import Any

import mcp
from mcp.client.stdio import StdioServerParameters, stdio_client


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", None) == "text"]


async def main(binary: str, repo: str, query: str) -> None:
    server = StdioServerParameters(command=binary, args=["--repo", repo, "mcp"])
    seen: dict[str, Any] = {}
    async with stdio_client(server) as (read, write):
        async with mcp.ClientSession(read, write) as session:
            init = await session.initialize()
            caps = init.capabilities.model_dump(by_alias=True, exclude_none=True)
            seen["tools_capability"] = caps.get("tools")
            listed = await session.list_tools()
            seen["tools"] = [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
            # The SDK checks `structuredContent` against the listed output
            # schema, and raises when it does not conform.
            found = await session.call_tool("search_skills", {"query": query, "limit": 2})
            seen["found"] = {
                "is_error": found.is_error,
                "structured": found.structured_content,
                "text": texts(found),
            }
            results = (found.structured_content or {}).get("results", [])
            if results:
                read_back = await session.read_resource(results[0]["uri"])
                seen["first_read"] = getattr(read_back.contents[0], "text", None)
            refused = await session.call_tool("search_skills", {"query": query, "limit": 0})
            seen["refused"] = {"is_error": refused.is_error, "text": texts(refused)}
            try:
                await session.call_tool("no_such_tool", {"query": query})
                seen["unknown_error"] = None
            except mcp.MCPError as err:
                seen["unknown_error"] = err.code
    print(json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
