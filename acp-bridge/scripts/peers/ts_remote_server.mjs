#!/usr/bin/env node
// The official ACP server transport (TypeScript SDK 2.4.0,
// `experimental/server`) hosting the SDK's example agent, on loopback:
// Streamable HTTP and WebSocket (with the `ws` package) on /acp.
//
//   node scripts/peers/ts_remote_server.mjs [SECONDS]
//
// Prints `listening on http://127.0.0.1:PORT/acp` on stdout once ready and
// exits by itself after SECONDS (default 120). The example agent is the
// SDK's own `dist/examples/agent.js` (the `sdk19` install): its class is
// loaded without the file's stdio wiring and wired to AcpServer the same
// way the file wires it to stdio. Its turn sends updates, tool calls and a
// session/request_permission.
import { createServer } from "node:http";
import { readFile, writeFile, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.PEERS_DIR || path.join(here, "..", "..", "target", "peers");
const modules = path.join(peers, "node_modules");
const url = (p) => pathToFileURL(path.join(modules, p)).href;
const acp = await import(url("sdk24/dist/v1/stable/acp.js"));
const { AcpServer } = await import(url("sdk24/dist/transports/server.js"));
const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import(url("sdk24/dist/transports/node-adapter.js"));
const { WebSocketServer } = createRequire(path.join(modules, "ws", "package.json"))("ws");

// The example agent's class, without the stdio wiring at the end of the file.
const source = await readFile(path.join(modules, "sdk19", "dist", "examples", "agent.js"), "utf8");
const cut = source.indexOf("const input = Writable.toWeb(process.stdout);");
if (cut < 0) throw new Error("unexpected dist/examples/agent.js: no stdio wiring to cut");
const body = source.slice(0, cut).replace(/^#!.*\n/, "").replace('from "../acp.js"', `from ${JSON.stringify(url("sdk24/dist/v1/stable/acp.js"))}`);
const dir = await mkdtemp(path.join(os.tmpdir(), "acp-example-agent-"));
const file = path.join(dir, "agent.mjs");
await writeFile(file, `${body}\nexport { ExampleAgent };\n`);
const { ExampleAgent } = await import(pathToFileURL(file).href);
await rm(dir, { recursive: true, force: true });

const impl = new ExampleAgent();
const agent = acp
  .agent({ name: "example-agent" })
  .onRequest("initialize", (ctx) => impl.initialize(ctx.params))
  .onRequest("session/new", (ctx) => impl.newSession(ctx.params))
  .onRequest("authenticate", (ctx) => impl.authenticate(ctx.params))
  .onRequest("session/set_mode", (ctx) => impl.setSessionMode(ctx.params))
  .onRequest("session/prompt", (ctx) => impl.prompt(ctx.params, ctx.client))
  .onNotification("session/cancel", (ctx) => impl.cancel(ctx.params));

const server = new AcpServer({ agent });
const http = createNodeHttpHandler(server);
const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
const upgrade = createNodeWebSocketUpgradeHandler(server, wss);
const isAcp = (u) => new URL(u ?? "/", "http://127.0.0.1").pathname === "/acp";
const httpServer = createServer((req, res) => {
  if (!isAcp(req.url)) {
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("Not Found");
    return;
  }
  http(req, res);
});
httpServer.on("upgrade", (req, socket, head) => (isAcp(req.url) ? upgrade(req, socket, head) : socket.destroy()));
httpServer.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${httpServer.address().port}/acp`);
});
const seconds = Number(process.argv[2] || 120);
setTimeout(() => process.exit(0), seconds * 1000);
