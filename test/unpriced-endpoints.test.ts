// An endpoint without pricing bills $0, so its traffic escapes every budget: each load says so — `model-gateway
// check` prints it as a note, a running gateway logs it at start and at each reload — and the override docs/providers.md
// shows for a catalog model is the whole entry, its prices with it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { commands } from "../core/cli.ts";
import { loadConfig } from "../core/config/load.ts";
import { startGateway, type RunningGateway } from "../core/server.ts";
import { captureLogger } from "./helpers/log-capture.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");

/** The shipped gateway.yaml (its catalog by absolute path, a memory store, no metrics listener) with these models. */
function shipped(models: Record<string, unknown>): string {
  const config = YAML.parse(read("gateway.yaml"));
  config.include = (config.include as string[]).map((f) => resolve(ROOT, f));
  config.store = { kind: "memory" };
  config.metrics = { listener: false };
  config.models = models;
  const file = join(mkdtempSync(join(tmpdir(), "mg-unpriced-")), "gateway.yaml");
  writeFileSync(file, YAML.stringify(config));
  return file;
}

const GROK_NOTICE = 'model xai/grok-4.20: endpoint xai/grok-4.20-0309-reasoning has no pricing, so its requests cost $0 and no budget limits them' +
  ' (give pricing, or pricing: { input: "0", output: "0" } for a free model)';
/** What the docs used to suggest: an override of the catalog's xai/grok-4.20 that replaces it, prices and all. */
const BARE_GROK = { "xai/grok-4.20": { endpoints: [{ provider: "xai", model: "grok-4.20-0309-reasoning", reasoning_effort: false }] } };

let running: RunningGateway | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await running?.close();
  running = undefined;
});

describe("an endpoint without pricing", () => {
  it("is a note of model-gateway check (which still passes)", async () => {
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((s) => (err.push(String(s)), true));
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(await commands.check!([shipped(BARE_GROK)])).toBe(0);
    expect(err).toContain(`note: ${GROK_NOTICE}\n`);
    expect(err.filter((l) => l.includes("has no pricing"))).toHaveLength(1);
  });

  it("is logged by the running gateway at start and again at each reload", async () => {
    const file = shipped(BARE_GROK);
    const { logger, log } = captureLogger("info");
    running = await startGateway({ configFile: file, port: 0, host: "127.0.0.1", logger });
    const said = () => log.records().filter((r) => r.msg === GROK_NOTICE);
    expect(said()).toHaveLength(1);
    expect((await running.gateway.reload(file)).ok).toBe(true);
    expect(said()).toHaveLength(2);
  });

  it("is not what docs/providers.md's grok-4.20 override makes: that is the catalog's whole entry", async () => {
    const doc = read("docs/providers.md");
    const at = doc.indexOf("**Models that reason but take no effort.**");
    const block = /```yaml\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
    const override = YAML.parse(block).models;
    const catalog = YAML.parse(read("catalog/models.yaml")).models;
    expect(override).toEqual({ "xai/grok-4.20": catalog["xai/grok-4.20"] });
    const notices: string[] = [];
    const cfg = await loadConfig(shipped(override), { env: { XAI_API_KEY: "xai-test" }, onNotice: (m) => notices.push(m) });
    expect(notices.filter((m) => m.includes("has no pricing"))).toEqual([]);
    expect(cfg.models.get("xai/grok-4.20")!.endpoints[0]).toMatchObject({ provider: "xai", contextWindow: 1000000, acceptsReasoningEffort: false,
      pricing: { input: "0.00000125", output: "0.0000025", input_cache_read: "0.0000002" } });
  });
});
