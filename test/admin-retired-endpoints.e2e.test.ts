// An operator's views keep a retiring or retired endpoint listed, marked with its day and whether it has come
// (the router sends a retired one nothing): GET /admin/v1/models and the console's /admin/v1/config/loaded.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import * as v from "../core/generated/validators.js";

const READ = "mg_admin_read_key_for_retired_00001";
const DAY = Date.UTC(2026, 10, 30);
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    store: { kind: "memory" },
    metrics: { listener: false },
    providers: { sim: { protocol: "sim" }, other: { protocol: "sim" } },
    models: {
      "acme/half": { endpoints: [
        { provider: "sim", model: "old", retires: "2026-11-30", replacement: "acme/next" },
        { provider: "other", model: "new" },
      ] },
      "acme/next": { endpoints: [{ provider: "sim", model: "next" }] },
    },
    projects: { p: { keys: [] } },
    admin_keys: [{ id: "viewer", sha256: sha256Hex(READ), scope: "read" }],
  });
});
afterEach(() => vi.useRealTimers());
afterAll(async () => { await gw?.close(); });

const get = async (path: string) => {
  const res = await fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${READ}` } });
  expect(res.status).toBe(200);
  return res.json() as Promise<any>;
};
const half = (body: any) => body.models.find((m: any) => m.id === "acme/half");

describe("admin views of a retiring endpoint", () => {
  it("/admin/v1/models marks it with its day, retired false the day before and true from that day; the other endpoint unmarked", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: DAY - 60_000, shouldAdvanceTime: true });
    const before = await get("/models");
    expect(v.validateAdminModels(before)).toBe(true);
    expect(half(before).endpoints.map((e: any) => [e.provider, e.retires, e.retired])).toEqual([["sim", "2026-11-30", false], ["other", undefined, undefined]]);
    vi.setSystemTime(DAY);
    expect(half(await get("/models")).endpoints.map((e: any) => [e.provider, e.retires, e.retired])).toEqual([["sim", "2026-11-30", true], ["other", undefined, undefined]]);
  });

  it("/admin/v1/config/loaded lists the endpoint and marks it under retiring", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: DAY, shouldAdvanceTime: true });
    const loaded = await get("/config/loaded");
    expect(v.validateAdminConfigLoaded(loaded)).toBe(true);
    expect(half(loaded)).toEqual({ id: "acme/half", type: "language", endpoints: ["sim", "other"],
      retiring: [{ provider: "sim", upstream_model: "old", retires: "2026-11-30", retired: true }] });
    expect(loaded.models.find((m: any) => m.id === "acme/next").retiring).toBeUndefined();
  });
});
