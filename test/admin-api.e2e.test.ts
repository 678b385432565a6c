// The admin API as shipped: SQLite store, the full default pipeline, a live key with a budget and rate limits.
// Admin keys only (a project key is refused), read scope cannot change anything, every error in the envelope; keys
// created through it work at once with their own limits, revocation and rotation take effect, and usage, requests,
// budgets, rate limits, providers and the config read back what the gateway did.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request as httpRequest } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import YAML from "yaml";
import { postJson } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, KEY, OTHER, policyConfig } from "./helpers/policy-config.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import type { RunningGateway } from "../core/server.ts";
import type { ValidateFunction } from "ajv";
import * as v from "../core/generated/validators.js";

/** Which schema each answer is documented by (schemas/responses/admin-*.schema.json): every answer is checked. */
const SHAPES: [string, RegExp, ValidateFunction][] = [
  ["GET", /^\/usage/, v.validateAdminUsage], ["GET", /^\/budgets/, v.validateAdminBudgets], ["GET", /^\/rate-limits/, v.validateAdminRateLimits],
  ["GET", /^\/requests\/[^?]+$/, v.validateAdminRequest], ["GET", /^\/requests/, v.validateAdminRequestPage],
  ["GET", /^\/keys\/[^/?]+\/[^/?]+$/, v.validateAdminKey], ["GET", /^\/keys/, v.validateAdminKeyList],
  ["POST", /^\/keys$/, v.validateAdminKeyCreated], ["POST", /\/rotate$/, v.validateAdminKeyCreated], ["POST", /\/revoke$/, v.validateAdminKey], ["PATCH", /./, v.validateAdminKey],
  ["GET", /^\/providers/, v.validateAdminProviders], ["GET", /^\/models/, v.validateAdminModels], ["GET", /^\/config\/loaded/, v.validateAdminConfigLoaded], ["GET", /^\/config/, v.validateAdminConfig],
];

function conforms(method: string, path: string, status: number, json: unknown): void {
  const check = status >= 400 ? v.validateError : SHAPES.find(([m, re]) => m === method && re.test(path))?.[2];
  if (!check) throw new Error(`no documented shape for ${method} ${path}`);
  expect(check(json), `${method} ${path}: ${JSON.stringify(check.errors)}`).toBe(true);
}

const WRITE = "mg_admin_write_key_for_tests_0001";
const READ = "mg_admin_read_key_for_tests_00001";

