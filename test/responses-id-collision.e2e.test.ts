// A native Responses upstream that gives one project's response an id another project's stored response already
// has (it repeats ids, or a project's own upstream picks one on purpose): the other project's record stays as it
// was, and the new answer says store: false — not a 200 claiming it was stored while GET and previous_response_id of
// it are 404. Nothing in the answer says whose the id is.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import type { RunningGateway } from "../core/server.ts";

const ALPHA = testKey("id-clash-alpha");
const BETA = testKey("id-clash-beta");
const REPEATED = "resp_repeated_by_upstream";

/** The upstream's answer: always the same response id, the text naming what was asked. */
function repeatingIds(fake: FakeOpenAI): void {
  fake.hook = (rec, res) => {
    if (rec.method !== "POST" || rec.path !== "/v1/responses") return false;
    const text = `answer to ${String(rec.body?.input)}`;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id: REPEATED, object: "response", created_at: 1770000000, status: "completed", model: rec.body?.model, store: true,
      output: [{ id: "msg_repeated", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }],
      usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
    }));
    return true;
  };
}

describe.each(["memory", "sqlite"])("a response id another project stored (%s store)", (kind) => {
  let fake: FakeOpenAI;
  let gw: RunningGateway;
  let log: CapturedLog;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    repeatingIds(fake);
    ({ gw, log } = await startLoggedGateway({
      store: kind === "memory" ? { kind } : { kind, path: "./gateway.db" },
      providers: { native: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" } },
      models: { "openai/gpt-5": { type: "language", endpoints: [{ provider: "native", model: "gpt-5", native_responses: true, pricing: { input: "0.000001", output: "0.000002" } }] } },
      projects: { alpha: { keys: [keyEntry("ci", ALPHA)] }, beta: { keys: [keyEntry("ci", BETA)] } },
    }, {}, "info"));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const create = (key: string, body: Record<string, unknown>) =>
    postJson(`${gw.url}/api/v1/responses`, { model: "openai/gpt-5", store: true, ...body }, { authorization: `Bearer ${key}` });
  const retrieve = async (key: string, id: string) => {
    const res = await fetch(`${gw.url}/api/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, json: (await res.json()) as any };
  };

  it("the second project's answer says store: false; the first project's record is untouched; nothing names it", async () => {
    const first = await create(ALPHA, { input: "alpha" });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ id: REPEATED, store: true });

    const second = await create(BETA, { input: "beta" });
    expect(second.status).toBe(200);
    expect(second.json.id).toBe(REPEATED);
    expect(second.json.output[0].content[0].text).toBe("answer to beta"); // served, billed: only not kept
    expect(second.json.store).toBe(false);
    expect(second.text).not.toContain("alpha");

    // As it said: beta has nothing stored under that id, a 404 like any unknown id; alpha's record is as it was.
    expect((await retrieve(BETA, REPEATED)).status).toBe(404);
    const kept = await retrieve(ALPHA, REPEATED);
    expect(kept.status).toBe(200);
    expect(kept.json.output[0].content[0].text).toBe("answer to alpha");
    const continued = await create(ALPHA, { input: "again", previous_response_id: REPEATED, store: false });
    expect(continued.status).toBe(200);

    // The operator is told, at warn, with the request it came from.
    const warned = log.records().filter((r) => r.level === 40 && /another project's or kind of key's stored response/.test(r.msg));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ response: REPEATED, project: "beta" });
  });
});
