#!/usr/bin/env node
// An ACP v2 agent built on the official TypeScript SDK 2.4.0's draft v2 API
// (`@agentclientprotocol/sdk/experimental/v2`, its `agent()` app), speaking
// newline-delimited JSON on its own stdin/stdout. Whatever it is asked, a
// prompt runs one scripted turn: `state_update` running, a thought, message
// chunks, a plan, a shell tool call behind `session/request_permission`
// (its output as `tool_call_content_chunk`s when allowed), and the idle
// `state_update` with the stop reason (`cancelled` after `session/cancel`
// or a cancelled permission; with TS_V2_AGENT_WITHDRAW_MS, an unanswered
// permission request is withdrawn with the SDK's own `$/cancel_request`). `interop.sh` drives it with `acp-client`,
// which reaches v2 through its translator.
//
// The SDK is found in $PEERS_DIR/node_modules/sdk24 (default target/peers,
// installed by scripts/peers/install.sh).
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const peers = process.env.PEERS_DIR || path.join(here, "..", "..", "target", "peers");
const acp = await import(pathToFileURL(path.join(peers, "node_modules", "sdk24", "dist", "v2", "stable", "acp.js")).href);

const text = (t) => ({ type: "text", text: t });
const sessions = new Map(); // id -> AbortController of the running turn
let made = 0;
let turns = 0;

async function turn(client, sessionId, said, signal) {
  const n = ++turns;
  const update = (u) => client.notify("session/update", { sessionId, update: u });
  const plan = (done) => ({
    sessionUpdate: "plan_update",
    plan: {
      type: "items",
      planId: `plan-${n}`,
      entries: ["List the files", "Sum up"].map((content, i) => ({
        content,
        priority: "medium",
        status: i < done ? "completed" : i === done ? "in_progress" : "pending",
      })),
    },
  });
  await update({ sessionUpdate: "state_update", state: "running" });
  await update({ sessionUpdate: "agent_thought_chunk", messageId: `thought-${n}`, content: text(`Looking at "${said}".`) });
  for (const chunk of ["I'll look", " around."]) {
    await update({ sessionUpdate: "agent_message_chunk", messageId: `msg-${n}`, content: text(chunk) });
  }
  await update(plan(0));
  const call = { toolCallId: `shell-${n}`, title: "ls", kind: "execute", status: "pending", rawInput: { command: "ls" } };
  await update({ sessionUpdate: "tool_call_update", ...call });
  await update({ sessionUpdate: "state_update", state: "requires_action" });
  // TS_V2_AGENT_WITHDRAW_MS: the agent withdraws an unanswered permission
  // request itself after that long (an agent's internal cancellation).
  const after = Number(process.env.TS_V2_AGENT_WITHDRAW_MS || 0);
  const withdraw = after > 0 ? AbortSignal.any([signal, AbortSignal.timeout(after)]) : signal;
  const answer = await client.request("session/request_permission", {
    sessionId,
    title: "Run ls?",
    subject: { type: "tool_call", toolCall: call },
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  }, { cancellationSignal: withdraw });
  // With a cancellation signal, the SDK withdraws the request when it aborts
  // (`$/cancel_request`) and waits for the client's answer.
  if (withdraw.aborted) console.error(`ts-v2-agent: permission request withdrawn, answered ${answer.outcome.outcome}`);
  if (signal.aborted || answer.outcome.outcome !== "selected") return "cancelled";
  await update({ sessionUpdate: "state_update", state: "running" });
  if (answer.outcome.optionId === "allow") {
    await update({ sessionUpdate: "tool_call_content_chunk", toolCallId: call.toolCallId, content: { type: "content", content: text("README.md\n") } });
    await update({ sessionUpdate: "tool_call_update", toolCallId: call.toolCallId, status: "completed" });
  } else {
    await update({ sessionUpdate: "tool_call_update", toolCallId: call.toolCallId, status: "failed" });
  }
  await update(plan(1));
  await update({ sessionUpdate: "agent_message_chunk", messageId: `done-${n}`, content: text("Done.") });
  await update(plan(2));
  return signal.aborted ? "cancelled" : "end_turn";
}

const app = acp
  .agent()
  .onRequest("initialize", () => ({
    protocolVersion: 2,
    info: { name: "ts-v2-agent", version: "2.4.0" },
    capabilities: { session: { prompt: {} } },
    authMethods: [],
  }))
  .onRequest("session/new", () => {
    const sessionId = `ts-session-${++made}`;
    sessions.set(sessionId, null);
    return { sessionId };
  })
  .onRequest("session/prompt", ({ params, client }) => {
    const { sessionId } = params;
    if (!sessions.has(sessionId)) throw acp.RequestError.resourceNotFound(sessionId);
    const n = turns + 1;
    const said = params.prompt.map((b) => b.text ?? "").join(" ");
    const abort = new AbortController();
    sessions.get(sessionId)?.abort();
    sessions.set(sessionId, abort);
    setImmediate(async () => {
      await client.notify("session/update", {
        sessionId,
        update: { sessionUpdate: "user_message", messageId: `user-${n}`, content: params.prompt },
      });
      let stopReason;
      try {
        stopReason = await turn(client, sessionId, said, abort.signal);
      } catch (e) {
        console.error("ts-v2-agent: turn failed:", e);
        stopReason = "cancelled";
      }
      await client.notify("session/update", { sessionId, update: { sessionUpdate: "state_update", state: "idle", stopReason } });
    });
    return { messageId: `user-${n}` };
  })
  .onNotification("session/cancel", ({ params }) => {
    sessions.get(params.sessionId)?.abort();
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
