// The load harness's gateway: started as users start it (bin/model-gateway.mjs start) on the shipped config shape,
// found from its start banner, answering the bench key, logging as shipped (an access line per request in the file
// its stderr goes to), and stopped gracefully by the harness. If the banner or the shipped config changes shape,
// bench:load would stop measuring the product; this fails first.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import YAML from "yaml";
import { createFakeUpstream } from "./upstream.ts";
import { startGatewayBin, stopChildren } from "./procs.ts";
import { shippedBenchConfig, SHIPPED_MODEL } from "./shipped.ts";
import { BENCH_KEY } from "./config.ts";
import { createPool, fetchText, requestBody, type LoadTarget } from "./client.ts";

const upstream = createFakeUpstream({ chunks: 5 });
afterAll(async () => {
  await stopChildren();
  upstream.close();
});

describe("startGatewayBin", () => {
  it("starts the shipped shape with the bin, reads its address from the banner, and every answer leaves an access line", async () => {
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", () => r()));
    const dir = mkdtempSync(join(tmpdir(), "mg-bench-bin-"));
    const { config, env } = shippedBenchConfig(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`);
    expect(config.pipeline).toBeUndefined();
    expect(config.store).toMatchObject({ kind: "sqlite" });
    const file = join(dir, "gateway.yaml");
    writeFileSync(file, YAML.stringify(config));
    const logFile = join(dir, "stderr.log");
    const gw = await startGatewayBin("gateway", { config: file, env, logFile });
    expect(gw.pids).toEqual([gw.proc.pid]);
    expect(gw.metricsPort).toBeGreaterThan(0);
    const target: LoadTarget = { name: "gateway", origin: `http://127.0.0.1:${gw.port}`, path: "/api/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } };
    const pool = createPool(target.origin, 2);
    for (const stream of [false, true, false]) {
      const r = await fetchText(pool, target, requestBody(SHIPPED_MODEL, stream));
      expect(r.status).toBe(200);
      expect(r.headers["x-ratelimit-remaining-requests"]).toBeDefined(); // the live key's rate limits were checked
    }
    await pool.close();
    await stopChildren(); // SIGTERM: the graceful shutdown flushes the log
    const access = readFileSync(logFile, "utf8").split("\n").filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l));
    expect(access.map((l) => [l.status, l.stream, l.model])).toEqual([[200, false, SHIPPED_MODEL], [200, true, SHIPPED_MODEL], [200, false, SHIPPED_MODEL]]);
    expect(target.answered).toBe(3);
  }, 120_000);
});
