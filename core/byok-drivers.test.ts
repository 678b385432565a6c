// A BYOK driver (a provider the gateway has no key for, used with a project's own key) is built with the server's
// upstream settings of the request's config: a reload that changes them reaches BYOK attempts too, and the driver
// it supersedes is closed once no request holds the config that used it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { loadConfig } from "./config/load.ts";
import { Gateway } from "./gateway.ts";
import { createLogger } from "./log.ts";
import { byokDriver } from "./byok-drivers.ts";
import type { GatewayContext } from "./pipeline/context.ts";

const file = join(mkdtempSync(join(tmpdir(), "mg-byok-drivers-")), "gateway.yaml");
const write = (upstreamTimeoutMs: number) => writeFileSync(file, YAML.stringify({
  store: { kind: "memory" },
  server: { upstream_timeout_ms: upstreamTimeoutMs },
  providers: { byokp: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "${UNSET_BYOKP_KEY}" } },
  models: { "x/m": { endpoints: [{ provider: "byokp", model: "m" }] } },
  projects: { p: { keys: [], providers: { byokp: { api_key: "proj-own-key" } } } },
}));

let gw: Gateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** A request's view of a held snapshot, as core/http/handle.ts builds it. */
function requestOn(g: Gateway) {
  const snapshot = g.acquire();
  return { snapshot, ctx: { gateway: g, config: snapshot.config, drivers: snapshot.drivers } as unknown as GatewayContext };
}

describe("byokDriver", () => {
  it("after a reload that changes server.upstream_timeout_ms, a new request gets a new driver; the old one closes once its request is done", async () => {
    write(12_000);
    gw = await Gateway.create(await loadConfig(file, { env: {} }), { logger: createLogger("silent"), env: {} });
    const before = requestOn(gw);
    const old = byokDriver(before.ctx, "byokp")!;
    expect(old).toBeDefined();
    expect(byokDriver(before.ctx, "byokp")).toBe(old); // one per config, not one per request
    const closed = vi.spyOn(old, "close");

    write(2000);
    expect((await gw.reload(file)).ok).toBe(true);
    const after = requestOn(gw);
    const fresh = byokDriver(after.ctx, "byokp")!;
    expect(fresh).not.toBe(old);
    expect(closed).not.toHaveBeenCalled(); // its request is still running

    gw.release(before.snapshot);
    await vi.waitFor(() => expect(closed).toHaveBeenCalled());
    gw.release(after.snapshot);
  });

  it("a provider the config does not name has none", async () => {
    write(12_000);
    gw = await Gateway.create(await loadConfig(file, { env: {} }), { logger: createLogger("silent"), env: {} });
    const { snapshot, ctx } = requestOn(gw);
    expect(byokDriver(ctx, "nowhere")).toBeUndefined();
    gw.release(snapshot);
  });
});
