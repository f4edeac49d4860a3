// One ACP session against `reasonix acp`, driven by the official TypeScript SDK
// (@agentclientprotocol/sdk): initialize, session/new, one prompt whose permission
// question is answered "allow once", then stdin closes. Prints one JSON report.
// usage: ACP_SDK=/abs/path/acp.js node acp_ts_client.mjs PYTHON PYZ CWD
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.ACP_SDK).href);
const [python, pyz, cwd] = process.argv.slice(2);
const child = spawn(python, [pyz, "acp"], { cwd, stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const permissions = [];
const app = acp
  .client({ name: "reasonix-ts-e2e" })
  .onRequest(acp.methods.client.session.requestPermission, async (ctx) => {
    permissions.push(ctx.params);
    return { outcome: { outcome: "selected", optionId: "allow-once" } };
  })
  .onNotification(acp.methods.client.session.update, async (ctx) => {
    updates.push(ctx.params.update);
  });

const report = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "reasonix-ts-e2e", version: "1" },
  });
  const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const turn = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "fix add()" }],
  });
  return { init, session, stopReason: turn.stopReason };
});
child.stdin.end();
const code = await exited;
process.stdout.write(JSON.stringify({ ...report, updates, permissions, code }) + "\n");
