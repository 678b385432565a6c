import { describe, expect, it } from "vitest";
import { identity } from "./index.ts";

const target = { modelId: "m", provider: "p", upstreamModel: "x", pricing: {} } as any;
const body = { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "q", cache_control: { type: "ephemeral" } }] }] };
const opts = (driverProtocol: string, cacheMarkers = true) => ({ cacheMarkers, cacheAuto: false, driverProtocol, provider: "p" });

describe("identity translator", () => {
  it("passes chat through to Anthropic-speaking drivers, strips cache markers for the others", () => {
    expect(identity("chat").request(body, target, opts("anthropic")).body).toBe(body);
    const t = identity("chat").request(body, target, opts("openai"));
    expect(t).toMatchObject({ op: "chat", dropped: [] });
    expect(JSON.stringify(t.body)).not.toContain("cache_control");
    expect(identity("chat").request(body, target, opts("openai", false)).body).toBe(body);
    expect(identity("messages").request(body, target, opts("openai")).body).toBe(body);
  });
});
