// fast-check arbitraries for request bodies that are invalid by construction, one set per POST endpoint: a valid
// body with one known field given a value of the wrong type or out of range (plus unknown fields, which must pass),
// a required field missing, broken nested parts (content blocks, image sources, URLs, tools), random JSON values,
// random bytes and truncated JSON. Each generator says why its output is invalid; the fuzz suite double-checks
// the JSON ones against the generated validators.
import fc from "fast-check";
import { MODELS } from "./abuse-gateway.ts";

export type Endpoint = keyof typeof MODELS;

export const PATHS: Record<Endpoint, string> = {
  chat: "/chat/completions",
  messages: "/messages",
  embeddings: "/embeddings",
  rerank: "/rerank",
  images: "/images/generations",
  videos: "/videos",
};

const user = (content: unknown) => ({ role: "user", content });

export const VALID: Record<Endpoint, Record<string, unknown>> = {
  chat: { model: MODELS.chat, messages: [user("hi")], max_tokens: 8 },
  messages: { model: MODELS.messages, max_tokens: 8, messages: [user("hi")] },
  embeddings: { model: MODELS.embeddings, input: "hello" },
  rerank: { model: MODELS.rerank, query: "q", documents: ["a", "b"] },
  images: { model: MODELS.images, prompt: "a cat" },
  videos: { model: MODELS.videos, prompt: "a cat" },
};

const REQUIRED: Record<Endpoint, string[]> = {
  chat: ["model", "messages"],
  messages: ["model", "max_tokens", "messages"],
  embeddings: ["model", "input"],
  rerank: ["model", "query", "documents"],
  images: ["model", "prompt"],
  videos: ["model", "prompt"],
};

// ---- values of the wrong kind ------------------------------------------------------------------------------
const small = fc.jsonValue({ maxDepth: 2 });
const obj = fc.dictionary(fc.string({ maxLength: 8 }), small, { maxKeys: 3 });
const arr = fc.array(small, { maxLength: 3 });
const num = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
const notString = fc.oneof(num, fc.boolean(), fc.constant(null), arr, obj);
const notNumber = fc.oneof(fc.string(), fc.boolean(), fc.constant(null), arr, obj);
const notInteger = fc.oneof(notNumber, fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)));
const notBool = fc.oneof(fc.string(), num, fc.constant(null), arr, obj);
const notArray = fc.oneof(fc.string(), num, fc.boolean(), fc.constant(null), obj);
const notObject = fc.oneof(fc.string(), num, fc.boolean(), fc.constant(null), arr);
const notIn = (values: readonly string[]) => fc.oneof(fc.string().filter((s) => !values.includes(s)), notString);
/** Outside [min, max] (either bound may be absent), or not a number at all. */
const outside = (min: number | undefined, max: number | undefined, integer = false) => {
  const parts: fc.Arbitrary<unknown>[] = [integer ? notInteger : notNumber];
  const by = fc.integer({ min: 1, max: 2 ** 40 });
  if (min !== undefined) parts.push(integer ? by.map((k) => min - k) : fc.double({ max: min, noNaN: true, noDefaultInfinity: true }).filter((d) => d < min));
  if (max !== undefined) parts.push(integer ? by.map((k) => max + k) : fc.double({ min: max, noNaN: true, noDefaultInfinity: true }).filter((d) => d > max));
  return fc.oneof(...parts);
};
const notNull = <T>(a: fc.Arbitrary<T>) => a.filter((v) => v !== null);
const longString = (max: number) => fc.integer({ min: max + 1, max: max + 50 }).map((n) => "x".repeat(n));

