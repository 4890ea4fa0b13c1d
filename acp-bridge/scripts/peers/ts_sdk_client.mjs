#!/usr/bin/env node
// An ACP client built on the official TypeScript SDK 2.4.0 (the `client()`
// app API), speaking newline-delimited JSON on its own stdin/stdout.
//
// `scripts/peers/record.py proxy` runs it with an agent and records the bytes
// between them, so a fixture holds what the SDK itself writes as a client
// (requests, answers to fs/* and permission requests). It drives one session:
// initialize, session/new (cwd = argv[2] or the working directory),
// session/prompt (text + resource_link), then session/load when the agent
// advertises it. It answers session/request_permission with the first
// allow_once option and serves fs/read_text_file / fs/write_text_file inside
// the session directory (RESOURCE_NOT_FOUND, -32002, for a missing file).
//
// The SDK is found in $PEERS_DIR/node_modules/sdk24 (default target/peers,
// installed by scripts/peers/install.sh).
import { readFile, writeFile, mkdir, realpath } from "node:fs/promises";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.PEERS_DIR || path.join(here, "..", "..", "target", "peers");
const acp = await import(pathToFileURL(path.join(peers, "node_modules", "sdk24", "dist", "v1", "stable", "acp.js")).href);
const { methods, RequestError } = acp;

const cwd = path.resolve(process.argv[2] || process.cwd());
const root = await realpath(cwd);
const prompt = process.argv[3] || "Look at this project, make greet take a name, and write notes.";
const log = (...a) => console.error("ts-client:", ...a);

async function confined(p) {
  if (!path.isAbsolute(p)) throw RequestError.invalidParams({ path: p }, "path must be absolute");
  let real;
  try {
    real = await realpath(p);
  } catch {
    real = path.join(await realpath(path.dirname(p)).catch(() => path.dirname(p)), path.basename(p));
  }
  if (real !== root && !real.startsWith(root + path.sep)) {
    throw RequestError.invalidParams({ path: p }, "path outside the session directory");
  }
  return real;
}

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
let updates = 0;
const app = acp
  .client({ name: "acp-codec-ts-sdk-client" })
  .onNotification(methods.client.session.update, () => {
    updates += 1;
  })
  .onRequest(methods.client.session.requestPermission, (ctx) => {
    const opt = ctx.params.options.find((o) => o.kind === "allow_once") ?? ctx.params.options.find((o) => o.kind.startsWith("allow"));
    return opt ? { outcome: { outcome: "selected", optionId: opt.optionId } } : { outcome: { outcome: "cancelled" } };
  })
  .onRequest(methods.client.fs.readTextFile, async (ctx) => {
    const file = await confined(ctx.params.path);
    let text;
    try {
      text = await readFile(file, "utf8");
    } catch (e) {
      if (e.code === "ENOENT") throw RequestError.resourceNotFound(ctx.params.path);
      throw e;
    }
    if (ctx.params.line != null || ctx.params.limit != null) {
      const lines = text.split(/(?<=\n)/);
      const start = Math.max(0, (ctx.params.line ?? 1) - 1);
      text = lines.slice(start, ctx.params.limit == null ? undefined : start + ctx.params.limit).join("");
    }
    return { content: text };
  })
  .onRequest(methods.client.fs.writeTextFile, async (ctx) => {
    const file = await confined(ctx.params.path);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, ctx.params.content, "utf8");
    return {};
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "acp-codec-ts-sdk-client", title: "acp-codec fixture client (TS SDK 2.4.0)", version: "0.1.0" },
  });
  log("initialized", init.agentInfo?.name ?? "?");
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  log("session", session.sessionId);
  const readme = path.join(cwd, "README.md");
  const done = await ctx.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [
      { type: "text", text: prompt },
      { type: "resource_link", uri: pathToFileURL(readme).href, name: "README.md", mimeType: "text/markdown" },
    ],
  });
  log("stop", done.stopReason, "after", updates, "updates");
  if (init.agentCapabilities?.loadSession && process.env.ACP_CLIENT_LOAD === "1") {
    // Gemini CLI 0.61 loses a session loaded in the UTC minute it was created.
    const minute = () => new Date().toISOString().slice(0, 16);
    const started = minute();
    while (minute() === started) await new Promise((r) => setTimeout(r, 500));
    await new Promise((r) => setTimeout(r, 1000));
    await ctx.request(methods.agent.session.load, { sessionId: session.sessionId, cwd, mcpServers: [] });
    await new Promise((r) => setTimeout(r, 1000));
    log("loaded; updates", updates);
  }
});
process.exit(0);
