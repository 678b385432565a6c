// A key's or a project's rpm changed while the gateway runs (an admin PATCH, a gateway.yaml reload) takes effect at
// once on what the window really used: raised, the requests made so far count at the new limit (not the old limit's
// minute of waiting); lowered, they still count (the next request may be refused at once) and keep counting as time
// passes. The gateway as shipped (the default pipeline, the admin API), on SQLite and on a real redis-server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, OTHER, policyConfig } from "./helpers/policy-config.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";

const WRITE = "mg_admin_write_key_for_rate_chg1";

describe.each(["sqlite", "redis"])("a changed rate limit (%s store)", (kind) => {
  let fake: FakeOpenAI;
  let redis: TestRedis | undefined;
  let gw: TestGateway;
  const store = () => (kind === "redis" ? { kind: "redis", url: redis!.url, prefix: "rate-chg:" } : { kind: "sqlite", path: "./gateway.db" });
  const config = (otherRpm: number) => ({
    ...policyConfig(fake.baseUrl, { store: store(), other: { rate_limits: { rpm: otherRpm } } }),
    admin_keys: [{ id: "ops", sha256: sha256Hex(WRITE), scope: "write" }],
  });
  const admin = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${gw.url}/admin/v1${path}`, {
      method, headers: { authorization: `Bearer ${WRITE}`, "content-type": "application/json" }, body: JSON.stringify(body),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return (await res.json()) as any;
  };
  const send = (key: string) => postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(key));
  const statuses = async (key: string, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await send(key)).status);
    return out;
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    if (kind === "redis") redis = await startRedis();
    gw = await startTestGateway(config(10));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("raised through the admin API: the 2 requests of rpm 2 leave 98 of rpm 100, so the next 10 all pass", async () => {
    const { key } = await admin("POST", "/keys", { project: "acme", id: "raised", rate_limits: { rpm: 2 } });
    expect(await statuses(key, 3)).toEqual([200, 200, 429]);
    await admin("PATCH", "/keys/acme/raised", { rate_limits: { rpm: 100 } });
    const after: number[] = [];
    let last: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 10; i++) after.push((last = await send(key)).status);
    expect(after).toEqual(Array(10).fill(200));
    expect(last!.headers.get("x-ratelimit-limit-requests")).toBe("100");
    // 12 made (the refused one is not charged), a little of them refilled since: at most 88 used of the 100.
    expect(Number(last!.headers.get("x-ratelimit-remaining-requests"))).toBeGreaterThanOrEqual(88);
  });

  it("lowered through the admin API: 5 requests made at rpm 100 are 2.5 minutes of rpm 2, refused still seconds later", async () => {
    const { key } = await admin("POST", "/keys", { project: "acme", id: "lowered", rate_limits: { rpm: 100 } });
    expect(await statuses(key, 5)).toEqual(Array(5).fill(200));
    await admin("PATCH", "/keys/acme/lowered", { rate_limits: { rpm: 2 } });
    const start = Date.now();
    const refused = await send(key);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe("RATE_LIMITED");
    expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    // The 6th fits once 4 of the 5 refilled at 2 a minute: about 2 minutes from now, well past a minute.
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(60);
    // Past the 3 s the 5 requests owed at rpm 100 (and Redis's keys' expiry 1 s after): still refused, and the wait
    // is the first one less the time gone by, not a fresh window.
    await new Promise((r) => setTimeout(r, 4500));
    const later = await send(key);
    const elapsed = Date.now() - start;
    expect(later.status).toBe(429);
    expect(later.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const first = Number(refused.headers.get("retry-after-ms")), next = Number(later.headers.get("retry-after-ms"));
    expect(next).toBeLessThanOrEqual(first - 4500 + 1);
    expect(next).toBeGreaterThanOrEqual(first - elapsed - 10);
  });

  it("raised by a gateway.yaml reload (a project's rpm 10 to 100): the 10 used leave 90, so the next 10 all pass", async () => {
    expect(await statuses(OTHER, 11)).toEqual([...Array(10).fill(200), 429]);
    writeFileSync(gw.configFile, YAML.stringify(config(100)));
    expect((await gw.gateway.reload()).ok).toBe(true);
    expect(await statuses(OTHER, 10)).toEqual(Array(10).fill(200));
  });
});