const HTTPS_URL = /^[Hh][Tt][Tt][Pp][Ss]:\/\/(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?(?:[/?#]\S*)?$/;
/** Anything but an https URL with a host (and not a data: URL either). */
const badUrl = fc.oneof(
  fc.constantFrom("https://", "https:///cat.png", "https://:443/x", "http://example.com/cat.png", "ftp://example.com/x", "https://a b/c", "https://user:pw@example.com/x", "//example.com/x", "example.com/cat.png", ""),
  fc.string().filter((s) => !HTTPS_URL.test(s) && !s.startsWith("data:")),
  notString,
);
const HTTP_URL = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?(?:[/?#]\S*)?$/;
/** Anything but an http(s) URL with a host (and not a data: URL either): what a chat image URL may not be. */
const badChatUrl = fc.oneof(
  fc.constantFrom("https://", "http://", "http:///cat.png", "https://:443/x", "ftp://example.com/x", "http://a b/c", "http://user:pw@example.com/x", "//example.com/x", "example.com/cat.png", ""),
  fc.string().filter((s) => !HTTP_URL.test(s) && !s.startsWith("data:")),
  notString,
);
const badBase64 = fc.oneof(fc.constantFrom("", "data:image/png;base64,AAAA", "not base64!", "AA==AA", "AA AA"), notString);

// ---- nested parts --------------------------------------------------------------------------------------------
const badImageSource = fc.oneof(
  notObject,
  fc.record({ type: notIn(["base64", "url", "file"]) }),
  fc.record({ type: fc.constant("base64"), media_type: notIn(["image/jpeg", "image/png", "image/webp", "image/gif"]), data: fc.constant("iVBORw0KGgo=") }),
  fc.record({ type: fc.constant("base64"), media_type: fc.constant("image/png"), data: badBase64 }),
  fc.record({ type: fc.constant("url"), url: badUrl }),
  fc.record({ type: fc.constant("file"), file_id: fc.oneof(fc.constant(""), notString) }),
);
const badMessagesBlock = fc.oneof(
  notObject,
  // A block of a type not listed passes through to Claude (docs/messages.md): only a type that is not a string is refused.
  fc.record({ type: notString, text: fc.string() }),
  fc.record({ type: fc.constant("text"), text: notString }),
  fc.record({ type: fc.constant("image"), source: badImageSource }),
  fc.record({ type: fc.constant("tool_use"), id: fc.constant("t"), name: fc.constant("f"), input: notObject }),
  fc.record({ type: fc.constant("tool_result"), tool_use_id: fc.constant("t"), content: fc.array(fc.record({ type: notString }), { minLength: 1, maxLength: 2 }) }),
  fc.record({ type: fc.constant("tool_result"), tool_use_id: fc.constant("t"), content: fc.tuple(fc.record({ type: fc.constant("image"), source: badImageSource })) }),
  fc.record({ type: fc.constant("document"), source: fc.oneof(notObject, fc.record({ type: notIn(["base64", "text", "url", "content", "file"]) }), fc.record({ type: fc.constant("url"), url: badUrl })) }),
  fc.record({ type: fc.constant("thinking"), thinking: notString }),
  // cache_control: null is "not sent" (the SDK types it nullable).
  fc.record({ type: fc.constant("text"), text: fc.constant("x"), cache_control: fc.oneof(notNull(notObject), fc.record({ type: notIn(["ephemeral"]) })) }),
);
const badMessagesMessage = fc.oneof(
  notObject,
  fc.record({ role: notIn(["user", "assistant"]), content: fc.constant("hi") }),
  fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.oneof(num, fc.boolean(), fc.constant(null), obj) }),
  fc.record({ role: fc.constantFrom("user", "assistant") }),
  fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.array(badMessagesBlock, { minLength: 1, maxLength: 3 }) }),
);

const CHAT_PARTS = ["text", "image_url", "input_audio", "file"];
const badChatPart = fc.oneof(
  notObject,
  fc.record({ type: notIn(CHAT_PARTS), text: fc.string() }),
  fc.record({ type: fc.constant("text"), text: notString }),
  fc.record({ type: fc.constant("image_url"), image_url: fc.oneof(notObject, fc.record({ url: badChatUrl }), fc.record({ url: fc.constant("https://example.com/a.png"), detail: notIn(["low", "high", "auto"]) })) }),
  fc.record({ type: fc.constant("input_audio"), input_audio: fc.oneof(notObject, fc.record({ data: fc.constant("AAAA") })) }),
  fc.record({ type: fc.constant("file"), file: fc.oneof(notObject, fc.constant({}), fc.record({ file_data: notString })) }),
);
const badChatMessage = fc.oneof(
  notObject,
  fc.record({ role: notIn(["system", "developer", "user", "assistant", "tool"]), content: fc.constant("hi") }),
  fc.record({ role: fc.constantFrom("system", "developer", "user", "tool") }),
  fc.record({ role: fc.constant("user"), content: fc.oneof(num, fc.boolean(), fc.constant(null), obj) }),
  fc.record({ role: fc.constant("user"), content: fc.array(badChatPart, { minLength: 1, maxLength: 3 }) }),
  fc.record({ role: fc.constant("tool"), content: fc.constant("x") }),
  fc.record({ role: fc.constant("assistant"), content: fc.constant(null), tool_calls: fc.oneof(notArray, fc.tuple(fc.record({ id: fc.constant("c"), type: notIn(["function"]), function: fc.constant({ name: "f", arguments: "{}" }) }))) }),
);

/** Known fields and values they must never accept. */
const BAD_FIELDS: Record<Endpoint, Record<string, fc.Arbitrary<unknown>>> = {
  // null on chat's nullable fields is "not sent" (OpenAI's own reading; the SDKs type them nullable): valid.
  chat: {
    model: fc.oneof(notString, fc.constant("")),
    messages: fc.oneof(notArray, fc.constant([]), fc.array(badChatMessage, { minLength: 1, maxLength: 2 })),
    max_tokens: notNull(outside(1, 2147483647, true)),
    max_completion_tokens: notNull(outside(1, 2147483647, true)),
    temperature: notNull(outside(0, 2)),
    top_p: notNull(outside(0, 1)),
    n: notNull(outside(1, 128, true)),
    stream: notNull(notBool),
    stream_options: fc.oneof(fc.string(), num, fc.boolean(), arr, fc.record({ include_usage: notBool })),
    // No length limit in the schema: the 4-stop limit is the OpenAI host's (providers/openai-compatible/host-conventions.ts).
    stop: fc.oneof(num, fc.boolean(), obj, fc.tuple(notString)),
    presence_penalty: notNull(outside(-2, 2)),
    frequency_penalty: notNull(outside(-2, 2)),
    seed: notNull(notInteger),
    logit_bias: fc.oneof(notObject.filter((v) => v !== null), fc.record({ "50256": outside(-100, 100) })),
    logprobs: notNull(notBool),
    top_logprobs: notNull(outside(0, 20, true)),
    user: notNull(notString),
    response_format: fc.oneof(notObject, fc.record({ type: notIn(["text", "json_object", "json_schema"]) }), fc.constant({ type: "json_schema" })),
    tools: notNull(fc.oneof(notArray, fc.tuple(notObject), fc.tuple(fc.record({ type: fc.constant("function"), function: fc.record({ name: fc.oneof(notString, fc.constantFrom("", "has space", "x".repeat(65))) }) })))),
    tool_choice: fc.oneof(fc.string().filter((s) => !["auto", "required", "none"].includes(s)), num, fc.record({ type: fc.constant("function") })),
    parallel_tool_calls: notNull(notBool),
    reasoning_effort: notNull(notIn(["none", "minimal", "low", "medium", "high", "xhigh", "max"])),
    providerOptions: fc.oneof(notObject, fc.record({ gateway: fc.record({ sort: notIn(["cost", "ttft", "tps"]) }) }), fc.record({ openai: notObject })),
  },
  messages: {
    model: fc.oneof(notString, fc.constant("")),
    max_tokens: outside(0, 2147483647, true), // 0 is Anthropic's cache pre-warm
    messages: fc.oneof(notArray, fc.constant([]), fc.array(badMessagesMessage, { minLength: 1, maxLength: 2 })),
    system: fc.oneof(num, fc.boolean(), obj, fc.tuple(fc.record({ type: fc.constant("text"), text: notString }))),
    temperature: outside(0, 1),
    top_p: outside(0, 1),
    top_k: outside(0, 2147483647, true),
    stop_sequences: fc.oneof(notArray, fc.tuple(notString)),
    stream: notBool,
    metadata: fc.oneof(notObject, fc.record({ user_id: fc.oneof(num, fc.boolean(), arr, obj) })),
    tools: fc.oneof(notArray, fc.tuple(notObject), fc.constant([{ name: "f" }]), fc.tuple(fc.record({ name: fc.oneof(notString, fc.constant("")), input_schema: fc.constant({ type: "object" }) }))),
    tool_choice: fc.oneof(notObject, fc.record({ type: notIn(["auto", "any", "tool", "none"]) }), fc.constant({ type: "tool" })),
    thinking: fc.oneof(notObject, fc.record({ type: notIn(["enabled", "disabled", "adaptive", "between_tools"]) }), fc.constant({ type: "enabled" }), fc.record({ type: fc.constant("enabled"), budget_tokens: outside(1, 2147483647, true) })),
  },
  embeddings: {
    model: fc.oneof(notString, fc.constant("")),
    input: fc.oneof(fc.boolean(), fc.constant(null), obj, num, fc.constant(""), fc.constant([]), fc.tuple(fc.constant("")), fc.tuple(fc.integer({ max: -1 })), fc.tuple(fc.constant([])), fc.tuple(fc.oneof(fc.boolean(), fc.constant(null), obj))),
    dimensions: outside(1, undefined, true),
    encoding_format: notIn(["float", "base64"]),
    user: notString,
  },
  rerank: {
    model: fc.oneof(notString, fc.constant("")),
    query: fc.oneof(notString, fc.constant(""), longString(8000)),
    documents: fc.oneof(notArray, fc.constant([]), fc.tuple(notString)),
    top_n: outside(1, 1000, true),
    user: fc.oneof(notString, longString(256)),
  },
  // null on the fields the openai SDK types nullable (n, size, quality, style, response_format) is "not sent": valid.
  images: {
    model: fc.oneof(notString, fc.constant("")),
    prompt: fc.oneof(notString, fc.constant(""), longString(8000)),
    n: notNull(outside(1, 8, true)),
    size: notNull(fc.oneof(notString, fc.constantFrom("", "big", "1024", "1024x", "0x10", "10x0", "1024X1024", "123456x1"))),
    quality: notNull(fc.oneof(notString, fc.constant(""))),
    style: notNull(notIn(["vivid", "natural"])),
    response_format: notNull(notIn(["url", "b64_json"])),
    user: fc.oneof(notString, longString(256)),
    reference_image: fc.oneof(notString, fc.constantFrom("", "https://", "http://example.com/a.png", "ftp://x/y", "not base64!", "data:text/plain;base64,AAAA")),
  },
  videos: {
    model: fc.oneof(notString, fc.constant("")),
    prompt: fc.oneof(notString, fc.constant(""), longString(8000)),
    image_url: badUrl,
    last_frame_url: badUrl,
    aspect_ratio: notIn(["16:9", "9:16", "1:1", "4:3", "3:4", "21:9"]),
    duration: outside(1, 60),
    user: fc.oneof(notString, longString(256)),
    providerOptions: fc.oneof(notObject, fc.record({ gateway: fc.record({ only: notArray }) })),
  },
};

/** Unknown fields: allowed everywhere, so they never make a body invalid (nor valid). */
const extras = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }).map((k) => `x_${k}`), small, { maxKeys: 2 });

