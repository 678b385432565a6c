// A catalog endpoint with `retires: YYYY-MM-DD` (the shipped catalog: Claude Sonnet 4.5 on the Claude API, 2026-11-30)
// takes requests until the day before; from 00:00 UTC that day the gateway sends it none: a model with another
// configured endpoint is served there, one with none left is a 404 naming the day and the replacement, and the
// catalog stops listing what retired. Before the day, `model-gateway check` and the start log say it is coming.
// The wall clock is vitest's fake Date (advancing with real time), set on either side of the day.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { commands } from "../core/cli.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const DAY = Date.UTC(2026, 10, 30); // Sonnet 4.5's retirement on the Claude API
const SANDBOX = testKey("retire-sandbox", true);
/** No rate limits or budget: the tests move the clock back and forth across the day. */
const KEY = testKey("retire");
const auth = (key = KEY) => ({ authorization: `Bearer ${key}` });
const chat = (model: string) => ({ model, max_tokens: 16, messages: [{ role: "user", content: "Hi" }] });

/** Operator entries beside the shipped catalog: one model on a retiring endpoint only, one that also runs on openai. */
const OWN_MODELS = {
  "acme/gone": { endpoints: [{ provider: "anthropic", model: "claude-old", retires: "2026-11-30", replacement: "anthropic/claude-sonnet-4.6", pricing: { input: "0.000003", output: "0.000015" } }] },
  "acme/dual": { endpoints: [
    { provider: "anthropic", model: "claude-old", retires: "2026-11-30", pricing: { input: "0.000003", output: "0.000015" } },
    { provider: "openai", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } },
  ] },
};

/** The README's own image and video entries (its yaml block naming acme/image), as a reader pastes them. */
function readmeOwnModels(): Record<string, any> {
  const readme = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "README.md"), "utf8");
  const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes("acme/image:"));
  return YAML.parse(block!).models;
}

let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl }, { retirements: "as shipped" });
  Object.assign(config.models ??= {}, OWN_MODELS, readmeOwnModels());
  config.projects.sandbox = { keys: [keyEntry("sandbox", SANDBOX)] };
  config.projects.retire = { keys: [keyEntry("retire", KEY)] };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});

const at = (now: number) => vi.useFakeTimers({ toFake: ["Date"], now, shouldAdvanceTime: true });
const get = async (path: string, key = KEY) => {
  const res = await fetch(`${gw.baseURL}${path}`, { headers: auth(key) });
  return { status: res.status, json: await res.json() as any };
};
const upstreamModels = () => anthropic.requests.map((r) => r.body?.model);

