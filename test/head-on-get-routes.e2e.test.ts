// HEAD wherever GET is served (RFC 9110 §9.1; monitoring tools probe with HEAD), on the shipped gateway.yaml with a
// live key, rate limits and an admin key: the GET's status and headers, no body, and a 405's Allow that lists HEAD.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, SHIPPED_KEY, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { exchange, head } from "./helpers/raw-http.ts";

const ADMIN = "mg_admin_headprobe_key_for_tests_01";
/** A key whose window holds three requests a minute, so a HEAD's place in it shows. */
const TIGHT_KEY = testKey("headprobe-tight");
let gw: TestGateway;
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.admin_keys = [{ id: "probe", sha256: sha256Hex(ADMIN), scope: "read" }];
  config.projects.tight = { keys: [keyEntry("tight", TIGHT_KEY)], allow_models: ["*"], rate_limits: { rpm: 3 } };
  gw = await startTestGateway(config, { env: providerEnv(config) });
}, 30_000);
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

/** HEAD over a raw socket: the status, the headers, and any byte that followed them (there must be none). */
async function headOf(path: string, headers: Record<string, string>) {
  const x = await exchange(gw.port, (w) => w.write(head("HEAD", path, { host: "gw", ...headers, connection: "close" })).then(() => {}), { waitMs: 10_000 });
  const end = x.data.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = x.data.subarray(0, end).toString("latin1").split("\r\n");
  const h = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
  return { status: Number(statusLine!.split(" ")[1]), headers: h as Record<string, string>, after: x.data.subarray(end + 4).toString("latin1") };
}

/** Headers that differ between any two answers (the time, the request's id, a window's count). */
const VARYING = /^(date|server-timing|x-request-id|request-id|x-ratelimit-remaining.*|x-ratelimit-reset.*|keep-alive|connection|transfer-encoding|content-length)$/;
const fixed = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => !VARYING.test(k)).sort());

const bearer = { authorization: `Bearer ${SHIPPED_KEY}` };
const admin = { authorization: `Bearer ${ADMIN}` };

describe("HEAD on every GET route", () => {
  it("answers the GET's status and headers without a body: public API, catalog, Gemini models, Responses, OpenAPI, admin API", async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ["/api/v1/models", bearer],
      ["/api/v1/models/openai/gpt-4o-mini", bearer],
      ["/api/v1/models/openai/gpt-4o-mini/endpoints", bearer],
      ["/api/v1beta/models", { "x-goog-api-key": SHIPPED_KEY }],
      ["/api/v1beta/models/openai/gpt-4o-mini", { "x-goog-api-key": SHIPPED_KEY }],
      ["/api/v1/responses/resp_unknown", bearer],
      ["/api/v1/responses/resp_unknown/input_items", bearer],
      ["/api/openapi.json", {}],
      ["/admin/v1/keys", admin],
      ["/admin/v1/usage", admin],
      ["/admin/v1/keys", {}], // without the admin key: its 401, as for GET
      ["/healthz", {}],
    ];
    for (const [path, headers] of cases) {
      const got = await fetch(`${gw.url}${path}`, { headers });
      const body = await got.text();
      const probe = await headOf(path, headers);
      expect(probe.status, `HEAD ${path}`).toBe(got.status);
      expect(probe.status, `HEAD ${path}`).not.toBe(405);
      expect(probe.after, `HEAD ${path} sent a body`).toBe("");
      expect(fixed(probe.headers), `HEAD ${path}`).toEqual(fixed(Object.fromEntries(got.headers)));
      expect(probe.headers["x-request-id"], `HEAD ${path}`).toBeTruthy();
      if (got.headers.get("content-length")) expect(probe.headers["content-length"], `HEAD ${path}`).toBe(String(Buffer.byteLength(body)));
    }
  });

  it("is rate limited as the GET is: the key's window counts it, and refuses it with the GET's 429", async () => {
    const tight = { authorization: `Bearer ${TIGHT_KEY}` };
    const remaining = (h: Record<string, string | undefined>) => h["x-ratelimit-remaining-requests"];
    const get = () => fetch(`${gw.url}/api/v1/models`, { headers: tight });
    expect(remaining(Object.fromEntries((await get()).headers))).toBe("2");
    const probe = await headOf("/api/v1/models", tight);
    expect(probe.status).toBe(200);
    expect(remaining(probe.headers)).toBe("1");
    expect(remaining(Object.fromEntries((await get()).headers))).toBe("0");
    const refused = await headOf("/api/v1/models", tight);
    expect(refused.status).toBe(429);
    expect(refused.headers["retry-after"]).toMatch(/^\d+$/);
    expect(refused.after).toBe("");
  });

  it("a 405 on a GET route lists GET, HEAD in Allow; HEAD on a POST route is its 405", async () => {
    const post = await fetch(`${gw.url}/api/v1/models`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: "{}" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const headPost = await headOf("/api/v1/chat/completions", bearer);
    expect(headPost.status).toBe(405);
    expect(headPost.headers.allow).toBe("POST");
  });
});
