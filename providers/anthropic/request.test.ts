import { describe, expect, it } from "vitest";
import { buildMessagesRequest, messagesUrl } from "./request.ts";

const target = { modelId: "anthropic/c", provider: "claude", upstreamModel: "claude-x", pricing: { output: "0.000015" } };
const config = { protocol: "anthropic" as const, base_url: "https://api.anthropic.com", api_key: "sk-ant" };

describe("anthropic request", () => {
  it("url with or without /v1 in base_url; BYOK credentials win", () => {
    expect(messagesUrl(config, target)).toBe("https://api.anthropic.com/v1/messages");
    expect(messagesUrl({ ...config, base_url: "https://proxy/v1/" }, target)).toBe("https://proxy/v1/messages");
    expect(messagesUrl(config, { ...target, credentials: { baseUrl: "https://byok" } })).toBe("https://byok/v1/messages");
  });

  it("passthrough: model replaced, providerOptions removed, client version/beta forwarded only when asked", () => {
    const body = { model: "anthropic/c", max_tokens: 5, messages: [], extra: 1, providerOptions: { gateway: {} } };
    const headers = { "anthropic-version": "2024-01-01", "anthropic-beta": ["a", "b"] };
    const r = buildMessagesRequest(body, target, config, "claude", { clientHeaders: headers });
    expect(JSON.parse(r.body as string)).toEqual({ model: "claude-x", max_tokens: 5, messages: [], extra: 1 });
    expect(r.headers).toMatchObject({ "x-api-key": "sk-ant", "anthropic-version": "2024-01-01", "anthropic-beta": "a,b" });
    const t = buildMessagesRequest(body, target, config, "claude", { clientHeaders: headers }, false);
    expect(t.headers["anthropic-version"]).toBe("2023-06-01");
    expect(t.headers["anthropic-beta"]).toBeUndefined();
  });

  it("a client's betas are added to the operator's configured ones, each named once", () => {
    const body = { model: "anthropic/c", max_tokens: 5, messages: [] };
    const own = { ...config, headers: { "Anthropic-Beta": "context-1m-2025-08-07" } };
    const r = buildMessagesRequest(body, target, own, "claude", { clientHeaders: { "anthropic-beta": "files-api-2025-04-14, context-1m-2025-08-07" } });
    expect(Object.keys(r.headers).filter((k) => k.toLowerCase() === "anthropic-beta")).toEqual(["Anthropic-Beta"]);
    expect(r.headers["Anthropic-Beta"]).toBe("context-1m-2025-08-07,files-api-2025-04-14");
    // A translated call carries no client header: the configured betas go as they are.
    expect(buildMessagesRequest(body, target, own, "claude", { clientHeaders: {} }, false).headers["Anthropic-Beta"]).toBe("context-1m-2025-08-07");
  });
});
