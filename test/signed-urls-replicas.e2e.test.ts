// Two gateway processes on one redis-server and one assets_dir, as the README's "Several replicas" runs them: a
// signed image URL handed out by one replica works on the other when server.signing_secret is set; without it, each
// replica warns at start (it draws a secret of its own, and the other replica refuses its links).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { ulid } from "ulid";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { postJson } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";

const WARNING = "server.signing_secret is not set";

async function replicas(redis: TestRedis, signingSecret: string | undefined): Promise<[ChildGateway, ChildGateway]> {
  const dir = mkdtempSync(join(tmpdir(), "mg-signed-replicas-"));
  const config = {
    ...mediaConfig({ server: { signing_secret: signingSecret, assets_dir: join(dir, "assets") } }),
    store: { kind: "redis", url: redis.url, prefix: `mg-${ulid()}:` },
  };
  const file = join(dir, "gateway.yaml");
  writeFileSync(file, YAML.stringify(config));
  return Promise.all([startChildGateway(file), startChildGateway(file)]);
}

async function imageUrl(gw: ChildGateway): Promise<string> {
  const r = await postJson(`${gw.baseURL}/images/generations`, { model: "sim/pixel", prompt: "a fox", size: "32x32", response_format: "url" }, auth(LIVE));
  expect(r.status, r.text).toBe(200);
  return r.json.data[0].url;
}

async function until<T>(f: () => T | undefined, ms = 5000): Promise<T | undefined> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const v = f();
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The same link, asked of another replica (same path and query, its origin). */
const on = (gw: ChildGateway, link: string) => {
  const u = new URL(link);
  return fetch(`${gw.url}${u.pathname}${u.search}`);
};

describe("signed asset URLs across two replicas", () => {
  let redis: TestRedis;
  const running: ChildGateway[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(running.map((g) => g.stop()));
    await redis?.stop();
  });

  it("without server.signing_secret each replica warns at start (and refuses the other's links); with it, links cross", async () => {
    const [a, b] = await replicas(redis, undefined);
    running.push(a, b);
    for (const g of [a, b]) {
      const line = await until(() => g.output().split("\n").find((l) => l.includes(WARNING))); // the log is asynchronous
      expect(line, g.output()).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ level: 40, msg: expect.stringContaining("on every replica") });
    }
    const link = await imageUrl(a);
    expect((await on(a, link)).status).toBe(200);
    expect((await on(b, link)).status).toBe(404); // what the warning is about

    const [c, d] = await replicas(redis, "one-secret-for-the-whole-deployment");
    running.push(c, d);
    for (const [from, to] of [[c, d], [d, c]] as const) {
      const got = await on(to, await imageUrl(from));
      expect(got.status).toBe(200);
      expect(got.headers.get("content-type")).toBe("image/png");
    }
    expect(c.output() + d.output()).not.toContain(WARNING);
  }, 60_000);
});
