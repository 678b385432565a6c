// A third-party plugin whose setup never settles (a license check against a server that never answers) held the
// start for ever before listening, or ended it with exit 13 and nothing said (an unsettled top-level await), and
// held a reload for ever: setup is bounded, and past the bound the config is refused naming the plugin and the bound.
import { afterEach, describe, expect, it, vi } from "vitest";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../config/load.ts";
import { Gateway } from "../gateway.ts";
import { createLogger } from "../log.ts";
import { PluginSetupError } from "./setup-error.ts";
import { writePluginConfig } from "../../test/helpers/plugin-config.ts";
import { settleWithin } from "./setup-bound.ts";
import { AnsweringThread, holdLoop } from "../busy-loop.testkit.ts";

const dir = mkdtempSync(join(tmpdir(), "mg-setup-bound-"));
const hang = join(dir, "hang");
// Its setup never settles while the file "hang" exists; its teardown notes each state it is given.
writeFileSync(join(dir, "licensed.mjs"), `import { existsSync, appendFileSync } from "node:fs";
export default { name: "licensed",
  setup() { return existsSync(${JSON.stringify(hang)}) ? new Promise(() => {}) : { licensed: true }; },
  teardown(state) { appendFileSync(${JSON.stringify(join(dir, "teardowns"))}, JSON.stringify(state) + "\\n"); },
  handle: (ctx, next) => next() };
`);
const file = writePluginConfig(join(dir, "gateway.yaml"), { licensed: { module: join(dir, "licensed.mjs") } }, ["auth", "licensed", "router"]);

const opts = { logger: createLogger("silent"), pluginSetupTimeoutMs: 200 };
let gw: Gateway | undefined;
afterEach(async () => {
  rmSync(hang, { force: true });
  await gw?.close();
  gw = undefined;
});

describe("a plugin setup that never settles", () => {
  it("refuses the start, naming the plugin and the bound", async () => {
    writeFileSync(hang, "");
    const started = Gateway.create(await loadConfig(file), opts);
    const err = await started.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(PluginSetupError);
    expect((err as Error).message).toBe("plugin licensed setup failed: did not finish within 0.2 s (a setup must settle; give what it waits on a timeout of its own)");
  }, 20_000);

  it("refuses a reload the same way, and the config it had keeps serving", async () => {
    gw = await Gateway.create(await loadConfig(file), opts);
    writeFileSync(hang, "");
    const r = await gw.reload(file);
    expect(r).toEqual({ ok: false, problems: ["setting up the new config failed: plugin licensed setup failed: did not finish within 0.2 s (a setup must settle; give what it waits on a timeout of its own)"] });
    expect(gw.lastReload).toMatchObject({ ok: false });
    expect(existsSync(join(dir, "teardowns"))).toBe(false); // the serving config's plugin is not torn down
  }, 20_000);
});

/** A thread answering each message with itself, as the server a setup's license check calls answers it. */
const ECHO = `const { parentPort, workerData } = require("node:worker_threads");
parentPort.on("message", (m) => { parentPort.postMessage(m); answered(workerData); });`;

describe("a plugin setup answered while the event loop was busy past the bound", () => {
  it("is the setup's state, not a refused config (and it is not handed back as late)", async () => {
    const server = new AnsweringThread(ECHO);
    try {
      server.worker.postMessage("warm up");
      await server.message(); // the thread is running
      await new Promise((r) => setImmediate(r)); // off the port's own callback, as a start or a reload is
      const late = vi.fn();
      const answer = server.message<string>();
      const t0 = performance.now();
      const setup = settleWithin(answer, 100, late);
      const seen = server.answers();
      server.worker.postMessage("licensed");
      holdLoop(t0, 250, { thread: server, seen }); // the answer is waiting in the port, the bound long past
      await expect(setup).resolves.toBe("licensed");
      expect(late).not.toHaveBeenCalled();
    } finally {
      await server.close();
    }
  });
});
