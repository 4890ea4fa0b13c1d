#!/usr/bin/env node
// An ACP client on the official TypeScript SDK 2.4.0 over ACP's remote
// transport: `experimental/ws-client` (PROFILE=ws) or
// `experimental/http-client` (PROFILE=http, Streamable HTTP).
//
//   node --experimental-websocket scripts/peers/ts_remote_client.mjs ws ws://127.0.0.1:4444/acp [CWD]
//   node scripts/peers/ts_remote_client.mjs http http://127.0.0.1:4444/acp [CWD]
//
// Runs one turn: initialize, session/new, session/prompt; answers
// session/request_permission with the first allow option. Prints one JSON
// line on stdout: {stopReason, updates, permissions, largest} (largest: the
// longest session/update as JSON text, in bytes). Exits non-zero on any
// failure. The SDK is found in $PEERS_DIR/node_modules/sdk24.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.PEERS_DIR || path.join(here, "..", "..", "target", "peers");
const dist = path.join(peers, "node_modules", "sdk24", "dist");
const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
const acp = await load("v1/stable/acp.js");
const { methods } = acp;

const [profile, url, cwdArg] = process.argv.slice(2);
const cwd = path.resolve(cwdArg || process.cwd());
const headers = process.env.ACP_TOKEN ? { Authorization: `Bearer ${process.env.ACP_TOKEN}` } : {};
let stream;
if (profile === "ws") {
  const { createWebSocketStream } = await load("transports/ws-stream.js");
  stream = createWebSocketStream(url, { headers });
} else if (profile === "http") {
  const { createHttpStream } = await load("transports/http-stream.js");
  stream = createHttpStream(url, { headers });
} else {
  console.error("usage: ts_remote_client.mjs ws|http URL [CWD]");
  process.exit(2);
}

let updates = 0;
let permissions = 0;
let largest = 0;
const app = acp
  .client({ name: "acp-codec-ts-remote-client" })
  .onNotification(methods.client.session.update, (ctx) => {
    updates += 1;
    largest = Math.max(largest, JSON.stringify(ctx.params).length);
  })
  .onRequest(methods.client.session.requestPermission, (ctx) => {
    permissions += 1;
    const opt = ctx.params.options.find((o) => o.kind.startsWith("allow"));
    return opt ? { outcome: { outcome: "selected", optionId: opt.optionId } } : { outcome: { outcome: "cancelled" } };
  });

await app.connectWith(stream, async (ctx) => {
  await ctx.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "acp-codec-ts-remote-client", version: "0.1.0" },
  });
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const done = await ctx.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Run the tool, please." }],
  });
  console.log(JSON.stringify({ stopReason: done.stopReason, updates, permissions, largest }));
});
process.exit(0);
