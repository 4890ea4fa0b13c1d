#!/usr/bin/env node
// An ACP v2 client on the official TypeScript SDK 2.4.0's draft v2 API
// (`experimental/v2`, its `client()` app) over ACP's remote transport:
// the SDK's `experimental/ws-client` (PROFILE=ws) or
// `experimental/http-client` (PROFILE=http, Streamable HTTP).
//
//   node --experimental-websocket scripts/peers/ts_remote_client_v2.mjs ws ws://127.0.0.1:4444/acp [CWD]
//
// Runs one turn: initialize (version 2), session/new, session/prompt (its
// answer, the prompt's acceptance, carries a messageId), then waits for
// the idle `state_update` that ends the turn; answers
// session/request_permission with the first allow option. Prints one JSON
// line on stdout: {stopReason, updates, permissions, states, protocolVersion,
// sessionId} (states: the `state_update`s seen, in order). Exits non-zero on
// any failure. The SDK is found in $PEERS_DIR/node_modules/sdk24.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.PEERS_DIR || path.join(here, "..", "..", "target", "peers");
const dist = path.join(peers, "node_modules", "sdk24", "dist");
const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
const acp = await load("v2/stable/acp.js");
const { methods } = acp;

const [profile, url, cwdArg] = process.argv.slice(2);
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
  console.error("usage: ts_remote_client_v2.mjs ws|http URL [CWD]");
  process.exit(2);
}

let updates = 0;
let permissions = 0;
const states = [];
let idle;
const ended = new Promise((resolve) => {
  idle = resolve;
});
const app = acp
  .client({ name: "acp-codec-ts-remote-client-v2" })
  .onNotification(methods.client.session.update, (ctx) => {
    updates += 1;
    const u = ctx.params.update;
    if (u.sessionUpdate === "state_update") {
      states.push(u.state);
      if (u.state === "idle") idle(u);
    }
  })
  .onRequest(methods.client.session.requestPermission, (ctx) => {
    permissions += 1;
    const opt = ctx.params.options.find((o) => o.kind.startsWith("allow"));
    return opt ? { outcome: { outcome: "selected", optionId: opt.optionId } } : { outcome: { outcome: "cancelled" } };
  });

let sessionId;
let stopReason;
let protocolVersion;
await app.connectWith(connect(), async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    capabilities: {},
    info: { name: "acp-codec-ts-remote-client-v2", version: "0.1.0" },
  });
  protocolVersion = init.protocolVersion;
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  sessionId = session.sessionId;
  const accepted = await ctx.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Run the tool, please." }],
  });
  if (typeof accepted.messageId !== "string") throw new Error(`no messageId: ${JSON.stringify(accepted)}`);
  stopReason = (await ended).stopReason;
});
console.log(JSON.stringify({ stopReason, updates, permissions, states, protocolVersion, sessionId }));
process.exit(0);