describe("admin API", () => {
  let fake: FakeOpenAI;
  let gw: RunningGateway;
  let log: CapturedLog;
  let admin: string;

  const call = async (method: string, path: string, key: string | undefined, body?: unknown) => {
    const res = await fetch(`${admin}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as any;
    conforms(method, path, res.status, json);
    return { status: res.status, headers: res.headers, json };
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const config = policyConfig(fake.baseUrl, {
      store: { kind: "sqlite", path: "./data/gateway.db" },
      acme: { budget: { usd: "5", period: "month" }, rate_limits: { rpm: 100, tpm: 100000 }, project_rate_limits: { rpm: 100 } },
      // Guardrails and the response cache leave their marks on records: the admin API shows them.
      other: {
        guardrails: { rules: [{ name: "no-secrets", detect: ["secret"], action: "block" }, { name: "competitors", keywords: ["Globex"], action: "flag" }] },
        cache: { mode: "always", hit_price_usd: "0.0001" },
      },
    });
    ({ gw, log } = await startLoggedGateway({
      ...config,
      admin_keys: [{ id: "ops", sha256: sha256Hex(WRITE), scope: "write" }, { id: "viewer", sha256: sha256Hex(READ), scope: "read" }],
    }, {}, "info"));
    admin = `${gw.url}/admin/v1`;
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("takes admin keys only: none, a project key, an unknown one are 401 in the error envelope; read scope cannot write (403)", async () => {
    const none = await call("GET", "/keys", undefined);
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({ code: "INVALID_API_KEY", message: expect.stringMatching(/admin key/) });
    const project = await call("GET", "/keys", KEY);
    expect(project.status).toBe(401);
    expect(project.json.error.message).toMatch(/Project keys cannot use the admin API/);
    expect((await call("GET", "/keys", "mg_admin_not_a_configured_key_000")).json.error.message).toBe("Unknown admin key");
    expect((await call("GET", "/keys", READ)).status).toBe(200);
    const denied = await call("POST", "/keys", READ, { project: "acme" });
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: "FORBIDDEN", details: { admin_key: "viewer", required: "write" } });
    // And an admin key is no project key.
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(WRITE))).status).toBe(401);
  });

  it("refuses before reading the body: a read-scope write with a large body is answered at once and the connection closed", async () => {
    const answer = await new Promise<{ status: number; connection?: string }>((resolve, reject) => {
      const req = httpRequest(`${admin}/keys`, { method: "POST", headers: { authorization: `Bearer ${READ}`, "content-type": "application/json", "content-length": String(50 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode!, connection: res.headers.connection });
      });
      req.on("error", reject);
      req.write("{\"project\":\"acme\","); // the rest never comes
    });
    expect(answer).toEqual({ status: 403, connection: "close" });
  });

  it("a path or method no admin route takes: without a valid admin key the same 401 as any admin route; with one a 404, or a 405 with Allow; every answer no-store", async () => {
    const routed = await call("GET", "/usage", undefined);
    expect(routed.status).toBe(401);
    // Without a key nothing tells which admin routes exist: an unknown path, a known one with another method.
    for (const [method, path] of [["GET", "/nope"], ["PUT", "/usage"], ["DELETE", "/keys/acme/ci"], ["GET", ""]]) {
      const none = await call(method!, path!, undefined);
      expect({ at: `${method} ${path}`, status: none.status, json: none.json, allow: none.headers.get("allow"), cache: none.headers.get("cache-control") })
        .toEqual({ at: `${method} ${path}`, status: 401, json: routed.json, allow: null, cache: "no-store" });
      const project = await call(method!, path!, KEY);
      expect(project.json.error.message).toMatch(/Project keys cannot use the admin API/);
    }
    const unknown = await call("GET", "/nope", WRITE);
    expect([unknown.status, unknown.json.error.code, unknown.headers.get("cache-control")]).toEqual([404, "NOT_FOUND", "no-store"]);
    expect((await call("GET", "/nope", READ)).status).toBe(404);
    const method = await call("DELETE", "/keys/acme/ci", WRITE);
    expect([method.status, method.json.error.code, method.headers.get("allow"), method.headers.get("cache-control")]).toEqual([405, "INVALID_REQUEST", "GET, HEAD, PATCH", "no-store"]);
    expect((await call("PUT", "/usage", READ)).headers.get("allow")).toBe("GET, HEAD");
    // Logged and counted as requests no route takes, with the admin key that asked (never the key).
    const lines = await log.accessOnce((l) => l.endpoint === "unrouted" && l.path === "/admin/v1/keys/acme/ci", 3);
    expect(lines.map((l) => [l.method, l.status, l.adminKeyId])).toEqual([["DELETE", 401, undefined], ["DELETE", 401, undefined], ["DELETE", 405, "ops"]]);
  });

  it("an unknown admin path with a large body: refused (401 without a key, 404 with one) before the body is read, and the connection closed", async () => {
    const send = (key: string | undefined) => new Promise<{ status: number; connection?: string; cache?: string }>((resolve, reject) => {
      const req = httpRequest(`${admin}/nope`, {
        method: "POST",
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), "content-type": "application/json", "content-length": String(50 * 1024 * 1024) },
      }, (res) => {
        res.resume();
        resolve({ status: res.statusCode!, connection: res.headers.connection, cache: res.headers["cache-control"] });
      });
      req.on("error", reject);
      req.write("{\"project\":\"acme\","); // the rest never comes
    });
    expect(await send(undefined)).toEqual({ status: 401, connection: "close", cache: "no-store" });
    expect(await send(WRITE)).toEqual({ status: 404, connection: "close", cache: "no-store" });
  });

  it("an admin path that is not valid percent-encoding: 401 without a key, the 400 with one, no-store", async () => {
    const get = (key: string | undefined) => new Promise<{ status: number; code: string; cache?: string }>((resolve, reject) => {
      httpRequest(`${admin}/keys/%zz`, { headers: key ? { authorization: `Bearer ${key}` } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, code: JSON.parse(Buffer.concat(chunks).toString()).error.code, cache: res.headers["cache-control"] }));
      }).on("error", reject).end();
    });
    expect(await get(undefined)).toEqual({ status: 401, code: "INVALID_API_KEY", cache: "no-store" });
    expect(await get(READ)).toEqual({ status: 400, code: "INVALID_REQUEST", cache: "no-store" });
  });

  it("validates bodies against their schema, naming the field", async () => {
    const bad = await call("POST", "/keys", WRITE, { project: "acme", rate_limits: { rpm: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "INVALID_REQUEST", details: { field: "rate_limits.rpm" } });
    const unknown = await call("POST", "/keys", WRITE, { project: "nope" });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.details.field).toBe("project");
    expect((await call("POST", "/keys", WRITE, { project: "acme", id: "k1" })).status).toBe(409); // k1 is gateway.yaml's
    const past = await call("POST", "/keys", WRITE, { project: "acme", expires_at: "2001-01-01T00:00:00Z" });
    expect(past.json.error.details.field).toBe("expires_at");
  });

  it("creates a key that works at once, with its own rate limit, and lists it beside gateway.yaml's keys with its last use", async () => {
    const created = await call("POST", "/keys", WRITE, { project: "acme", id: "ci-bot", name: "CI", rate_limits: { rpm: 2 } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ project: "acme", id: "ci-bot", source: "api", status: "active", created_by: "ops", rate_limits: { rpm: 2 } });
    const key: string = created.json.key;
    expect(key).toMatch(/^mg_live_/);
    expect(created.json.hint).toBe(key.slice(-4));
    expect((await call("POST", "/keys", WRITE, { project: "acme", id: "ci-bot" })).status).toBe(409);

    const first = await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(key));
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(key))).status).toBe(200);
    const third = await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(key));
    expect(third.status).toBe(429);

    const list = await call("GET", "/keys?project=acme", READ);
    expect(list.status).toBe(200);
    const byId = Object.fromEntries(list.json.keys.map((k: any) => [k.id, k]));
    expect(byId.k1).toMatchObject({ source: "yaml", status: "active" });
    expect(byId["ci-bot"]).toMatchObject({ source: "api", status: "active", name: "CI" });
    expect(Date.parse(byId["ci-bot"].last_used_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(JSON.stringify(list.json)).not.toContain(key);
    expect((await call("GET", "/keys/acme/ci-bot", READ)).json.id).toBe("ci-bot");
    // Changed in place: its own limit is now 50 rpm, effective at once.
    const changed = await call("PATCH", "/keys/acme/ci-bot", WRITE, { name: "CI bot", rate_limits: { rpm: 50 }, expires_at: "2099-01-01T00:00:00Z" });
    expect(changed.json).toMatchObject({ name: "CI bot", rate_limits: { rpm: 50 }, expires_at: "2099-01-01T00:00:00.000Z" });
    // The 2 requests made count against 50 (test/rate-limit-change.e2e.test.ts): the next passes.
    const after = await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(key));
    expect(after.status).toBe(200);
    expect(after.headers.get("x-ratelimit-limit-requests")).toBe("50");
    expect((await call("PATCH", "/keys/acme/ci-bot", WRITE, { rate_limits: null })).json.rate_limits).toBeNull();
    expect((await call("PATCH", "/keys/acme/ci-bot", WRITE, {})).json.error.code).toBe("INVALID_REQUEST"); // nothing to change
    expect((await call("PATCH", "/keys/acme/k1", WRITE, { name: "x" })).status).toBe(409);
    expect((await call("GET", "/keys/acme/missing", READ)).status).toBe(404);
  });

  it("revokes a key (refused at once) and rotates one (both work during the overlap; overlap 0 stops the old one)", async () => {
    const a = (await call("POST", "/keys", WRITE, { project: "acme", id: "to-revoke" })).json;
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(a.key))).status).toBe(200);
    const revoked = await call("POST", "/keys/acme/to-revoke/revoke", WRITE);
    expect(revoked.json).toMatchObject({ status: "revoked" });
    const refused = await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(a.key));
    expect(refused.status).toBe(401);
    expect(refused.json.error.message).toMatch(/revoked/);
    expect((await call("POST", "/keys/acme/k1/revoke", WRITE)).status).toBe(409); // gateway.yaml's: changed in the file

    const b = (await call("POST", "/keys", WRITE, { project: "acme", id: "svc", rate_limits: { rpm: 50 } })).json;
    const rotated = await call("POST", "/keys/acme/svc/rotate", WRITE, { overlap_seconds: 600 });
    expect(rotated.status).toBe(201);
    expect(rotated.json).toMatchObject({ id: "svc-r2", rotated_from: "svc", rate_limits: { rpm: 50 }, previous: { id: "svc", replaced_by: "svc-r2" } });
    expect(Date.parse(rotated.json.previous.expires_at)).toBeGreaterThan(Date.now() + 500_000);
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(b.key))).status).toBe(200);
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(rotated.json.key))).status).toBe(200);
    const again = await call("POST", "/keys/acme/svc-r2/rotate", WRITE, { overlap_seconds: 0 });
    expect(again.json.id).toBe("svc-r3");
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(rotated.json.key))).status).toBe(401);
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(again.json.key))).status).toBe(200);
  });

  it("reads usage, requests, budgets and rate limits back from what the gateway did", async () => {
    const done = await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(KEY, { "x-request-id": "admin-test-req-1" }));
    expect(done.status).toBe(200);
    const usage = await call("GET", "/usage?since=1h&group_by=project,key", READ);
    expect(usage.status).toBe(200);
    const k1 = usage.json.rows.find((r: any) => r.group.project === "acme" && r.group.key === "k1");
    expect(k1.requests).toBeGreaterThanOrEqual(1);
    expect(k1.cost_usd).toMatch(/^\d+(\.\d+)?$/);
    expect(Number(usage.json.total.cost_usd)).toBeGreaterThan(0);
    expect((await call("GET", "/usage?group_by=colour", READ)).json.error.details.field).toBe("group_by");

    const search = await call("GET", "/requests?request_id=admin-test-req-1", READ);
    expect(search.json.requests).toHaveLength(1);
    const rec = search.json.requests[0];
    expect(rec).toMatchObject({ request_id: "admin-test-req-1", project: "acme", key: "k1", model: "openai/gpt-4o-mini", status: 200 });
    expect((await call("GET", `/requests/${rec.generation_id}`, READ)).json.request_id).toBe("admin-test-req-1");
    expect((await call("GET", "/requests/gen_nothing_like_it", READ)).status).toBe(404);
    // Newest first, paged.
    const page1 = await call("GET", "/requests?project=acme&limit=2", READ);
    expect(page1.json.requests).toHaveLength(2);
    expect(Date.parse(page1.json.requests[0].at)).toBeGreaterThanOrEqual(Date.parse(page1.json.requests[1].at));
    const page2 = await call("GET", `/requests?project=acme&limit=2&cursor=${page1.json.next}`, READ);
    expect(page2.json.requests[0].generation_id).not.toBe(page1.json.requests[1].generation_id);
    expect(Date.parse(page2.json.requests[0].at)).toBeLessThanOrEqual(Date.parse(page1.json.requests[1].at));

    const budgets = await call("GET", "/budgets?project=acme", READ);
    const b = budgets.json.projects[0].budget;
    expect(b).toMatchObject({ period: "month", limit_usd: "5", reserved_usd: "0", exhausted: false });
    expect(Number(b.spent_usd)).toBeGreaterThan(0);
    expect(Number(b.remaining_usd)).toBeCloseTo(5 - Number(b.spent_usd), 9);

    const limits = await call("GET", "/rate-limits?project=acme", READ);
    const project = limits.json.limits.find((l: any) => l.scope === "project");
    expect(project.windows[0]).toMatchObject({ name: "rpm", limit: 100 });
    expect(project.windows[0].remaining).toBeLessThan(100); // one refills every 600 ms: the last request is still counted
    const k1Limits = limits.json.limits.find((l: any) => l.scope === "key" && l.key === "k1");
    expect(k1Limits.windows.map((w: any) => w.name)).toEqual(["rpm", "tpm"]);
    // Reading did not charge: the same remaining twice.
    const again = await call("GET", "/rate-limits?project=acme&key=k1", READ);
    expect(again.json.limits[0].windows[0].remaining).toBeGreaterThanOrEqual(k1Limits.windows[0].remaining);
  });

  it("usage by key or of one key: the same key id in two projects is one row per project, each naming its project", async () => {
    // acme's k1 is gateway.yaml's; project other gets a key of the same id through the API.
    const created = await call("POST", "/keys", WRITE, { project: "other", id: "k1" });
    expect(created.status).toBe(201);
    expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(KEY))).status).toBe(200);
    // Each its own question: project other's response cache would answer a repeat (the next test counts its hits).
    for (const content of ["tenancy one", "tenancy two"]) {
      expect((await postJson(`${gw.url}/api/v1/chat/completions`, chat("openai/gpt-4o-mini", { messages: [{ role: "user", content }] }), auth(created.json.key))).status).toBe(200);
    }
    const requestsOf = async (project: string) => (await call("GET", `/requests?since=1h&project=${project}&key=k1&limit=500`, READ)).json.requests.length;
    const [acme, other] = [await requestsOf("acme"), await requestsOf("other")];
    expect(other).toBe(2);
    const byKey = await call("GET", "/usage?since=1h&group_by=key", READ);
    expect(byKey.json.group_by).toEqual(["project", "key"]);
    expect(byKey.json.rows.filter((r: any) => r.group.key === "k1").map((r: any) => [r.group.project, r.requests])).toEqual([["acme", acme], ["other", other]]);
    // One key id without a project: answered per project, not both projects' sums as one.
    const oneKey = await call("GET", "/usage?since=1h&key=k1", READ);
    expect(oneKey.json.group_by).toEqual(["project"]);
    expect(oneKey.json.rows.map((r: any) => [r.group.project, r.requests])).toEqual([["acme", acme], ["other", other]]);
    const inOther = await call("GET", "/usage?since=1h&key=k1&project=other", READ);
    expect(inOther.json.rows.map((r: any) => [r.group, r.requests])).toEqual([[{}, other]]);
  });

  it("a record shows what guardrails did (a refusal is outcome blocked) and whether the response cache answered", async () => {
    const send = (content: string, id: string) => postJson(`${gw.url}/api/v1/chat/completions`, chat("openai/gpt-4o-mini", { messages: [{ role: "user", content }] }), auth(OTHER, { "x-request-id": id }));
    expect((await send("my key is sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA", "adm-blocked")).status).toBe(400);
    expect((await send("what does Globex sell?", "adm-flagged")).status).toBe(200);
    expect((await send("cache me", "adm-miss")).status).toBe(200);
    const hit = await send("cache me", "adm-hit");
    expect(hit.headers.get("x-mg-cache")).toBe("hit");
    const page = await call("GET", "/requests?project=other&limit=50", READ);
    const byId = Object.fromEntries(page.json.requests.map((r: any) => [r.request_id, r]));
    expect(byId["adm-blocked"]).toMatchObject({ outcome: "blocked", status: 400, guardrail: "block:no-secrets", provider: "", attempts: 0, cost_usd: "0", cache_hit: false });
    expect(byId["adm-flagged"]).toMatchObject({ outcome: "ok", status: 200, guardrail: "flag:competitors", provider: "up", cache_hit: false });
    expect(byId["adm-miss"]).toMatchObject({ provider: "up", cache_hit: false });
    expect(byId["adm-miss"]).not.toHaveProperty("guardrail");
    expect(byId["adm-hit"]).toMatchObject({ provider: "cache", cache_hit: true, attempts: 0, input_tokens: 0, cost_usd: "0.0001" });
    // One record read alone says the same.
    expect((await call("GET", `/requests/${byId["adm-blocked"].generation_id}`, READ)).json).toEqual(byId["adm-blocked"]);
    expect((await call("GET", `/requests/${byId["adm-hit"].generation_id}`, READ)).json).toEqual(byId["adm-hit"]);
    // Usage by provider tells the cache's answers apart; the refusal counts as an error.
    const usage = await call("GET", "/usage?since=1h&project=other&group_by=provider", READ);
    expect(usage.json.rows.find((r: any) => r.group.provider === "cache")).toMatchObject({ requests: 1, errors: 0, cost_usd: "0.0001" });
    expect(usage.json.rows.find((r: any) => r.group.provider === "")).toMatchObject({ requests: 1, errors: 1, cost_usd: "0" });
  });

  it("shows providers, models (circuit state and live stats) and the config's state", async () => {
    const providers = await call("GET", "/providers", READ);
    expect(providers.json.providers.find((p: any) => p.name === "up")).toMatchObject({ protocol: "openai", enabled: true, circuits: { closed: 4, open: 0 } });
    const models = await call("GET", "/models", READ);
    const mini = models.json.models.find((m: any) => m.id === "openai/gpt-4o-mini");
    expect(mini.endpoints[0]).toMatchObject({ provider: "up", upstream_model: "gpt-4o-mini", circuit: "closed" });
    expect(mini.endpoints[0].uptime_last_1d).toBe(1); // every call so far succeeded
    expect(mini.endpoints[0]).toHaveProperty("latency_last_1h");
    const config = await call("GET", "/config", READ);
    expect(config.json).toMatchObject({ config: { status: "ok", last_reload: null }, store: { up: true, kind: "sqlite" }, counts: { admin_keys: 2 } });
  });

  it("config: the last reload (when, what started it, what it changed, or why it was refused), the same as /config/loaded shows", async () => {
    const file = gw.gateway.config.file;
    const good = readFileSync(file, "utf8");
    const changed = YAML.parse(good);
    changed.projects.other.rate_limits = { rpm: 1000 };
    try {
      writeFileSync(file, YAML.stringify(changed));
      const before = Date.now();
      expect((await gw.gateway.reload(file)).ok).toBe(true);
      const ok = (await call("GET", "/config", READ)).json.config;
      expect(ok).toMatchObject({ file, status: "ok", last_reload: { trigger: "call", ok: true, changes: { projects: { added: [], removed: [], changed: ["other"] }, settings: [] } } });
      expect(Date.parse(ok.last_reload.at)).toBeGreaterThanOrEqual(before - 1000);
      expect(ok.last_reload).not.toHaveProperty("problems");
      expect((await call("GET", "/config/loaded", READ)).json.last_reload).toEqual(ok.last_reload);

      writeFileSync(file, good.replace("budget:", "budget: [oops"));
      expect((await gw.gateway.reload(file)).ok).toBe(false);
      const refused = (await call("GET", "/config", READ)).json.config;
      expect(refused).toMatchObject({ status: "reload_refused", last_reload: { trigger: "call", ok: false } });
      expect(refused.last_reload.problems[0]).toMatch(/gateway\.yaml:\d+:\d+/);
      expect(refused.problems).toEqual(refused.last_reload.problems);
      expect(refused.last_reload).not.toHaveProperty("changes");
      expect((await call("GET", "/config/loaded", READ)).json.last_reload).toEqual(refused.last_reload);
    } finally {
      writeFileSync(file, good);
      expect((await gw.gateway.reload(file)).ok).toBe(true);
    }
  });

  it("writes an access-log line for admin requests (admin key id, never the key) and meters none of them", async () => {
    const before = log.access().filter((l) => l.endpoint === "admin").length;
    await call("GET", "/keys", READ);
    const lines = await log.accessOnce((l) => l.endpoint === "admin", before + 1);
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.at(-1)).toMatchObject({ method: "GET", path: "/admin/v1/keys", adminKeyId: "viewer", status: 200 });
    expect(log.lines.join("\n")).not.toContain(READ);
    const all = await call("GET", "/requests?limit=500", READ);
    expect(all.json.requests.every((r: any) => r.endpoint !== "admin")).toBe(true);
  });
});

describe("admin routes in /api/openapi.json", () => {
  it("lists every admin route with its body schema and the admin key scheme, and stays a valid OpenAPI 3.1 document", async () => {
    const { buildOpenApi } = await import("../core/openapi.ts");
    const { validate } = await import("@readme/openapi-parser");
    const doc = buildOpenApi();
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors).toEqual([]);
    const create = doc.paths["/admin/v1/keys"].post;
    expect(create.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/AdminKeyCreateRequest");
    expect(create.security).toEqual([{ adminKey: [] }]);
    expect(create.responses["201"]).toBeDefined();
    expect(create.responses["403"].$ref).toBe("#/components/responses/AdminError403");
    expect(doc.components.responses.AdminError403.content["application/json"].schema.$ref).toBe("#/components/schemas/ErrorEnvelope");
    expect(doc.paths["/admin/v1/keys/{project}/{id}/rotate"].post.parameters.map((p: any) => p.name)).toContain("project");
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/admin/v1/")).length).toBeGreaterThanOrEqual(12);
  });
});