describe("a retiring endpoint on the shipped config (only the Claude API and OpenAI keys set)", () => {
  it("the day before (23:59 UTC), Sonnet 4.5 is still sent to the Claude API", async () => {
    at(DAY - 60_000);
    anthropic.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat("anthropic/claude-sonnet-4.5"), auth());
    expect(r.status).toBe(200);
    expect(upstreamModels()).toEqual(["claude-sonnet-4-5-20250929"]);
  });

  it("from 00:00 UTC that day, Sonnet 4.5 (no other configured endpoint) is a 404 naming the day and the replacement, with no upstream call", async () => {
    at(DAY + 1_000);
    anthropic.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat("anthropic/claude-sonnet-4.5"), auth());
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("MODEL_NOT_FOUND");
    expect(r.json.error.message).toContain("anthropic/claude-sonnet-4.5");
    expect(r.json.error.message).toContain("retired on 2026-11-30");
    expect(r.json.error.message).toContain("anthropic/claude-sonnet-4.6");
    expect(r.json.error.details).toMatchObject({ retired: "2026-11-30", replacement: "anthropic/claude-sonnet-4.6" });
    expect(upstreamModels()).toEqual([]);
    // The replacement it names answers.
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat("anthropic/claude-sonnet-4.6"), auth())).status).toBe(200);
    expect(upstreamModels()).toEqual(["claude-sonnet-4-6"]);
  });

  it("from that day a model with another configured endpoint is served by it", async () => {
    at(DAY - 60_000);
    anthropic.requests.length = 0;
    openai.requests.length = 0;
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat("acme/dual"), auth())).status).toBe(200);
    expect(upstreamModels()).toEqual(["claude-old"]);
    expect(openai.requests).toHaveLength(0);
    vi.setSystemTime(DAY);
    anthropic.requests.length = 0;
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat("acme/dual"), auth())).status).toBe(200);
    expect(upstreamModels()).toEqual([]);
    expect(openai.requests.map((r) => r.body?.model)).toEqual(["gpt-4o-mini"]);
  });

  it("the catalog stops listing the retired endpoint, and a model with none left, whatever the key", async () => {
    at(DAY - 60_000);
    expect((await get("/models/acme/dual/endpoints")).json.data.endpoints.map((e: any) => e.provider_name)).toEqual(["anthropic", "openai"]);
    expect((await get("/models")).json.data.map((m: any) => m.id)).toContain("acme/gone");
    vi.setSystemTime(DAY);
    expect((await get("/models/acme/dual/endpoints")).json.data.endpoints.map((e: any) => e.provider_name)).toEqual(["openai"]);
    expect((await get("/models/acme/dual")).json.providers).toEqual(["openai"]);
    const ids = (await get("/models")).json.data.map((m: any) => m.id);
    expect(ids).not.toContain("acme/gone");
    expect(ids).toContain("anthropic/claude-sonnet-4.5"); // still on Vertex AI and Bedrock
    const gone = await get("/models/acme/gone");
    expect(gone.status).toBe(404);
    expect(gone.json.error.message).toContain("retired on 2026-11-30");
    const sandbox = await postJson(`${gw.baseURL}/chat/completions`, chat("acme/gone"), auth(SANDBOX));
    expect(sandbox.status).toBe(404);
    expect(sandbox.json.error.message).toContain("use anthropic/claude-sonnet-4.6 instead");
    // A sandbox key still reaches a model whose other endpoints remain.
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat("anthropic/claude-sonnet-4.5"), auth(SANDBOX))).status).toBe(200);
  });
});

describe("OpenAI's shutdowns on the shipped config (the openai provider is a model's only endpoint)", () => {
  const GPT5_DAY = Date.UTC(2026, 11, 11);
  const upstreamOpenAI = () => openai.requests.map((r) => r.body?.model);

  it("openai/gpt-5 is sent to OpenAI until 23:59 UTC on 2026-12-10, then is a 404 naming 2026-12-11, for a sandbox key too", async () => {
    at(GPT5_DAY - 60_000);
    openai.requests.length = 0;
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-5"), auth())).status).toBe(200);
    expect(upstreamOpenAI()).toEqual(["gpt-5"]);
    vi.setSystemTime(GPT5_DAY + 1_000);
    openai.requests.length = 0;
    for (const key of [KEY, SANDBOX]) {
      const r = await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-5"), auth(key));
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe("MODEL_NOT_FOUND");
      expect(r.json.error.message).toContain("was retired on 2026-12-11 by openai (gpt-5)");
    }
    expect(upstreamOpenAI()).toEqual([]);
    expect((await get("/models")).json.data.map((m: any) => m.id)).not.toContain("openai/gpt-5");
  });

  it("openai/gpt-image-1 (shut down 2026-10-23) is a 404 for a sandbox key, and the README's image model answers it", async () => {
    at(Date.UTC(2026, 10, 28, 12));
    const body = { prompt: "a lighthouse at dusk", response_format: "url" };
    const gone = await postJson(`${gw.baseURL}/images/generations`, { model: "openai/gpt-image-1", ...body }, auth(SANDBOX));
    expect(gone.status).toBe(404);
    expect(gone.json.error.message).toContain("retired on 2026-10-23");
    const served = await postJson(`${gw.baseURL}/images/generations`, { model: "acme/image", ...body }, auth(SANDBOX));
    expect(served.status).toBe(200);
    expect(served.json.data).toHaveLength(1);
  });
});

