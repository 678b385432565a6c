// A local MCP server over stdio (raw JSON-RPC lines, no SDK, so it can stop answering altogether) whose tools change
// its behaviour: `freeze` answers, then the server ignores everything (connected, answering nothing); `drop` removes
// the tool `danger` and says so (notifications/tools/list_changed, sent before its answer); `reverse` lists its tools
// in the other order from then on; `echo` and `danger` answer. Every tools/call it gets is appended to CALL_LOG.
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const callLog = process.env.CALL_LOG;
let tools = ["echo", "danger", "drop", "freeze", "reverse"];
let frozen = false;
let reversed = false;
const send = (m: unknown) => process.stdout.write(`${JSON.stringify(m)}\n`);

createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "tools/call" && callLog) appendFileSync(callLog, `${m.params?.name}\n`);
  if (frozen || m.id === undefined) return;
  const reply = (result: unknown) => send({ jsonrpc: "2.0", id: m.id, result });
  if (m.method === "initialize") return reply({ protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: "ctl", version: "1" } });
  if (m.method === "tools/list") {
    const list = tools.map((name) => ({ name, description: `tool ${name}`, inputSchema: { type: "object" } }));
    return reply({ tools: reversed ? list.reverse() : list });
  }
  if (m.method === "tools/call") {
    const name = String(m.params.name);
    if (!tools.includes(name)) return send({ jsonrpc: "2.0", id: m.id, error: { code: -32602, message: `Tool ${name} not found` } });
    if (name === "drop") {
      tools = tools.filter((t) => t !== "danger");
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    }
    if (name === "freeze") frozen = true;
    if (name === "reverse") reversed = true;
    return reply({ content: [{ type: "text", text: `${name} ran` }] });
  }
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
});
