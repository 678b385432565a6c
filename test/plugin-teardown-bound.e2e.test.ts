// A third-party plugin whose teardown never settles (`await client.quit()` on a connection to a server gone: a pending
// promise with a live handle) no longer holds the gateway: a reload tears the old instance down within the bound and
// goes on, and SIGTERM shuts down ("shutdown complete", exit 0) a few seconds later, naming the plugin each time.
// Before: after SIGTERM the process stayed up, silent, until SIGKILL (a pod's whole grace period).
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { writePluginConfig } from "./helpers/plugin-config.ts";
import { PLUGIN_TEARDOWN_TIMEOUT_MS } from "../core/pipeline/teardown-bound.ts";

const dir = mkdtempSync(join(tmpdir(), "mg-teardown-"));
writeFileSync(join(dir, "td.mjs"), `export default {
  name: "td",
  setup(gateway, options) { return options; },
  teardown(state) { if (state.mode === "hang") return new Promise(() => { setInterval(() => {}, 1000); }); },
  handle: (ctx, next) => next(),
};
`);
for (const n of [1, 2, 3]) {
  writeFileSync(join(dir, `hang${n}.mjs`), `export default {
  name: "hang${n}",
  teardown() { return new Promise(() => { setInterval(() => {}, 1000); }); },
  handle: (ctx, next) => next(),
};
`);
}
const file = join(dir, "gateway.yaml");
const config = (mode: string) => writePluginConfig(file, { td: { module: join(dir, "td.mjs"), options: { mode } } }, ["auth", "td", "router"]);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

describe("a plugin teardown that never settles", () => {
  it("is left behind after the bound, named, at a reload and at SIGTERM, which then completes", async () => {
    config("hang");
    let child: ChildGateway | undefined;
    try {
      child = await startChildGateway(file, { LOG_LEVEL: "info" });
      const c = child;
      const cutOff = () => c.output().split("\n").filter((l) => l.includes("plugin td teardown did not finish within") && l.includes('"plugin":"td"'));

      // Reload: the old instance's teardown hangs; the new config serves at once, the old one is let go after the bound.
      config("calm");
      c.proc.kill("SIGHUP");
      await until("the reload", () => c.output().includes("config reloaded"), 10_000);
      await until("the reload's teardown to be cut off", () => cutOff().length === 1, PLUGIN_TEARDOWN_TIMEOUT_MS + 5_000);

      // Back to the hanging mode, then SIGTERM: the serving instance's teardown hangs; the shutdown completes anyway.
      config("hang");
      c.proc.kill("SIGHUP");
      await until("the second reload", () => c.output().split("config reloaded").length === 3, 10_000);
      const exited = new Promise<number | null>((r) => c.proc.once("exit", (code) => r(code)));
      const t0 = Date.now();
      c.proc.kill("SIGTERM");
      const code = await Promise.race([exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), PLUGIN_TEARDOWN_TIMEOUT_MS + 10_000))]);
      expect(code).toBe(0);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(PLUGIN_TEARDOWN_TIMEOUT_MS - 500);
      expect(cutOff()).toHaveLength(2);
      expect(c.output()).toContain("shutdown complete");
    } finally {
      await child?.kill9();
    }
  }, 60_000);

  it("three that hang (one dead Redis under all of them) cost one bound at SIGTERM, not three, each named", async () => {
    const three = join(dir, "three.yaml");
    const names = ["hang1", "hang2", "hang3"];
    writePluginConfig(three, Object.fromEntries(names.map((n) => [n, { module: join(dir, `${n}.mjs`) }])), ["auth", ...names, "router"]);
    let child: ChildGateway | undefined;
    try {
      child = await startChildGateway(three, { LOG_LEVEL: "info" });
      const c = child;
      const exited = new Promise<number | null>((r) => c.proc.once("exit", (code) => r(code)));
      const t0 = Date.now();
      c.proc.kill("SIGTERM");
      const code = await Promise.race([exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 4 * PLUGIN_TEARDOWN_TIMEOUT_MS))]);
      const took = Date.now() - t0;
      expect(code).toBe(0);
      expect(took).toBeLessThan(2 * PLUGIN_TEARDOWN_TIMEOUT_MS); // one after another they took 3 × 5 s
      for (const n of names) expect(c.output()).toContain(`plugin ${n} teardown did not finish within 5 s; going on without it`);
      expect(c.output()).toContain("shutdown complete");
    } finally {
      await child?.kill9();
    }
  }, 60_000);
});