describe("Google's shutdowns on the shipped config", () => {
  it("google/imagen-4 is served until 23:59 UTC on 2026-08-16, then is a 404 naming 2026-08-17, for a sandbox key too", async () => {
    const body = { model: "google/imagen-4", prompt: "a lighthouse at dusk" };
    at(Date.UTC(2026, 7, 17) - 60_000);
    expect((await postJson(`${gw.baseURL}/images/generations`, body, auth(SANDBOX))).status).toBe(200);
    vi.setSystemTime(Date.UTC(2026, 7, 17) + 1_000);
    const r = await postJson(`${gw.baseURL}/images/generations`, body, auth(SANDBOX));
    expect(r.status).toBe(404);
    expect(r.json.error.message).toContain("was retired on 2026-08-17 by gemini (imagen-4.0-generate-001)");
  });

  it("google/veo-3 and veo-3-fast are a 404 naming 2026-06-30 from that day, and the README's own video model is listed", async () => {
    at(Date.UTC(2026, 5, 30) + 1_000);
    for (const [model, upstream] of [["google/veo-3", "veo-3.0-generate-001"], ["google/veo-3-fast", "veo-3.0-fast-generate-001"]]) {
      const r = await postJson(`${gw.baseURL}/videos`, { model, prompt: "waves", duration: 8 }, auth(SANDBOX));
      expect(r.status, model).toBe(404);
      expect(r.json.error.message).toContain(`was retired on 2026-06-30 by gemini (${upstream})`);
    }
    const listed = (await get("/models")).json.data.map((m: any) => m.id);
    expect(listed).not.toContain("google/veo-3");
    expect(listed).toContain("acme/video");
  });
});

describe("model-gateway check before the day", () => {
  /** The shipped gateway.yaml (catalog by absolute path, memory store) with an operator's own entry on the same id. */
  function shippedFile(): string {
    const config = shippedConfig({ openai: "http://127.0.0.1:9", anthropic: "http://127.0.0.1:9" }, { retirements: "as shipped" });
    config.store = { kind: "memory" };
    config.metrics = { listener: false };
    config.models = { "acme/sonnet": { endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5-20250929", pricing: { input: "0.000003", output: "0.000015" } }] } };
    const file = join(mkdtempSync(join(tmpdir(), "mg-retire-")), "gateway.yaml");
    writeFileSync(file, YAML.stringify(config));
    return file;
  }
  async function notes(now: number, env: Record<string, string>): Promise<string[]> {
    at(now);
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((s) => (err.push(String(s)), true));
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      expect(await commands.check!([shippedFile()])).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }
    return err.filter((l) => l.includes("retir"));
  }

  it("names Sonnet 4.5's Claude API endpoint and its date two days before, and the operator's entry on the same id", async () => {
    const said = await notes(Date.UTC(2026, 10, 28, 9), { ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: "" });
    expect(said).toContain("note: model anthropic/claude-sonnet-4.5: endpoint anthropic/claude-sonnet-4-5-20250929 retires on 2026-11-30 (in 2 days);" +
      " from then the gateway sends it no requests, and anthropic/claude-sonnet-4.5 has no other configured endpoint; suggested replacement: anthropic/claude-sonnet-4.6\n");
    expect(said.some((l) => l.startsWith("note: model acme/sonnet: endpoint anthropic/claude-sonnet-4-5-20250929 is the upstream id anthropic/claude-sonnet-4.5 marks as retiring on 2026-11-30"))).toBe(true);
    expect(said).toHaveLength(2);
  });

  it("says nothing more than 30 days before, nor for a provider that is not configured", async () => {
    expect(await notes(Date.UTC(2026, 9, 30), { ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: "" })).toEqual([]);
    expect(await notes(Date.UTC(2026, 10, 28, 9), { ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" })).toEqual([]);
  });

  it("with an OpenAI key, names each OpenAI endpoint shutting down on 2026-12-11, and none already shut down", async () => {
    const said = await notes(Date.UTC(2026, 10, 28, 9), { ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "sk-test" });
    for (const id of ["gpt-5", "gpt-5-mini", "gpt-5-nano", "o3"]) {
      expect(said).toContain(`note: model openai/${id}: endpoint openai/${id} retires on 2026-12-11 (in 13 days);` +
        ` from then the gateway sends it no requests, and openai/${id} has no other configured endpoint\n`);
    }
    expect(said).toHaveLength(4);
  });
});
