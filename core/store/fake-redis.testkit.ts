// For tests of the Redis store against a server on another thread (its own event loop, as a real Redis has): a few
// commands answered the way a healthy server answers them, and a way to hold, drop or refuse the replies to one.
// Every reply written counts as an answer (core/busy-loop.testkit.ts), so a test can hold its own loop until it came.
import { AnsweringThread } from "../busy-loop.testkit.ts";

/**
 * How the server treats a command: "info persistence" is INFO with that section, "info" any INFO, "script" a Lua
 * script's call (EVAL or EVALSHA: ioredis sends a script's first call as EVAL).
 */
export type Treatment = "answer" | "hold" | "never" | "refuse";

const SOURCE = `const { parentPort, workerData } = require("node:worker_threads");
const net = require("node:net");
const treat = new Map();
const held = [];
const bulk = (s) => "$" + Buffer.byteLength(s) + "\\r\\n" + s + "\\r\\n";
const INFO = "# Persistence\\r\\nloading:0\\r\\naof_enabled:1\\r\\n# Memory\\r\\nmaxmemory:0\\r\\nmaxmemory_policy:noeviction\\r\\n";
function reply(args) {
  const name = args[0].toLowerCase();
  if (name === "ping") return "+PONG\\r\\n";
  if (name === "info") return bulk(INFO);
  if (name === "get" || name === "evalsha" || name === "eval") return "$-1\\r\\n";
  return "+OK\\r\\n";
}
function onCommand(socket, args) {
  let name = args[0].toLowerCase();
  if (name === "eval" || name === "evalsha") name = "script";
  const how = treat.get(name + " " + String(args[1] ?? "").toLowerCase()) ?? treat.get(name) ?? "answer";
  parentPort.postMessage({ command: name });
  if (how === "never") return;
  const out = how === "refuse" ? "-NOPERM this user has no permissions to run the '" + name + "' command\\r\\n" : reply(args);
  if (how === "hold") held.push(() => socket.write(out, () => answered(workerData)));
  else socket.write(out, () => answered(workerData));
}
function parse(buf) {
  const args = [];
  if (buf[0] !== 42) return undefined;
  let at = buf.indexOf("\\r\\n");
  if (at < 0) return undefined;
  const n = Number(buf.subarray(1, at));
  at += 2;
  for (let i = 0; i < n; i++) {
    const end = buf.indexOf("\\r\\n", at);
    if (end < 0) return undefined;
    const len = Number(buf.subarray(at + 1, end));
    if (buf.length < end + 2 + len + 2) return undefined;
    args.push(buf.subarray(end + 2, end + 2 + len).toString());
    at = end + 2 + len + 2;
  }
  return { args, rest: buf.subarray(at) };
}
const server = net.createServer((socket) => {
  let buf = Buffer.alloc(0);
  socket.on("error", () => {});
  socket.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    for (let c = parse(buf); c; c = parse(buf)) {
      buf = c.rest;
      onCommand(socket, c.args);
    }
  });
});
parentPort.on("message", (m) => {
  if (m.treat) treat.set(m.treat, m.how);
  if (m.release) for (const write of held.splice(0)) write();
  parentPort.postMessage({ done: true });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));`;

export class FakeRedis {
  private constructor(readonly thread: AnsweringThread, readonly url: string) {}

  static async start(): Promise<FakeRedis> {
    const thread = new AnsweringThread(SOURCE);
    const { port } = await thread.message<{ port: number }>();
    return new FakeRedis(thread, `redis://127.0.0.1:${port}`);
  }

  /** From now on, `command` ("script", "info persistence") is answered, held until release(), never answered, or refused. */
  async treat(command: string, how: Treatment): Promise<void> {
    await this.ask({ treat: command, how });
  }

  /** Writes the held replies (without waiting for anything: the caller may hold its own loop meanwhile). */
  release(): void {
    this.thread.worker.postMessage({ release: true });
  }

  /** Resolves when the server receives `command` (from now on). */
  received(command: string): Promise<void> {
    return this.next((m) => m.command === command);
  }

  close(): Promise<number> {
    return this.thread.close();
  }

  private async ask(m: object): Promise<void> {
    const done = this.next((r) => r.done === true);
    this.thread.worker.postMessage(m);
    await done;
  }

  /** The next message from the server thread that `match`es. */
  private next(match: (m: { command?: string; done?: boolean }) => boolean): Promise<void> {
    const worker = this.thread.worker;
    return new Promise((resolve) => {
      const on = (m: { command?: string; done?: boolean }) => {
        if (!match(m)) return;
        worker.off("message", on);
        resolve();
      };
      worker.on("message", on);
    });
  }
}
