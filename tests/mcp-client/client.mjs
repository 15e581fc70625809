// SPDX-License-Identifier: LGPL-2.1-or-later
// Drives sandlock-mcp with the official MCP TypeScript SDK client and prints what it saw as
// one JSON object on stdout.
//
//   node client.mjs stdio COMMAND ARG...
//   node client.mjs http URL [TOKEN]
//   node client.mjs sse URL [TOKEN]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [mode, ...rest] = process.argv.slice(2);

function transport() {
	if (mode === "stdio")
		return new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env });
	const init = rest[1] ? { headers: { Authorization: `Bearer ${rest[1]}` } } : {};
	if (mode === "http")
		return new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit: init });
	return new SSEClientTransport(new URL(rest[0]), { requestInit: init, eventSourceInit: {
		fetch: (url, opts) => fetch(url, { ...opts, headers: { ...opts.headers, ...init.headers } }),
	} });
}

const text = (r) => r.content.map((c) => c.text).join("");
const out = {};
const client = new Client({ name: "sandlock-test", version: "1.0.0" });
try {
	const t = transport();
	await client.connect(t);
	out.protocolVersion = t.protocolVersion ?? null;
	out.server = client.getServerVersion();
	out.tools = (await client.listTools()).tools.map((x) => x.name);
	const calls = {
		write_file: { path: "from-ts.txt", content: "written by the TS client" },
		read_file: { path: "from-ts.txt" },
		list_files: {},
		shell: { command: "cat from-ts.txt | wc -c" },
		python: { code: "print(sum(range(10)))" },
	};
	out.calls = {};
	for (const [name, args] of Object.entries(calls)) {
		const r = await client.callTool({ name, arguments: args });
		out.calls[name] = { isError: r.isError ?? false, text: text(r) };
	}
	const bad = await client.callTool({ name: "read_file", arguments: { path: "../secret" } });
	out.failing = { isError: bad.isError ?? false, text: text(bad) };
	await client.close();
} catch (e) {
	out.error = String(e?.message ?? e);
	out.code = e?.code ?? null;
}
console.log(JSON.stringify(out));
process.exit(0);
