// reasoning_effort "none" (a chat client's "thinking off"; a Responses client's reasoning.effort likewise) on Gemini
// 2.5 Pro, which always thinks: Google refuses thinkingBudget 0 there with a 400, which the client used to get. The
// fake Gemini refuses it as Google does; the gateway now sends the model's least budget (128) and names the knob.
// A Messages client's thinking {type: "disabled"} is the same "off" (Flash, which thinks when asked nothing, used to
// get no thinkingConfig and think anyway).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";

const KEY = testKey("gemini-pro-thinking-off");
let gemini: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  gemini = await startFakeGemini();
  const model = (upstream: string) => ({ type: "language", max_tokens: 65536, tags: ["reasoning"], endpoints: [{ provider: "gem", model: upstream, pricing: { input: "0.000001", output: "0.00001" } }] });
  gw = await startTestGateway({
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: { "google/gemini-2.5-pro": model("gemini-2.5-pro"), "google/gemini-2.5-flash": model("gemini-2.5-flash") },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
});

const ask = (model: string) =>
  postJson(`${gw.baseURL}/chat/completions`, { model, reasoning_effort: "none", messages: [{ role: "user", content: "Hi" }] }, { authorization: `Bearer ${KEY}` });

describe("reasoning_effort none on Gemini", () => {
  it("2.5 Pro answers: it gets its least thinking budget, and reasoning_effort is named", async () => {
    const r = await ask("google/gemini-2.5-pro");
    expect(r.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 128 });
    expect(r.headers.get("x-mg-dropped-params")?.split(",")).toContain("reasoning_effort");
  });

  it("2.5 Flash turns thinking off (budget 0), nothing named", async () => {
    const r = await ask("google/gemini-2.5-flash");
    expect(r.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect(r.headers.get("x-mg-dropped-params")).toBeNull();
  });
});

const user = { authorization: `Bearer ${KEY}` };
const thinkingOff = (model: string) =>
  postJson(`${gw.baseURL}/messages`, { model, max_tokens: 1000, thinking: { type: "disabled" }, messages: [{ role: "user", content: "Hi" }] }, user);

describe("a Messages client's thinking disabled on Gemini", () => {
  it("2.5 Flash turns thinking off (budget 0), nothing named", async () => {
    const r = await thinkingOff("google/gemini-2.5-flash");
    expect(r.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.generationConfig).toEqual({ maxOutputTokens: 1000, thinkingConfig: { thinkingBudget: 0 } });
    expect(r.headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("2.5 Pro answers: it gets its least thinking budget, and thinking is named", async () => {
    const r = await thinkingOff("google/gemini-2.5-pro");
    expect(r.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 128 });
    expect(r.headers.get("x-mg-dropped-params")?.split(",")).toEqual(["thinking"]);
  });
});

describe("a Responses client's reasoning.effort none on Gemini", () => {
  it("2.5 Flash turns thinking off (budget 0); 2.5 Pro gets its least budget, reasoning.effort named", async () => {
    const off = (model: string) => postJson(`${gw.baseURL}/responses`, { model, input: "Hi", reasoning: { effort: "none" } }, user);
    const flash = await off("google/gemini-2.5-flash");
    expect(flash.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect(flash.headers.get("x-mg-dropped-params")).toBeNull();
    const pro = await off("google/gemini-2.5-pro");
    expect(pro.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 128 });
    expect(pro.headers.get("x-mg-dropped-params")?.split(",")).toEqual(["reasoning.effort"]);
  });
});
