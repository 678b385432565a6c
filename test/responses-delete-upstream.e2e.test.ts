// DELETE /v1/responses/{id} of a response served natively (the upstream's own /responses, which keeps a copy): the
// delete reaches that upstream too, with the credentials that made it (the project's own key when it has one); while
// the upstream fails, the answer is a 502 and the gateway keeps its record, so a retry deletes both; an upstream
// that no longer holds it is no obstacle. A translated response's delete calls no upstream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI } from "./upstreams/openai.ts";
import { serveResponses, startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("respdelete");
const OWN = testKey("respdeleteown");
const BYOK_KEY = "sk-project-own-7f3a";
const pricing = { input: "0.000001", output: "0.000002" };
let up: FakeOpenAIWithResponses;
let own: FakeOpenAIWithResponses;
/** Authorization headers the project's own upstream saw. */
const ownAuth: string[] = [];
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  up = await startFakeOpenAIResponses();
  // The project's own upstream takes the project's key (the fake knows its one key: swap it in).
  const fake = await startFakeOpenAI();
  fake.hook = (req) => {
    const auth = String(req.headers.authorization);
    ownAuth.push(`${req.method} ${auth}`);
    if (auth === `Bearer ${BYOK_KEY}`) req.headers.authorization = "Bearer sk-fake-upstream";
    return false;
  };
  own = Object.assign(fake, { responses: serveResponses(fake) });
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      native: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" },
      // No key of the gateway's: only a project's own key reaches it.
      mine: { protocol: "openai", base_url: own.baseUrl, api_key: "${MINE_UNSET}" },
      chat: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "t/native": { type: "language", endpoints: [{ provider: "native", model: "gpt-4o-mini", native_responses: true, pricing }] },
      "t/mine": { type: "language", endpoints: [{ provider: "mine", model: "gpt-4o-mini", native_responses: true, pricing }] },
      "t/chat": { type: "language", endpoints: [{ provider: "chat", model: "gpt-4o-mini", pricing }] },
    },
    projects: {
      p: { keys: [keyEntry("k", KEY)] },
      o: { keys: [keyEntry("k", OWN)], providers: { mine: { api_key: BYOK_KEY } } },
    },
  }, { env: { MINE_UNSET: "" } });
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([up?.close(), own?.close()]);
});

const deletes = (fake: FakeOpenAIWithResponses) => fake.requests.filter((r) => r.method === "DELETE").map((r) => r.path);

describe("DELETE /v1/responses/{id} of a natively served response", () => {
  it("deletes the upstream's copy too", async () => {
    const r = await client.responses.create({ model: "t/native", input: "Something private" });
    expect(up.responses.stored.has(r.id)).toBe(true);
    await client.responses.delete(r.id);
    expect(deletes(up)).toContain(`/v1/responses/${r.id}`);
    expect(up.responses.stored.has(r.id)).toBe(false);
    expect(await client.responses.retrieve(r.id).catch((e) => e.status)).toBe(404);
  });

  it("the upstream failing: a 502, both copies kept; the retry deletes both", async () => {
    const r = await client.responses.create({ model: "t/native", input: "Something private" });
    up.failures.push({ kind: "status", status: 500 });
    const err = await client.responses.delete(r.id).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(502);
    expect(err.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { response_id: r.id, provider: "native" } });
    expect(err.error.message).toContain("was not deleted");
    expect(up.responses.stored.has(r.id)).toBe(true);
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);

    await client.responses.delete(r.id);
    expect(up.responses.stored.has(r.id)).toBe(false);
    expect(await client.responses.retrieve(r.id).catch((e) => e.status)).toBe(404);
  });

  it("an upstream that no longer holds it: the gateway's record is deleted", async () => {
    const r = await client.responses.create({ model: "t/native", input: "Something private" });
    up.responses.stored.delete(r.id);
    await client.responses.delete(r.id);
    expect(await client.responses.retrieve(r.id).catch((e) => e.status)).toBe(404);
  });

  it("made with the project's own key: deleted with that key", async () => {
    const mine = new OpenAI({ apiKey: OWN, baseURL: gw.baseURL, maxRetries: 0 });
    const r = await mine.responses.create({ model: "t/mine", input: "Something private" });
    expect(own.responses.stored.has(r.id)).toBe(true);
    await mine.responses.delete(r.id);
    expect(own.responses.stored.has(r.id)).toBe(false);
    expect(ownAuth.filter((a) => a.startsWith("DELETE"))).toEqual([`DELETE Bearer ${BYOK_KEY}`]);
  });

  it("a translated response: no upstream call", async () => {
    const r = await client.responses.create({ model: "t/chat", input: "Something private" });
    const before = up.requests.length;
    await client.responses.delete(r.id);
    expect(up.requests.length).toBe(before);
    expect(await client.responses.retrieve(r.id).catch((e) => e.status)).toBe(404);
  });
});
