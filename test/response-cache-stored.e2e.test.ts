// The response cache never replays a Responses API answer whose stored state is gone. Before the fix, a request with
// cache: true that made resp_X, then DELETE resp_X, then the same request again, got resp_X back (x-mg-cache: hit) — an
// id that could then be neither retrieved nor continued; and a cached continuation of a deleted response was still a
// 200. Now such a request goes on as a miss: a new, stored response, or the 404 it gets without the cache.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_KEY, CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

let openai: FakeOpenAI;
let cohere: Reranker;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  cohere = await startFakeCohere();
  const dir = mkdtempSync(join(tmpdir(), "mg-cache-stored-"));
  gw = await startTestGateway(cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir }));
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
});

const auth = { authorization: `Bearer ${CACHE_KEY}` };

interface Sent { status: number; cache: string | null; id: string | undefined }

/** POST /responses; the id from the JSON body or, for a stream, from its response.created event. */
async function create(body: Record<string, unknown>): Promise<Sent> {
  const res = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify(body) });
  const text = await res.text();
  const id = body.stream ? /"response":\{"id":"([^"]+)"/.exec(text)?.[1] : JSON.parse(text).id;
  return { status: res.status, cache: res.headers.get("x-mg-cache"), id };
}

const call = (method: string, id: string) => fetch(`${gw.url}/api/v1/responses/${id}`, { method, headers: auth }).then((r) => r.status);
const ask = (input: string, extra: Record<string, unknown> = {}) => ({ model: CHAT_MODEL, input, max_output_tokens: 20, ...optIn(), ...extra });

describe("a deleted stored response is never replayed", () => {
  it.each([
    { name: "JSON", stream: false },
    { name: "streamed", stream: true },
  ])("$name: after DELETE the same request makes a new response, retrievable", async ({ stream }) => {
    const body = ask(`delete me (${stream})`, stream ? { stream: true } : {});
    const first = await create(body);
    expect(first).toMatchObject({ status: 200, cache: "miss" });
    expect(await create(body)).toMatchObject({ status: 200, cache: "hit", id: first.id }); // kept while stored
    expect(await call("DELETE", first.id!)).toBe(200);

    const again = await create(body);
    expect(again.status).toBe(200);
    expect(again.cache).toBe("miss");
    expect(again.id).not.toBe(first.id);
    expect(await call("GET", again.id!)).toBe(200);
    // The new answer is the one kept now.
    expect(await create(body)).toMatchObject({ status: 200, cache: "hit", id: again.id });
  });

  it("a cached continuation of a deleted response is the 404 it is without the cache", async () => {
    const prev = await create({ model: CHAT_MODEL, input: "the start", max_output_tokens: 20 });
    const body = ask("continue it", { previous_response_id: prev.id });
    expect(await create(body)).toMatchObject({ status: 200, cache: "miss" });
    expect((await create(body)).cache).toBe("hit");
    expect(await call("DELETE", prev.id!)).toBe(200);
    const after = await create(body);
    expect(after.status).toBe(404);
  });

  it("store: false answers were never retrievable: they stay cached", async () => {
    const body = ask("not stored", { store: false });
    const first = await create(body);
    expect(first.cache).toBe("miss");
    expect(await create(body)).toMatchObject({ status: 200, cache: "hit", id: first.id });
  });
});