/** A body as the client sends it: JSON to stringify, or raw bytes. */
export type FuzzBody = { json: unknown } | { raw: Uint8Array };

export function invalidBodies(endpoint: Endpoint): fc.Arbitrary<FuzzBody> {
  const valid = VALID[endpoint];
  const fields = BAD_FIELDS[endpoint];
  const mutated = fc
    .tuple(fc.constantFrom(...Object.keys(fields)), extras)
    .chain(([field, extra]) => fields[field]!.map((bad) => ({ json: { ...extra, ...valid, [field]: bad } })));
  const missing = fc
    .tuple(fc.constantFrom(...REQUIRED[endpoint]), extras)
    .map(([field, extra]) => {
      const body: Record<string, unknown> = { ...extra, ...valid };
      delete body[field];
      return { json: body };
    });
  const notAnObject = fc.jsonValue({ maxDepth: 3 }).filter((v) => v === null || typeof v !== "object" || Array.isArray(v)).map((json) => ({ json }));
  const bytes = fc.uint8Array({ maxLength: 256 }).map((raw) => ({ raw }));
  const truncated = fc
    .tuple(mutated, fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([b, at]) => {
      const text = JSON.stringify((b as { json: unknown }).json);
      return { raw: new TextEncoder().encode(text.slice(0, Math.floor(at * (text.length - 1)))) };
    });
  return fc.oneof(
    { arbitrary: mutated, weight: 10 },
    { arbitrary: missing, weight: 2 },
    { arbitrary: notAnObject, weight: 1 },
    { arbitrary: bytes, weight: 1 },
    { arbitrary: truncated, weight: 2 },
  );
}
