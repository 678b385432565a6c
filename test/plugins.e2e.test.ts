// Third-party plugins load from gateway.yaml through the same interface as the built-in ones.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolve } from "node:path";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("plugins", true);
// Module paths in gateway.yaml are relative to the config file; this one sits next to it.
const CRASHER = `export default { name: "crasher", async handle(ctx, next) { if (JSON.stringify(ctx.body).includes("crash")) throw new Error("boom"); await next(); } };`;
let gw: TestGateway;

beforeAll(async () => {
  const example = resolve("docs/examples/request-tagger.ts");
  gw = await startTestGateway({
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] }, "openai/gpt-4o": { endpoints: [{ provider: "sim", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    plugins: {
      "request-tagger": { module: example, options: { header: "x-team", value: "search", block: ["openai/gpt-4o"] } },
      crasher: { module: "./crasher.mjs" },
    },
    pipeline: ["auth", "request-tagger", "crasher", "router"],
  }, { files: { "crasher.mjs": CRASHER } });
});

afterAll(async () => {
  await gw?.close();
});

describe("third-party plugins", () => {
  it("runs the example plugin: header on the response, short-circuit before the router", async () => {
    const ok = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-team")).toBe("search");
    const blocked = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(blocked.status).toBe(403);
    expect(blocked.json.error.code).toBe("MODEL_NOT_ALLOWED");
    expect(blocked.headers.get("x-team")).toBe("search");
  });

  it("a plugin that throws fails that request with 500 INTERNAL, never the process", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "crash please" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(500);
    expect(r.json.error).toMatchObject({ code: "INTERNAL", message: "Internal gateway error" });
    expect(JSON.stringify(r.json)).not.toContain("boom");
    const after = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(after.status).toBe(200);
  });
});
