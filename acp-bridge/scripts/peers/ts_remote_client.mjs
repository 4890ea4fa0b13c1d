#!/usr/bin/env node
// An ACP client on the official TypeScript SDK 2.4.0 over ACP's remote
// transport: `experimental/ws-client` (PROFILE=ws) or
// `experimental/http-client` (PROFILE=http, Streamable HTTP).
//
//   node --experimental-websocket scripts/peers/ts_remote_client.mjs ws ws://127.0.0.1:4444/acp [CWD]
//   node scripts/peers/ts_remote_client.mjs http http://127.0.0.1:4444/acp [CWD]
//   node scripts/peers/ts_remote_client.mjs http http://127.0.0.1:4444/acp CWD SESSION
//
// Runs one turn: initialize, session/new, session/prompt; answers
// session/request_permission with the first allow option. Then, on a new
// connection, initialize and session/load of that session, counting the
// history updates that came before the load's answer. Prints one JSON line
// on stdout: {stopReason, updates, permissions, largest, history} (largest:
// the longest session/update as JSON text, in bytes; history: the updates
// the load replayed before its answer; sessionId). With SESSION, only the
// load of that session (another server's, say, sharing the agent's state):
// {history, sessionId}. With DUMP set, the updates themselves (each
// session/update's `update`, as JSON) go to DUMP.turn.json (the turn's)
// and DUMP.history.json (the load's), for a comparison by content. With
// TURN_ONLY set, the turn alone (an agent that cannot load sessions).
// Exits non-zero on any failure. The SDK is found in
// $PEERS_DIR/node_modules/sdk24.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.PEERS_DIR || path.join(here, "..", "..", "target", "peers");
const dist = path.join(peers, "node_modules", "sdk24", "dist");
const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
const acp = await load("v1/stable/acp.js");
const { methods } = acp;

const [profile, url, cwdArg, loadOnly] = process.argv.slice(2);
const cwd = path.resolve(cwdArg || process.cwd());
const headers = process.env.ACP_TOKEN ? { Authorization: `Bearer ${process.env.ACP_TOKEN}` } : {};
let connect;
if (profile === "ws") {
  const { createWebSocketStream } = await load("transports/ws-stream.js");
  connect = () => createWebSocketStream(url, { headers });
} else if (profile === "http") {
  const { createHttpStream } = await load("transports/http-stream.js");
  connect = () => createHttpStream(url, { headers });
} else {
  console.error("usage: ts_remote_client.mjs ws|http URL [CWD]");
  process.exit(2);
}
const initialize = (ctx) =>
  ctx.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "acp-codec-ts-remote-client", version: "0.1.0" },
  });

let updates = 0;
const turnUpdates = [];
let permissions = 0;
let largest = 0;
const app = acp
  .client({ name: "acp-codec-ts-remote-client" })
  .onNotification(methods.client.session.update, (ctx) => {
    updates += 1;
    turnUpdates.push(ctx.params.update);
    largest = Math.max(largest, JSON.stringify(ctx.params).length);
  })
  .onRequest(methods.client.session.requestPermission, (ctx) => {
    permissions += 1;
    const opt = ctx.params.options.find((o) => o.kind.startsWith("allow"));
    return opt ? { outcome: { outcome: "selected", optionId: opt.optionId } } : { outcome: { outcome: "cancelled" } };
  });

let sessionId = loadOnly;
let stopReason;
if (!loadOnly) await app.connectWith(connect(), async (ctx) => {
  await initialize(ctx);
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  sessionId = session.sessionId;
  const done = await ctx.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Run the tool, please." }],
  });
  stopReason = done.stopReason;
});

if (process.env.TURN_ONLY) {
  console.log(JSON.stringify({ stopReason, updates, permissions, largest, sessionId }));
  process.exit(0);
}

// The session loaded on a new connection: its history is replayed before
// the load's answer.
let replayed = 0;
const historyUpdates = [];
let history = -1;
const again = acp
  .client({ name: "acp-codec-ts-remote-client" })
  .onNotification(methods.client.session.update, (ctx) => {
    if (ctx.params.sessionId === sessionId) {
      replayed += 1;
      historyUpdates.push(ctx.params.update);
    }
  });
await again.connectWith(connect(), async (ctx) => {
  await initialize(ctx);
  await ctx.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  history = replayed;
});
if (process.env.DUMP) {
  if (!loadOnly) fs.writeFileSync(`${process.env.DUMP}.turn.json`, JSON.stringify(turnUpdates));
  fs.writeFileSync(`${process.env.DUMP}.history.json`, JSON.stringify(historyUpdates));
}
console.log(
  JSON.stringify(loadOnly ? { history, sessionId } : { stopReason, updates, permissions, largest, history, sessionId }),
);
process.exit(0);
