// Bodies that look right but are not (issue 10): an unknown content block type, a malformed image source, an
// https URL without a host, numbers JSON cannot carry, nesting no later step can handle, bytes that are not UTF-8.
// Each is a 400 naming the field, in the endpoint's envelope, before any upstream hears of it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { OPENAI_KEY, startFakeOpenAIMedia, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("validation-e2e");
const CLAUDE = "anthropic/claude-sonnet-4.5"; // native: the body would be passed through as it is
const MINI = "openai/gpt-4o-mini"; // translated: messages -> chat
let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let media: FakeOpenAIMedia;
let gw: TestGateway;

beforeAll(async () => {
  [anthropic, openai, media] = await Promise.all([startFakeAnthropic(), startFakeOpenAI(), startFakeOpenAIMedia()]);
  gw = await startTestGateway({
    server: { signing_secret: "request-validation-secret" },
    providers: {
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      up: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      media: { protocol: "openai", base_url: media.baseUrl, api_key: OPENAI_KEY },
    },
    models: {
      [CLAUDE]: { endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929" }] },
      [MINI]: { endpoints: [{ provider: "up", model: "gpt-4o-mini" }] },
      "openai/sora-2": { type: "video", limits: { durations: [4, 8, 12], poll_initial_ms: 5, poll_max_ms: 20 }, endpoints: [{ provider: "media", model: "sora-2" }] },
      "openai/gpt-image-1": { type: "image", limits: { reference_image: true }, endpoints: [{ provider: "media", model: "gpt-image-1" }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic?.close(), openai?.close(), media?.close()]);
});

beforeEach(() => {
  anthropic.requests.length = 0;
  openai.requests.length = 0;
  media.requests.length = 0;
});

const upstreamCalls = () => anthropic.requests.length + openai.requests.length + media.requests.length;
const auth = { authorization: `Bearer ${LIVE}` };
const user = (content: unknown) => [{ role: "user", content }];

async function expect400(path: string, body: unknown, field: string, code = "INVALID_REQUEST") {
  const res = await postJson(`${gw.baseURL}${path}`, body, auth);
  expect(res.status, res.text).toBe(400);
  const error = path === "/messages" ? (expect(res.json.type).toBe("error"), res.json.error) : res.json.error;
  expect(error).toMatchObject({ code, details: expect.objectContaining({ field }) });
  // The Messages API's wording names the place its own way: messages.0.content.1.type, dotted.
  expect(error.message).toContain(path === "/messages" ? field.replace(/\[(\d+)\]/g, ".$1").replace(/\.type$/, "") : field);
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(upstreamCalls()).toBe(0);
  return error;
}

describe("messages: content blocks", () => {
  // A block of a type the gateway does not know passes (to Anthropic as sent, dropped and named when translated:
  // test/sdk-fields.e2e.test.ts); one without a string type is no block at all.
  it.each([CLAUDE, MINI])("a block without a type is refused, naming messages[i].content[j].type (%s)", async (model) => {
    const e = await expect400("/messages", { model, max_tokens: 20, messages: user([{ type: "text", text: "hi" }, { text: "bogus" }]) }, "messages[0].content[1].type");
    expect(e.type).toBe("invalid_request_error");
  });

  it.each([
    ["an unknown source type", { type: "bogus" }, "messages[0].content[0].source.type"],
    ["base64 without media_type", { type: "base64", data: "iVBORw0KGgo=" }, "messages[0].content[0].source.media_type"],
    ["base64 with a data: URL as data", { type: "base64", media_type: "image/png", data: "data:image/png;base64,iVBORw0KGgo=" }, "messages[0].content[0].source.data"],
    ["a url that is not https", { type: "url", url: "http://example.com/cat.png" }, "messages[0].content[0].source.url"],
    ["a url without a host", { type: "url", url: "https://" }, "messages[0].content[0].source.url"],
    ["a url that is not a string", { type: "url", url: 42 }, "messages[0].content[0].source.url"],
  ])("an image block with %s is refused", async (_name, source, field) => {
    for (const model of [CLAUDE, MINI]) await expect400("/messages", { model, max_tokens: 20, messages: user([{ type: "image", source }]) }, field);
  });

  it("tool_result content and document sources are checked the same way", async () => {
    const toolResult = (content: unknown) => [
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content }] },
    ];
    await expect400("/messages", { model: CLAUDE, max_tokens: 20, messages: toolResult([{ type: 42 }]) }, "messages[1].content[0].content[0].type");
    await expect400("/messages", { model: CLAUDE, max_tokens: 20, messages: toolResult([{ type: "image", source: { type: "url", url: "https://" } }]) }, "messages[1].content[0].content[0].source.url");
    await expect400("/messages", { model: CLAUDE, max_tokens: 20, messages: user([{ type: "document", source: { type: "base64", media_type: "image/png", data: "AA==" } }]) }, "messages[0].content[0].source.media_type");
    await expect400("/messages", { model: CLAUDE, max_tokens: 20, messages: user([{ type: "document", source: { type: "pdf" } }]) }, "messages[0].content[0].source.type");
  });

  it("the valid shapes still reach the upstream (known block types, every image and document source)", async () => {
    const blocks = [
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "notes" }, title: "n" },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } },
    ];
    const res = await postJson(`${gw.baseURL}/messages`, { model: CLAUDE, max_tokens: 20, messages: user(blocks) }, auth);
    expect(res.status, res.text).toBe(200);
    expect(anthropic.requests).toHaveLength(1);
    expect(anthropic.requests[0]!.body.messages[0].content).toEqual(blocks);
  });
});

