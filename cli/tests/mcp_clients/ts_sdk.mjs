// Drives `bcode-prompt mcp` with the official MCP TypeScript SDK's client,
// over stdio or Streamable HTTP.
//
// Usage: node ts_sdk.mjs NODE_MODULES stdio BCODE_PROMPT REPO
//        node ts_sdk.mjs NODE_MODULES http URL
// Prints one JSON document: what the client saw (the protocol version
// agreed, capabilities, the skills listing, a skills/get, every listed
// file read, resources listed, and the error of an unknown skill), for the
// Rust test to compare with the tree. NODE_MODULES is the folder
// `.ci/run` installed the pinned SDK into (an ES module is not found
// through NODE_PATH).

import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, transportKind, ...rest] = process.argv.slice(2);
const sdk = (file) =>
  import(pathToFileURL(path.join(modules, "@modelcontextprotocol/sdk/dist/esm", file)).href);

const { Client } = await sdk("client/index.js");
const { ResultSchema } = await sdk("types.js");

let transport;
if (transportKind === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  const [binary, repo] = rest;
  transport = new StdioClientTransport({
    command: binary,
    args: ["--repo", repo, "mcp"],
    env: process.env,
    stderr: "ignore",
  });
} else {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
}

const client = new Client({ name: "bcode-ts-sdk-test", version: "1" });
await client.connect(transport);
const seen = {
  protocolVersion: transport.protocolVersion ?? null,
  capabilities: client.getServerCapabilities(),
  server: client.getServerVersion(),
};
// The skills extension's methods have no types in the SDK: its generic
// result schema keeps every field.
const call = (method, params) => client.request({ method, params }, ResultSchema);
seen.skills = await call("skills/list", {});
const first = seen.skills.skills[0];
seen.get = await call("skills/get", { uri: first.uri });
seen.read = {};
for (const skill of seen.skills.skills) {
  for (const file of skill.resources) {
    const read = await client.readResource({ uri: file.uri });
    const contents = read.contents[0];
    seen.read[file.uri] = contents.text ?? contents.blob;
  }
}
seen.resources = (await client.listResources()).resources.map((r) => r.uri);
try {
  await call("skills/get", { uri: "skill://no-such-skill/SKILL.md" });
  seen.unknownError = null;
} catch (err) {
  seen.unknownError = err.code ?? String(err);
}
await client.close();
process.stdout.write(JSON.stringify(seen));
