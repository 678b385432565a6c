// deleteUpstreamCopy: which driver and credentials reach the upstream's copy, and what a failure or a provider no
// longer configured gives.
import { describe, expect, it } from "vitest";
import { deleteUpstreamCopy } from "./upstream-delete.ts";
import { GatewayError } from "../errors.ts";
import type { ResponseRecord } from "../store/responses-types.ts";
import type { Target } from "../contracts/provider.ts";

const rec = { id: "resp_1", project: "acme", provider: "openai", model: "openai/gpt-5", native: true } as ResponseRecord;

function ctxWith(drivers: Map<string, unknown>, projectProviders: Record<string, unknown> = {}) {
  const warnings: unknown[] = [];
  const ctx = {
    requestId: "req_1", signal: new AbortController().signal, drivers,
    auth: { projectId: "acme", project: { config: { providers: projectProviders } } },
    config: { raw: { providers: { openai: { protocol: "openai" } } } },
    gateway: { log: { warn: (...a: unknown[]) => warnings.push(a) } },
  } as any;
  return { ctx, warnings };
}

describe("deleteUpstreamCopy", () => {
  it("asks the driver that served it, with the project's own key when it has one", async () => {
    const seen: Array<[string, Target]> = [];
    const driver = { deleteResponse: async (id: string, t: Target) => { seen.push([id, t]); return true; } };
    await deleteUpstreamCopy(ctxWith(new Map([["openai", driver]])).ctx, rec);
    await deleteUpstreamCopy(ctxWith(new Map([["openai", driver]]), { openai: { api_key: "sk-own", base_url: "https://own.example/v1" } }).ctx, rec);
    expect(seen.map(([id, t]) => [id, t.provider, t.credentials])).toEqual([
      ["resp_1", "openai", undefined],
      ["resp_1", "openai", { apiKey: "sk-own", baseUrl: "https://own.example/v1" }],
    ]);
  });

  it("an upstream refusal is a 502 saying it was not deleted, retryable as the upstream's failure was", async () => {
    const refused = new GatewayError(502, "UPSTREAM_ERROR", "Incorrect API key provided", { retryable: false, details: { upstream_error: { code: "invalid_api_key" } } });
    const driver = { deleteResponse: async () => { throw refused; } };
    const err = await deleteUpstreamCopy(ctxWith(new Map([["openai", driver]])).ctx, rec).catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: false, headers: { "x-should-retry": "false" }, details: { response_id: "resp_1", provider: "openai", upstream_error: { code: "invalid_api_key" } } });
    expect(err.message).toMatch(/not deleted.*Incorrect API key/);
  });

  it("a provider no longer configured: nothing to ask, a warning, the gateway's record may go", async () => {
    const { ctx, warnings } = ctxWith(new Map());
    ctx.config.raw.providers = {};
    await deleteUpstreamCopy(ctx, rec);
    expect(JSON.stringify(warnings)).toContain("not configured");
  });
});
