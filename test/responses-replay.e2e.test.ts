// GET /api/v1/responses/{id}?stream=true: a stored response replayed as the Responses events that make it, so the
// openai SDK's retrieve(id, {stream: true}) gets them (it read the stored JSON as an empty stream) and
// responses.stream({response_id, starting_after}) builds the same response (it threw "request ended without
// sending any events"). starting_after counts in the replay's numbering, the same on every replay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateResponseStreamEvent } from "../core/generated/validators.js";

const SANDBOX = testKey("rsp-replay", true);
const GPT = "openai/gpt-4o-mini";
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startTestGateway({
    providers: { real: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-real" } },
    models: { [GPT]: { endpoints: [{ provider: "real", model: "gpt-4o-mini", pricing: { input: "1", output: "1" } }] } },
    projects: { p: { keys: [keyEntry("sandbox", SANDBOX)] } },
  });
  client = new OpenAI({ apiKey: SANDBOX, baseURL: gw.baseURL, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
});

const weather = { type: "function" as const, name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

describe("a stored response replayed as a stream", () => {
  it("retrieve(id, {stream: true}) yields its events, numbered from 0, ending with response.completed carrying it", async () => {
    const created = await client.responses.create({ model: GPT, input: "Tell me about gateways" });
    const events: any[] = [];
    for await (const e of await client.responses.retrieve(created.id, { stream: true })) events.push(e);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    for (const e of events) expect(validateResponseStreamEvent(e), `${e.type}: ${JSON.stringify(validateResponseStreamEvent.errors)}`).toBe(true);
    expect(events[0]).toMatchObject({ type: "response.created", response: { id: created.id, status: "in_progress", output: [] } });
    expect(events.map((e) => e.type)).toContain("response.output_text.delta");
    const text = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(text).toBe(created.output_text);
    const { output_text: _t, ...stored } = await client.responses.retrieve(created.id);
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: stored });
  });

  it("responses.stream({response_id, starting_after}) builds the stored response, a function call included, and emits only later events", async () => {
    const created = await client.responses.create({ model: GPT, input: "What is the weather in Paris?", tools: [weather], tool_choice: "required" });
    expect(created.output.some((i) => i.type === "function_call")).toBe(true);
    const seen: number[] = [];
    const stream = client.responses.stream({ response_id: created.id, starting_after: 2 });
    stream.on("event", (e) => seen.push(e.sequence_number));
    const final = await stream.finalResponse();
    expect(final.output).toMatchObject(created.output);
    expect(final.id).toBe(created.id);
    expect(seen[0]).toBe(3);

    // The server honours starting_after itself too (a raw client resuming a replay).
    const res = await fetch(`${gw.baseURL}/responses/${created.id}?stream=true&starting_after=2`, { headers: { authorization: `Bearer ${SANDBOX}` } });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const first = /data: (.*)/.exec(await res.text())![1]!;
    expect(JSON.parse(first).sequence_number).toBe(3);
  });

  it("a stream or starting_after that is not one is a 400 naming it; stream=false is the JSON", async () => {
    const created = await client.responses.create({ model: GPT, input: "Hi" });
    const get = (q: string) => fetch(`${gw.baseURL}/responses/${created.id}?${q}`, { headers: { authorization: `Bearer ${SANDBOX}` } });
    const bad = await get("stream=yes");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: "INVALID_REQUEST", details: { field: "stream" } });
    const badAfter = await get("stream=true&starting_after=-3");
    expect(badAfter.status).toBe(400);
    expect((await badAfter.json()).error).toMatchObject({ details: { field: "starting_after" } });
    const json = await get("stream=false");
    expect((await json.json()).id).toBe(created.id);
  });
});
