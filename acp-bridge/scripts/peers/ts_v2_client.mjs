#!/usr/bin/env node
// An ACP v2 client built on the official TypeScript SDK 2.4.0's draft v2 API
// (`@agentclientprotocol/sdk/experimental/v2`, its `client()` app and
// `ActiveSession`), as an editor speaking v2 would be. It starts the agent
// command given after `--` and speaks newline-delimited JSON on its
// stdin/stdout; with `acp-client --stdio --agent CMD` as that command, a v1
// agent is reached through acp-client's translator. One turn: initialize
// (v2), session/new, a prompt, each permission request answered (the first
// allow_once option, or the first reject_once with --reject), the streamed
// agent text gathered until the idle `state_update`. Prints one JSON line
// on stdout: {"agent", "protocolVersion", "messageId", "stopReason",
// "permissions", "kinds", "text", "error"}; exits 0 after a stop reason, 1
// otherwise (the SDK's error in "error").
//
//   node ts_v2_client.mjs [--cwd DIR] [--prompt TEXT] [--reject] -- CMD ARGS...
//
// Given a v1 agent directly (no acp-client), the SDK refuses the agent's v1
// `initialize` answer while validating it (a v2 answer has `info`): the
// run ends with that error.
//
// The SDK is found in $PEERS_DIR/node_modules/sdk24 (default target/peers,
// installed by scripts/peers/install.sh).
import { spawn } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.PEERS_DIR || path.join(here, "..", "..", "target", "peers");
const acp = await import(pathToFileURL(path.join(peers, "node_modules", "sdk24", "dist", "v2", "stable", "acp.js")).href);

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (dash < 0 || dash === argv.length - 1) {
  console.error("usage: ts_v2_client.mjs [--cwd DIR] [--prompt TEXT] [--reject] -- CMD ARGS...");
  process.exit(2);
}
const opts = argv.slice(0, dash);
const [cmd, ...cmdArgs] = argv.slice(dash + 1);
const opt = (name, fallback) => {
  const i = opts.indexOf(name);
  return i >= 0 && i + 1 < opts.length ? opts[i + 1] : fallback;
};
const cwd = path.resolve(opt("--cwd", process.cwd()));
const promptText = opt("--prompt", "Look at this project and write some notes.");
const kind = opts.includes("--reject") ? "reject_once" : "allow_once";
const log = (...a) => console.error("ts-v2-client:", ...a);

const agent = spawn(cmd, cmdArgs, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => agent.on("exit", (code, signal) => resolve(signal ?? code)));
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const summary = { agent: null, protocolVersion: null, messageId: null, stopReason: null, permissions: 0, kinds: [], text: "", error: null };
const kinds = new Set();
const app = acp.client({ name: "acp-codec-ts-v2-client" }).onRequest("session/request_permission", (ctx) => {
  summary.permissions += 1;
  const options = ctx.params.options ?? [];
  const choice = options.find((o) => o.kind === kind) ?? options.find((o) => o.kind.startsWith(kind.split("_")[0]));
  log("permission", ctx.params.title ?? "", "->", choice?.optionId ?? "cancelled");
  return choice ? { outcome: { outcome: "selected", optionId: choice.optionId } } : { outcome: { outcome: "cancelled" } };
});

const timer = setTimeout(() => {
  summary.error = "timed out after 120 s";
  console.log(JSON.stringify(summary));
  agent.kill();
  process.exit(1);
}, 120_000);

try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      capabilities: {},
      info: { name: "acp-codec-ts-v2-client", title: "acp-codec v2 client (TS SDK 2.4.0)", version: "0.1.0" },
    });
    summary.agent = `${init.info?.name ?? "?"} ${init.info?.version ?? "?"}`;
    summary.protocolVersion = init.protocolVersion;
    log("initialized", summary.agent, "protocol", init.protocolVersion);
    await ctx.buildSession(cwd).withSession(async (session) => {
      log("session", session.sessionId);
      let running = false;
      const accepted = session.prompt(promptText);
      // The session's updates in order, until the idle update that ends
      // the turn (an idle snapshot before it started is not its end).
      for (;;) {
        const m = await session.nextUpdate();
        kinds.add(m.update.sessionUpdate);
        if (m.kind === "stop") {
          if (!running) continue;
          summary.stopReason = m.stopReason ?? null;
          break;
        }
        const u = m.update;
        if (u.sessionUpdate === "state_update" && u.state !== "idle") running = true;
        if (u.sessionUpdate === "user_message") running = true;
        if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") summary.text += u.content.text;
      }
      summary.messageId = (await accepted).messageId ?? null;
    });
  });
} catch (e) {
  summary.error = String(e?.message ?? e) + (e?.code !== undefined ? ` (code ${e.code})` : " (no code)");
}
clearTimeout(timer);
summary.kinds = [...kinds].sort();
log("stop", summary.stopReason, "after", summary.permissions, "permission(s)");
agent.stdin.end();
const status = await Promise.race([exited, new Promise((r) => setTimeout(() => r("running"), 5000))]);
if (status === "running") agent.kill();
console.log(JSON.stringify(summary));
process.exit(summary.stopReason && !summary.error ? 0 : 1);
