// An edit written while the gateway starts — after its config was read, before its watch began (a plugin's import or
// setup, the store's connect, listening: seconds on a large config) — is reloaded once it listens. A watch that took
// its baseline from the disk when it began took that edit for what was serving: the process served the old config
// until the next edit (in a cluster, a replacement worker 404ed a model the others served, or said "ok" where they
// said reload_refused).
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { startGateway, type RunningGateway } from "../core/server.ts";
import { builtins } from "../core/builtins.ts";
import { createLogger } from "../core/log.ts";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { until } from "./helpers/until.ts";

const KEY = testKey("duringstart", true);
const model = { endpoints: [{ provider: "sim", model: "m" }] };

let running: RunningGateway | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe("config watch: an edit made while the gateway starts", () => {
  it("is reloaded once the gateway listens, where it was never seen", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-watch-start-"));
    const begun = join(dir, "import-begun"), go = join(dir, "go");
    // A plugin whose import holds the start until the test says go: the config has been read by then.
    writeFileSync(join(dir, "slow.mjs"), `import { existsSync, writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify(begun)}, "");
while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 20));
export default { name: "slow", async handle(ctx, next) { await next(); } };
`);
    const file = join(dir, "gateway.yaml");
    const config = {
      models: { "a/old": model } as Record<string, unknown>,
      projects: { p: { keys: [keyEntry("k", KEY)] } },
      plugins: { slow: { module: join(dir, "slow.mjs") } },
      pipeline: ["auth", "slow", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
    };
    writeFileSync(file, YAML.stringify(config));
    const starting = startGateway({ configFile: file, port: 0, host: "127.0.0.1", logger: createLogger("silent"), watch: true });
    await until("the plugin's import to begin", async () => existsSync(begun) || undefined, 20_000);
    config.models["a/new"] = model;
    writeFileSync(file, YAML.stringify(config));
    writeFileSync(go, "");
    running = await starting;
    const url = running.url;
    const status = async (m: string) =>
      (await postJson(`${url}/api/v1/chat/completions`, { model: m, messages: [{ role: "user", content: "hi" }], max_tokens: 1 }, { authorization: `Bearer ${KEY}` })).status;
    // Written just now, so it waits for the watch's quiet time (2 s) like any edit; then it is served.
    await until("the edit to be served", async () => (await status("a/new")) === 200 || undefined, 10_000);
    expect(await status("a/old")).toBe(200);
  }, 40_000);
});
