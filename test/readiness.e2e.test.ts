// GET /readyz beside /healthz: a refused reload is reported (and, with server.ready_requires_current_config, makes
// the replica unready until the file is fixed); a graceful shutdown makes it 503 for whoever still asks on an open
// connection. (The store's part: test/store-outage-*.e2e.test.ts.)
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { readiness } from "../core/readiness.ts";
import { exchange, head } from "./helpers/raw-http.ts";

let gw: TestGateway | undefined;
let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = fake = undefined;
});

/** A HEAD request as a load balancer's probe sends it: the status, the headers, and whatever bytes followed them. */
async function headProbe(port: number, path: string) {
  const x = await exchange(port, (w) => w.write(head("HEAD", path, { host: "lb", connection: "close" })).then(() => {}), { waitMs: 5000 });
  const end = x.data.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = x.data.subarray(0, end).toString("latin1").split("\r\n");
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
  return { status: Number(statusLine!.split(" ")[1]), headers, after: x.data.subarray(end + 4).toString("latin1") };
}

/** The headers a probe's GET and HEAD must agree on. */
const probeHeaders = (h: Record<string, string | null>) => ({ type: h["content-type"], length: h["content-length"], cache: h["cache-control"], retry: h["retry-after"] });

const ready = async (url: string) => {
  const r = await fetch(`${url}/readyz`);
  return { status: r.status, body: (await r.json()) as any };
};

describe("/readyz", () => {
  it("reports a refused reload; makes the replica unready for it only when asked to", async () => {
    fake = await startFakeOpenAI();
    const config = policyConfig(fake.baseUrl);
    gw = await startTestGateway(config);
    expect(await ready(gw.url)).toMatchObject({ status: 200, body: { status: "ready", checks: { store: { status: "up" }, config: { status: "ok" }, shutdown: false } } });

    writeFileSync(gw.configFile, "models: [not, a, map\n");
    expect((await gw.gateway.reload()).ok).toBe(false);
    const stale = await ready(gw.url);
    expect(stale.status).toBe(200); // still serving the previous, valid config
    expect(stale.body.checks.config.status).toBe("reload_refused");
    // How many, not what: the problems name files and config lines, and anyone on the API port may ask.
    expect(stale.body.checks.config.problems).toBeGreaterThan(0);
    expect(JSON.stringify(stale.body)).not.toContain(gw.configFile);

    writeFileSync(gw.configFile, YAML.stringify({ ...config, server: { ready_requires_current_config: true } }));
    expect((await gw.gateway.reload()).ok).toBe(true);
    expect((await ready(gw.url)).status).toBe(200);
    writeFileSync(gw.configFile, "models: [not, a, map\n");
    await gw.gateway.reload();
    expect(await ready(gw.url)).toMatchObject({ status: 503, body: { status: "not_ready" } });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    writeFileSync(gw.configFile, YAML.stringify({ ...config, server: { ready_requires_current_config: true } }));
    expect((await gw.gateway.reload()).ok).toBe(true);
    expect((await ready(gw.url)).status).toBe(200);
  });

  it("HEAD /healthz and /readyz answer the status and headers GET does, with no body (load balancers probe with HEAD)", async () => {
    fake = await startFakeOpenAI();
    const config = { ...policyConfig(fake.baseUrl), server: { ready_requires_current_config: true } };
    gw = await startTestGateway(config);
    const running = gw;
    const same = async (path: string, status: number) => {
      const got = await fetch(`${running.url}${path}`);
      expect(got.status).toBe(status);
      await got.text();
      const probe = await headProbe(running.port, path);
      expect(probe.status, `HEAD ${path}`).toBe(status);
      expect(probe.after, `HEAD ${path} sent a body`).toBe("");
      expect(probeHeaders(probe.headers)).toEqual(probeHeaders(Object.fromEntries(got.headers)));
      expect(probe.headers["x-request-id"]).toBeTruthy();
    };
    await same("/healthz", 200);
    await same("/readyz", 200);
    writeFileSync(gw.configFile, "models: [not, a, map\n");
    await gw.gateway.reload();
    await same("/readyz", 503); // not ready: its Retry-After too
    await same("/healthz", 200);
  });

  it("is not ready once a graceful shutdown has begun (new connections are refused from then on)", async () => {
    fake = await startFakeOpenAI({ chunkDelayMs: 50 });
    gw = await startTestGateway(policyConfig(fake.baseUrl));
    expect((await readiness(gw.gateway)).ready).toBe(true);
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth() }, body: JSON.stringify(chat("openai/gpt-4o-mini", { stream: true })) });
    const draining = gw.shutdown({ graceMs: 10_000 }); // waits for the stream
    const r = await readiness(gw.gateway);
    expect(r).toMatchObject({ ready: false, body: { status: "not_ready", checks: { shutdown: true } } });
    await expect(fetch(`${gw.url}/readyz`)).rejects.toThrow(); // a probe's new connection: refused, also "not ready"
    expect(await res.text()).toContain("data: [DONE]");
    await draining;
    gw = undefined;
  });
});