describe("chat: content parts", () => {
  it.each([
    [{ type: "bogus" }, "messages[0].content[0].type"],
    [{ type: "image_url", image_url: { url: "https://" } }, "messages[0].content[0].image_url.url"],
    [{ type: "image_url", image_url: { url: "cat.png" } }, "messages[0].content[0].image_url.url"],
    [{ type: "file", file: {} }, "messages[0].content[0].file.file_data"],
  ])("%j is refused", async (part, field) => {
    await expect400("/chat/completions", { model: MINI, messages: user([part]) }, field);
  });
});

describe("options the upstream would bill above the catalog's prices, or run where the gateway cannot bill", () => {
  it.each([
    ["/chat/completions", { service_tier: "priority" }, "service_tier"],
    ["/chat/completions", { service_tier: "scale" }, "service_tier"],
    ["/chat/completions", { modalities: ["text", "audio"] }, "modalities[1]"],
    ["/responses", { background: true }, "background"],
    ["/responses", { service_tier: "priority" }, "service_tier"],
  ])("%s %j is refused, naming the field, before any upstream hears of it", async (path, extra, field) => {
    const body = path === "/responses" ? { model: MINI, input: "hi", ...extra } : { model: MINI, messages: user("hi"), ...extra };
    await expect400(path, body, field);
  });

  it("service_tier flex (billed below the catalog's prices) still reaches a native upstream", async () => {
    const res = await postJson(`${gw.baseURL}/chat/completions`, { model: MINI, messages: user("hi"), service_tier: "flex" }, auth);
    expect(res.status, res.text).toBe(200);
    expect(openai.requests[0]!.body.service_tier).toBe("flex");
  });
});

describe("chat: optional fields set to null", () => {
  // What a Python caller's `temperature=None` sends, and what the official SDKs type nullable: taken as not sent.
  const NULLS = {
    max_tokens: null, max_completion_tokens: null, temperature: null, top_p: null, n: null, stream: null, stream_options: null,
    stop: null, presence_penalty: null, frequency_penalty: null, seed: null, logit_bias: null, logprobs: null,
    top_logprobs: null, user: null, tools: null, parallel_tool_calls: null, reasoning_effort: null,
  };

  it.each([MINI, CLAUDE])("are answered, and reach the upstream as not sent (%s)", async (model) => {
    const res = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: user("hi"), ...NULLS }, auth);
    expect(res.status, res.text).toBe(200);
    expect(res.json.object).toBe("chat.completion");
    const sent = (model === MINI ? openai.requests : anthropic.requests)[0]!.body;
    const nulls = Object.entries(sent).filter(([, v]) => v === null).map(([k]) => k);
    expect(nulls).toEqual([]);
    if (model === MINI) expect(Object.keys(sent)).not.toContain("temperature");
    else expect(sent.max_tokens).toBeGreaterThan(0); // the translator's default, not null
  });

  it("response_format.json_schema as the spec writes it, a bare JSON Schema, reaches the upstream in OpenAI's {name, schema}", async () => {
    const schema = { type: "object", properties: { stars: { type: "integer" } }, required: ["stars"] };
    const res = await postJson(`${gw.baseURL}/chat/completions`, { model: MINI, messages: user("rate it"), response_format: { type: "json_schema", json_schema: schema } }, auth);
    expect(res.status, res.text).toBe(200);
    expect(openai.requests[0]!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema } });
    // OpenAI's own shape is left as it is, and one with neither a name nor a schema is still refused, naming the name.
    const named = { name: "rating", schema, strict: true };
    await postJson(`${gw.baseURL}/chat/completions`, { model: MINI, messages: user("rate it"), response_format: { type: "json_schema", json_schema: named } }, auth);
    expect(openai.requests[1]!.body.response_format.json_schema).toEqual(named);
    openai.requests.length = 0;
    await expect400("/chat/completions", { model: MINI, messages: user("hi"), response_format: { type: "json_schema", json_schema: { strict: true } } }, "response_format.json_schema.name");
  });

  it("a value of the wrong type is still refused, naming the field and what it may be", async () => {
    const e = await expect400("/chat/completions", { model: MINI, messages: user("hi"), temperature: "hot" }, "temperature");
    expect(e.message).toBe("Invalid request: temperature must be number or null");
  });
});

