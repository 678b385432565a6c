// The response cache never answers a Responses request whose answer stands on state the provider changes under the
// same body: a conversation (OpenAI's Conversations: each turn is added to it) and a stored prompt named without a
// version (its latest version can change). Before the fix, the second `input: "continue"` on conv_X was a hit
// (x-mg-cache: hit) and the turn never reached the conversation — with store: false too. Nor code run in a container
// the provider keeps (a Messages `container`, a Responses code interpreter's `container: "cntr_…"`): the second
// identical request was a hit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_ALWAYS, CACHE_KEY, CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

let openai: FakeOpenAIWithResponses;
let cohere: Reranker;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAIResponses();
  cohere = await startFakeCohere();
  const config = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-state-")) });
  // OpenAI's own Responses API behind the model: the conversation and the stored prompt reach it as sent.
  (config.models[CHAT_MODEL].endpoints[0] as Record<string, unknown>).native_responses = true;
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
});

async function create(body: Record<string, unknown>, key = CACHE_KEY): Promise<{ status: number; cache: string | null }> {
  const res = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  await res.text();
  return { status: res.status, cache: res.headers.get("x-mg-cache") };
}

const ask = (extra: Record<string, unknown>, cache: unknown = true) => ({ model: CHAT_MODEL, input: "continue", max_output_tokens: 20, ...optIn(cache), ...extra });

describe("a Responses request on state the provider changes is never cached", () => {
  it.each([
    { name: "a conversation by id", extra: { conversation: "conv_X" } },
    { name: "a conversation as { id }", extra: { conversation: { id: "conv_Y" } } },
    { name: "a conversation with store: false", extra: { conversation: "conv_Z", store: false } },
    { name: "a stored prompt without a version", extra: { prompt: { id: "pmpt_1", variables: { a: "b" } } } },
  ])("$name: each request reaches the provider, asked for the cache or under mode: always", async ({ extra }) => {
    for (const [body, key] of [[ask(extra), CACHE_KEY], [ask(extra, undefined), CACHE_ALWAYS]] as const) {
      const before = openai.requests.length;
      const first = await create(body, key);
      const second = await create(body, key);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(openai.requests.length).toBe(before + 2);
      expect([first.cache, second.cache]).toEqual([null, null]); // the cache had nothing to do with them
    }
  });

  it.each([
    { name: "a code interpreter in a named container", extra: { tools: [{ type: "code_interpreter", container: "cntr_abc" }] } },
    { name: "a named container, store: false", extra: { tools: [{ type: "code_interpreter", container: "cntr_abc" }], store: false } },
  ])("$name (its files and state are the provider's): each request reaches the provider", async ({ extra }) => {
    const body = ask(extra);
    const before = openai.requests.length;
    const first = await create(body);
    const second = await create(body);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(openai.requests.length).toBe(before + 2);
    expect([first.cache, second.cache]).toEqual([null, null]);
  });

  it("a code interpreter in a fresh container ({type: auto}) is cached like any request: the body decides it", async () => {
    const body = ask({ tools: [{ type: "code_interpreter", container: { type: "auto" } }], input: "auto container" });
    expect(await create(body)).toEqual({ status: 200, cache: "miss" });
    expect(await create(body)).toEqual({ status: 200, cache: "hit" });
  });

  it("a stored prompt pinned to a version is cached like any request", async () => {
    const body = ask({ prompt: { id: "pmpt_1", version: "3" } });
    expect(await create(body)).toEqual({ status: 200, cache: "miss" });
    expect(await create(body)).toEqual({ status: 200, cache: "hit" });
  });
});

describe("a Messages request in a container the provider keeps is never cached", () => {
  async function message(body: Record<string, unknown>): Promise<{ status: number; cache: string | null }> {
    const res = await fetch(`${gw.url}/api/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}`, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "run it again" }], ...body }),
    });
    await res.text();
    return { status: res.status, cache: res.headers.get("x-mg-cache") };
  }

  it.each([
    { name: "by id", container: "container_011CPR5CNjB747bTd36fQLFk" },
    { name: "as { id }", container: { id: "container_011CPR5CNjB747bTd36fQLFk" } },
  ])("named $name: each request reaches the provider", async ({ container }) => {
    const before = openai.requests.length;
    const first = await message({ container });
    const second = await message({ container });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(openai.requests.length).toBe(before + 2);
    expect([first.cache, second.cache]).toEqual([null, null]);
  });

  it("without a container it is cached as before", async () => {
    expect(await message({})).toEqual({ status: 200, cache: "miss" });
    expect(await message({})).toEqual({ status: 200, cache: "hit" });
  });
});
