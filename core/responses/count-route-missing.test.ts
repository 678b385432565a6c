import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.ts";
import { countRouteMissing } from "./count-route-missing.ts";

const upstream = (status: number, code: "UPSTREAM_ERROR" | "INVALID_REQUEST", extra: Record<string, unknown> = {}) =>
  new GatewayError(code === "INVALID_REQUEST" ? 400 : 502, code, "x", { details: { provider: "up", upstream_status: status, ...extra } });

describe("countRouteMissing", () => {
  it("is a 404 or 405 the gateway read as its configuration, not the client's", () => {
    expect(countRouteMissing(upstream(404, "UPSTREAM_ERROR", { upstream_error: { code: "unknown_url" } }))).toBe(true);
    expect(countRouteMissing(upstream(405, "UPSTREAM_ERROR", { upstream_error: "Method Not Allowed" }))).toBe(true);
  });

  it("is not a lost item or response (the client's 404), a missing model, or any other failure", () => {
    expect(countRouteMissing(upstream(404, "INVALID_REQUEST", { upstream_error: { message: "Item with id 'rs_1' not found." } }))).toBe(false);
    expect(countRouteMissing(upstream(404, "UPSTREAM_ERROR", { reason: "upstream_not_found" }))).toBe(false);
    expect(countRouteMissing(upstream(500, "UPSTREAM_ERROR"))).toBe(false);
    expect(countRouteMissing(new Error("boom"))).toBe(false);
  });
});