describe("videos and images: client URLs", () => {
  it.each(["https://", "https:///cat.png", "https://:443/cat.png", "http://example.com/cat.png", "not a url"])("videos image_url %j is 400 BAD_REQUEST", async (url) => {
    await expect400("/videos", { model: "openai/sora-2", prompt: "a cat", image_url: url }, "image_url", "BAD_REQUEST");
    await expect400("/videos", { model: "openai/sora-2", prompt: "a cat", last_frame_url: url }, "last_frame_url", "BAD_REQUEST");
  });

  it("images reference_image: https without a host is 400 BAD_REQUEST", async () => {
    await expect400("/images/generations", { model: "openai/gpt-image-1", prompt: "a cat", reference_image: "https://" }, "reference_image", "BAD_REQUEST");
  });

  // These overflowed the regex engine's stack: a 500 instead of a 400 (security issue 25).
  it.each([
    ["an https URL with 4 million host labels", `https://a${".a".repeat(4_000_000)}`],
    ["a data: URL with 4 million parameters", `data:image/png${";a".repeat(4_000_000)};base64,AAAA`],
  ])("8 MB in reference_image (%s): 400 BAD_REQUEST naming it, and image_url on chat likewise", async (_name, url) => {
    await expect400("/images/generations", { model: "openai/gpt-image-1", prompt: "a cat", reference_image: url }, "reference_image", "BAD_REQUEST");
    await expect400("/chat/completions", { model: MINI, messages: user([{ type: "image_url", image_url: { url } }]) }, "messages[0].content[0].image_url.url");
  });
});

describe("bodies JSON.parse accepts but the gateway cannot carry", () => {
  const raw = async (path: string, text: string | Buffer) => {
    const res = await fetch(`${gw.baseURL}${path}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: text as string });
    return { status: res.status, json: await res.json() as any, id: res.headers.get("x-request-id") };
  };

  it("a number too large for a double (1e999) is refused naming the field; so is a 100-digit max_tokens", async () => {
    const inf = await raw("/chat/completions", `{"model":"${MINI}","messages":[{"role":"user","content":"hi"}],"max_tokens":1e999}`);
    expect(inf.status).toBe(400);
    expect(inf.json.error.details.field).toBe("max_tokens");
    const hundred = await raw("/messages", `{"model":"${CLAUDE}","messages":[{"role":"user","content":"hi"}],"max_tokens":${"9".repeat(100)}}`);
    expect(hundred.status).toBe(400);
    expect(hundred.json.error.details.field).toBe("max_tokens");
    expect(upstreamCalls()).toBe(0);
  });

  it("deep nesting in a pass-through field is refused before anything serialises it", async () => {
    const deep = "[".repeat(5000) + "]".repeat(5000);
    const res = await raw("/chat/completions", `{"model":"${MINI}","messages":[{"role":"user","content":"hi"}],"extra":${deep}}`);
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toMatch(/^extra(\[0\])+$/);
    const tool = await raw("/messages", `{"model":"${CLAUDE}","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"a":${deep}}}]}]}`);
    expect(tool.status).toBe(400);
    expect(upstreamCalls()).toBe(0);
  });

  it("invalid UTF-8 is refused rather than forwarded as U+FFFD", async () => {
    const body = Buffer.concat([Buffer.from(`{"model":"${MINI}","messages":[{"role":"user","content":"hi `), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(`"}]}`)]);
    const res = await raw("/chat/completions", body);
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/UTF-8/);
    expect(res.id).toBeTruthy();
    expect(upstreamCalls()).toBe(0);
  });
});
