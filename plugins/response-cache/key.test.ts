import { describe, expect, it } from "vitest";
import { cacheKey } from "./key.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

const ctx = (o: { body: any; endpoint?: string; protocol?: string; project?: string; sandbox?: boolean; headers?: Record<string, string>; action?: string }) => ({
  endpoint: o.endpoint ?? "chat",
  protocol: o.protocol ?? "openai",
  params: o.action ? { action: o.action } : {},
  headers: o.headers ?? {},
  body: o.body,
  auth: { projectId: o.project ?? "acme", sandbox: o.sandbox ?? false },
}) as unknown as GatewayContext;

const body = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], max_tokens: 20, temperature: 0 };

describe("cacheKey", () => {
  const key = cacheKey(ctx({ body }));

  it("is the same for the same request, whatever the order of its keys or the ttl it asks", () => {
    expect(cacheKey(ctx({ body: { temperature: 0, max_tokens: 20, messages: [{ content: "Hi", role: "user" }], model: "openai/gpt-4o-mini" } }))).toBe(key);
    expect(cacheKey(ctx({ body: { ...body, providerOptions: { gateway: { cache: { ttl: 60 } } } } }))).toBe(cacheKey(ctx({ body: { ...body, providerOptions: { gateway: {} } } })));
    expect(cacheKey(ctx({ body: { ...body, stream: false } }))).toBe(key);
    expect(cacheKey(ctx({ body: { ...body, user: "u1", metadata: { a: "b" } } }))).toBe(key);
  });

  it("differs for the project, sandbox, endpoint, protocol, method, stream and any other body field", () => {
    const others = [
      ctx({ body, project: "other" }),
      ctx({ body, sandbox: true }),
      ctx({ body, endpoint: "messages", protocol: "anthropic" }),
      ctx({ body, endpoint: "gemini", protocol: "gemini", action: "generateContent" }),
      ctx({ body: { ...body, stream: true } }),
      ctx({ body: { ...body, temperature: 0.1 } }),
      ctx({ body: { ...body, messages: [{ role: "user", content: "Hi!" }] } }),
      ctx({ body: { ...body, providerOptions: { gateway: { models: ["openai/gpt-4o"] } } } }),
    ].map(cacheKey);
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });

  it("Gemini's embedContent and batchEmbedContents answer in different shapes: different keys for one body", () => {
    const b = { model: "x/embed", input: ["a"] };
    expect(cacheKey(ctx({ body: b, endpoint: "embeddings", protocol: "gemini", action: "embedContent" })))
      .not.toBe(cacheKey(ctx({ body: b, endpoint: "embeddings", protocol: "gemini", action: "batchEmbedContents" })));
  });

  it("the Responses API echoes user and metadata in its answer: they are part of its key", () => {
    const r = { model: "m", input: "Hi" };
    expect(cacheKey(ctx({ body: { ...r, user: "u1" }, endpoint: "responses", protocol: "responses" })))
      .not.toBe(cacheKey(ctx({ body: { ...r, user: "u2" }, endpoint: "responses", protocol: "responses" })));
  });

  it("anthropic-beta (a set: order and spaces do not matter) and anthropic-version are part of it", () => {
    const m = (headers: Record<string, string>) => cacheKey(ctx({ body, endpoint: "messages", protocol: "anthropic", headers }));
    expect(m({ "anthropic-beta": "a,b" })).toBe(m({ "anthropic-beta": "b, a" }));
    expect(m({ "anthropic-beta": "a" })).not.toBe(m({ "anthropic-beta": "a,b" }));
    expect(m({ "anthropic-version": "2023-06-01" })).not.toBe(m({}));
  });

  it("a body nested deeper than the stack is refused with a RangeError (the caller then skips the cache)", () => {
    let deep: any = "x";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(() => cacheKey(ctx({ body: { ...body, extra: deep } }))).toThrow(RangeError);
  });
});
