// The operator console in a real browser (headless Chromium, test/helpers/browser.ts) against the gateway as
// shipped: SQLite store, the full default pipeline, live keys with budgets and rate limits on two projects, a model
// whose first provider fails once (the request falls back) and one whose only provider fails (the request fails).
// The page loads nothing without an admin key and nothing from another host; the overview, spend and requests
// views show exactly what the admin API answers from the ledger; a key created in the console works with curl,
// rotates and, revoked, is refused; a read-scope key cannot create one. With CONSOLE_SCREENSHOTS=1 the test also
// writes docs/console/*.png (the screenshots docs/console.md shows).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import YAML from "yaml";
import type { Page } from "playwright-core";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { launchBrowser, type TestBrowser } from "./helpers/browser.ts";
import { toCsv } from "../console/csv.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { trafficOf } from "../core/admin/traffic-sampler.ts";
import { usd, int } from "../console/format.ts";
import { validateAdminConfigLoaded, validateAdminTraffic, validateAdminWhoami } from "../core/generated/validators.js";

const WRITE = "mg_admin_console_write_key_00001";
const READ = "mg_admin_console_read_key_000001";
const ACME = testKey("consoleacme");
const GLOBEX = testKey("consoleglobex");
const SHOTS = process.env.CONSOLE_SCREENSHOTS === "1" ? fileURLToPath(new URL("../docs/console/", import.meta.url)) : undefined;
const run = promisify(execFile);
/**
 * The browser's time zone: 8 hours behind UTC in winter, so a console that takes the ledger's UTC days for local ones
 * (or a date typed for a local day) is caught whatever the hour the test runs at.
 */
const ZONE = "America/Los_Angeles";

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: "user", content: "Hello there, console" }], max_tokens: 30, ...extra });

function config(flaky: string, steady: string, console?: Record<string, unknown>) {
  const price = { input: "0.000001", output: "0.000002" };
  return {
    store: { kind: "sqlite", path: "./data/gateway.db" },
    providers: {
      flaky: { protocol: "openai", base_url: flaky, api_key: "sk-fake-upstream" },
      steady: { protocol: "openai", base_url: steady, api_key: "sk-fake-upstream" },
    },
    models: {
      // flaky first, steady second: a retryable failure of flaky falls back to steady.
      "openai/gpt-4o-mini": { type: "language", context_window: 8000, max_tokens: 100, endpoints: [{ provider: "flaky", model: "gpt-4o-mini", pricing: price }, { provider: "steady", model: "gpt-4o-mini", pricing: price }] },
      // flaky only: when it fails twice (one target is tried twice), the request fails.
      "openai/gpt-4o": { type: "language", context_window: 8000, max_tokens: 100, endpoints: [{ provider: "flaky", model: "gpt-4o", pricing: { input: "0.00001", output: "0.00003" } }] },
    },
    projects: {
      acme: { keys: [keyEntry("acme-live", ACME)], budget: { usd: "5", period: "month" }, rate_limits: { rpm: 1000, tpm: 1_000_000 } },
      globex: { keys: [keyEntry("globex-live", GLOBEX)], budget: { usd: "2", period: "month" }, rate_limits: { rpm: 1000, tpm: 1_000_000 } },
    },
    admin_keys: [{ id: "ops", sha256: sha256Hex(WRITE), scope: "write" }, { id: "viewer", sha256: sha256Hex(READ), scope: "read" }],
    routing: { backoff_ms: 1, max_backoff_ms: 2 },
    ...(console ? { console } : {}),
  };
}

describe("operator console", () => {
  let flaky: FakeOpenAI;
  let steady: FakeOpenAI;
  let gw: TestGateway;
  let browser: TestBrowser;
  let page: Page;
  const requested: string[] = [];
  const consoleErrors: string[] = [];
  const ids: Record<string, string> = {};

  const admin = async (path: string, key = WRITE) => {
    const res = await fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as any;
  };
  const curlChat = async (key: string) => (await run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", `Authorization: Bearer ${key}`, "-H", "content-type: application/json", "-d", JSON.stringify(chat("openai/gpt-4o-mini")), `${gw.url}/api/v1/chat/completions`])).stdout;
  /** The text of `selector` once it is loaded (no "…" or "Loading" left in it). */
  const textOf = async (selector: string) => {
    const el = page.locator(selector).first();
    await expect.poll(async () => (await el.textContent()) ?? "…", { timeout: 10_000 }).not.toMatch(/…|Loading/);
    return ((await el.textContent()) ?? "").trim();
  };
  const view = async (name: string) => {
    await page.click(`[data-nav="${name}"]`);
    await page.waitForSelector(`main[data-view="${name}"]`);
  };
  /** The page as it looks (`fullPage`: all of it, else the window: a long table stays short). */
  const shot = async (name: string, fullPage = true) => {
    if (!SHOTS) return;
    mkdirSync(SHOTS, { recursive: true });
    await page.waitForTimeout(300); // charts draw on the next frame
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
  };
  /** How many pixels of a chart's canvas are in one of `colors` (its series' own: axes and grid are grey). */
  const inkOf = (testId: string, colors: string[]) => page.evaluate(({ testId, colors }) => {
    const wanted = colors.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
    const canvas = document.querySelector(`[data-testid="${testId}"] canvas`) as HTMLCanvasElement;
    const px = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i + 3]! > 200 && wanted.some((want) => want.every((v, j) => Math.abs(px[i + j]! - v) < 16))) n++;
    return n;
  }, { testId, colors });
  const signIn = async (key: string) => {
    await page.fill('[data-testid="key"]', key);
    await page.click('[data-testid="sign-in-submit"]');
    await page.waitForSelector('[data-testid="who"]');
  };

  /** Screenshots only: some seconds of mixed traffic, a sampled step each second, so the live charts have a shape. */
  const screenshotTraffic = async () => {
    const send = (key: string, body: unknown) => postJson(`${gw.url}/api/v1/chat/completions`, body, { authorization: `Bearer ${key}` });
    for (let s = 0; s < 20; s++) {
      const n = 3 + Math.round(4 * Math.abs(Math.sin(s / 3)));
      if (s % 6 === 3) flaky.failures.push({ kind: "status", status: 500 });
      await Promise.all(Array.from({ length: n }, (_, i) => send(i % 3 ? ACME : GLOBEX, chat(i % 4 ? "openai/gpt-4o-mini" : "openai/gpt-4o", i % 2 ? { stream: true, stream_options: { include_usage: true } } : {}))));
      await new Promise((r) => setTimeout(r, 1000));
      await trafficOf(gw.gateway).sample();
    }
  };

  beforeAll(async () => {
    [flaky, steady] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
    gw = await startTestGateway(config(flaky.baseUrl, steady.baseUrl));
    browser = await launchBrowser(undefined, { timezoneId: ZONE });
    browser.context.on("request", (r) => requested.push(r.url()));
    page = await browser.context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error" && !/Failed to load resource: the server responded with a status of (401|403)/.test(m.text())) consoleErrors.push(m.text());
    });
    page.on("pageerror", (e) => consoleErrors.push(String(e)));

    // An idle step first: the traffic's step then stands alone between idle ones, a lone value the live charts must
    // still show (a line needs two values).
    await trafficOf(gw.gateway).sample();
    // Traffic on two projects: acme's requests all succeed, one of them after a fallback (flaky answers 500, steady
    // serves it), one streamed; globex has one request that fails (flaky is gpt-4o's only provider, and fails twice).
    const send = async (key: string, body: unknown) => postJson(`${gw.url}/api/v1/chat/completions`, body, { authorization: `Bearer ${key}` });
    expect((await send(ACME, chat("openai/gpt-4o-mini"))).status).toBe(200);
    expect((await send(ACME, chat("openai/gpt-4o-mini"))).status).toBe(200);
    flaky.failures.push({ kind: "status", status: 500 });
    const fellBack = await send(ACME, chat("openai/gpt-4o-mini"));
    expect(fellBack.status).toBe(200);
    expect(fellBack.headers.get("x-mg-provider")).toBe("steady");
    ids.fallback = fellBack.headers.get("x-mg-generation-id")!;
    expect((await send(ACME, chat("openai/gpt-4o-mini", { stream: true, stream_options: { include_usage: true } }))).status).toBe(200);
    expect((await send(GLOBEX, chat("openai/gpt-4o-mini"))).status).toBe(200);
    expect((await send(GLOBEX, chat("openai/gpt-4o"))).status).toBe(200);
    flaky.failures.push({ kind: "status", status: 503 }, { kind: "status", status: 503 });
    const failed = await send(GLOBEX, chat("openai/gpt-4o"));
    expect(failed.status).toBe(502);
    ids.failed = failed.headers.get("x-mg-generation-id")!;
    // A step of live traffic now, instead of waiting for the sampler's next tick.
    await trafficOf(gw.gateway).sample();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await Promise.all([flaky?.close(), steady?.close()]);
  });

  it("serves a page that holds no data, locked down, and asks for an admin key before fetching anything", async () => {
    const res = await fetch(`${gw.url}/console`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const script = /src="([^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${gw.url}${script}`, { headers: { "accept-encoding": "gzip" } });
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("content-encoding")).toBe("gzip");
    // gzip;q=0 is "not gzip" (RFC 9110 12.5.3): the script as it is.
    const refused = await fetch(`${gw.url}${script}`, { headers: { "accept-encoding": "gzip;q=0, identity" } });
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(Number(refused.headers.get("content-length"))).toBe((await refused.arrayBuffer()).byteLength);
    expect((await fetch(`${gw.url}/console/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${gw.url}/console`, { method: "POST" })).status).toBe(405);

    await page.goto(`${gw.url}/console`);
    await page.waitForSelector('[data-testid="sign-in"]');
    await page.waitForTimeout(300);
    expect(requested.filter((u) => u.includes("/admin/v1"))).toEqual([]);
    await shot("sign-in");

    // A project key is not an admin key: the gateway's own message.
    await page.fill('[data-testid="key"]', ACME);
    await page.click('[data-testid="sign-in-submit"]');
    expect(await textOf('[data-testid="sign-in-error"]')).toMatch(/Project keys cannot use the admin API/);
    await signIn(WRITE);
    expect(await textOf('[data-testid="who"]')).toMatch(/ops\s+read & write/);
    const me = await admin("/whoami", READ);
    expect(validateAdminWhoami(me)).toBe(true);
    expect(me).toEqual({ id: "viewer", scope: "read", expires_at: null });
    // The key lives in the page's memory only: a reload asks again.
    await page.reload();
    await page.waitForSelector('[data-testid="sign-in"]');
    await signIn(WRITE);
  });

  it("overview: the last hour, day and month as the ledger holds them, and the live traffic", async () => {
    if (SHOTS) await screenshotTraffic();
    await view("config");
    await view("overview"); // mounted anew: loaded now
    for (const w of ["1h", "24h", "30d"]) {
      const u = await admin(`/usage?since=${w}`);
      const row = u.rows[0];
      const tile = `[data-window="${w}"]`;
      expect(await textOf(`${tile} [data-figure="cost"]`)).toBe(usd(u.total.cost_usd));
      expect(await textOf(`${tile} [data-figure="requests"]`)).toBe(int(u.total.requests));
      expect(await textOf(`${tile} [data-figure="errors"]`)).toMatch(new RegExp(`^${row.errors} \\(`));
      expect(await textOf(`${tile} [data-figure="input_tokens"]`)).toBe(int(row.input_tokens));
      expect(await textOf(`${tile} [data-figure="output_tokens"]`)).toBe(int(row.output_tokens));
      if (!SHOTS) {
        expect(u.total.requests).toBe(7);
        expect(row.errors).toBe(1);
      }
    }
    const traffic = await admin("/traffic");
    expect(validateAdminTraffic(traffic), JSON.stringify(validateAdminTraffic.errors)).toBe(true);
    expect((await admin(`/traffic?after=${traffic.points.at(-1).t}`)).points).toEqual([]);
    const ledger = await admin("/usage?since=1h");
    expect(traffic.points.reduce((n: number, p: any) => n + p.requests, 0)).toBe(ledger.total.requests);
    expect(traffic.points.reduce((n: number, p: any) => n + p.server_errors, 0)).toEqual(SHOTS ? expect.any(Number) : 1);
    // The live charts have their step (uPlot draws it): no "No data yet" on the request-rate chart.
    await expect.poll(() => page.locator('[data-testid="chart-rate"] .chart-empty').count()).toBe(0);
    // The traffic's step has idle (null) steps beside it: its error ratio and latency are still drawn, as points.
    // (Latency and first byte are close for answers that are not streamed: one series' point may cover the other's.)
    await expect.poll(() => inkOf("chart-errors", ["#c9463d"]), { message: `error ratio of the steps [t, ms, requests] ${JSON.stringify(traffic.points.map((p: any) => [p.t, p.ms, p.requests]))}` }).toBeGreaterThan(0);
    await expect.poll(() => inkOf("chart-latency", ["#2f6fde", "#8a5cc2"]), { message: "latency" }).toBeGreaterThan(0);
    await shot("overview");
  });

  it("spend: by project and model to the cent, a CSV export of the same, and each budget's used / reserved / left", async () => {
    await view("spend");
    const byProject = await admin("/usage?since=7d&group_by=project");
    expect(byProject.rows.map((r: any) => r.group.project).sort()).toEqual(["acme", "globex"]);
    expect(await textOf('[data-testid="spend-total"]')).toBe(usd(byProject.total.cost_usd));
    for (const r of byProject.rows) {
      const cells = `[data-testid="spend-table"] tr[data-row="${r.group.project}"]`;
      expect(await textOf(`${cells} td[data-col="cost_usd"]`)).toBe(usd(r.cost_usd));
      expect(await textOf(`${cells} td[data-col="requests"]`)).toBe(int(r.requests));
    }
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="spend-table"] [data-testid="csv"]')]);
    const csv = readFileSync((await download.path())!, "utf8").trim().split("\r\n");
    expect(csv[0]).toBe("Project,Requests,Errors,Input tokens,Output tokens,Cache read,Cost");
    for (const r of byProject.rows) expect(csv).toContain(`${r.group.project},${r.requests},${r.errors},${r.input_tokens},${r.output_tokens},${r.cache_read_tokens},${r.cost_usd}`);

    const budgets = await admin("/budgets");
    for (const p of budgets.projects) {
      const cells = `[data-testid="budgets"] tr[data-row="project:${p.project}"]`;
      expect(await textOf(`${cells} td[data-col="used"]`)).toBe(usd(p.budget.spent_usd));
      expect(await textOf(`${cells} td[data-col="reserved"]`)).toBe(usd(p.budget.reserved_usd));
      expect(await textOf(`${cells} td[data-col="left"]`)).toBe(usd(p.budget.remaining_usd));
      expect(await textOf(`${cells} td[data-col="limit"]`)).toBe(usd(p.budget.limit_usd));
    }
    // The budgets' CSV holds the API's own strings, money as its exact decimals (no ratio computed through a float).
    const [budgetsCsv] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="budgets"] [data-testid="csv"]')]);
    const budgetLines = readFileSync((await budgetsCsv.path())!, "utf8").trim().split("\r\n");
    expect(budgetLines[0]).toBe("Budget of,Scope,Period,Limit,Used,Reserved,Left");
    expect(budgetLines.slice(1).sort()).toEqual(budgets.projects.filter((p: any) => p.budget).map((p: any) => [p.project, "project", p.budget.period, p.budget.limit_usd, p.budget.spent_usd, p.budget.reserved_usd, p.budget.remaining_usd].join(",")).sort());
    await shot("spend");

    // Per day, the ledger's days are UTC days, and the chart says so: the traffic's day is its UTC date, not the
    // browser's (in Los Angeles, 00:00 UTC is 16:00 the day before).
    const days = await admin("/usage?since=7d&group_by=project&bucket=day");
    const trafficDay = days.rows.at(-1).bucket_start.slice(0, 10);
    expect(await textOf('[data-testid="chart-spend"] figcaption')).toBe("Spend per day (UTC) by project (USD)");
    const plot = (await page.locator('[data-testid="chart-spend"] .u-over').boundingBox())!;
    await page.mouse.move(plot.x + plot.width - 2, plot.y + plot.height / 2);
    await expect.poll(() => page.locator('[data-testid="chart-spend"] .u-legend .u-series').first().textContent()).toBe(`Day (UTC)${trafficDay}`);
    await page.mouse.move(0, 0);
    // Dates picked are UTC days too, as the CLI's and the API's: one day's spend is the API's for that day.
    await page.selectOption('[data-testid="range"]', "custom");
    expect(await textOf('[data-testid="range-zone"]')).toBe("UTC days");
    await page.fill('[data-testid="from"]', trafficDay);
    await page.fill('[data-testid="to"]', trafficDay);
    const next = new Date(Date.parse(trafficDay) + 86_400_000).toISOString().slice(0, 10);
    const oneDay = await admin(`/usage?since=${trafficDay}&until=${next}&group_by=project`);
    expect(oneDay.total.requests).toBeGreaterThan(0);
    await expect.poll(() => page.textContent('[data-testid="spend-range"]')).toBe(`${trafficDay} 00:00 UTC to ${next} 00:00 UTC: ${usd(oneDay.total.cost_usd)} over ${int(oneDay.total.requests)} requests`);
    await page.selectOption('[data-testid="range"]', "7d");

    await page.click('[data-group="model"]');
    const byModel = await admin("/usage?since=7d&group_by=model");
    for (const r of byModel.rows) expect(await textOf(`[data-testid="spend-table"] tr[data-row="${r.group.model}"] td[data-col="cost_usd"]`)).toBe(usd(r.cost_usd));
    await page.click('[data-group="project"]');
  });

  it("requests: the live tail, filtered; the fallback opens to both attempts with each provider's status", async () => {
    await view("requests");
    // A policy's refusal (402, 403, 429) writes no ledger record: no status filter offers to find one, and the page
    // says where refusals are counted.
    const statuses = await page.locator('[data-filter="status"] option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(statuses).toEqual(["", "2xx", "4xx", "5xx"]);
    expect(await page.textContent('[data-testid="refusals-note"]')).toContain("/metrics");
    const rows = page.locator('[data-testid="requests-table"] tbody tr[data-row]');
    const all = await admin("/requests?since=24h&limit=100");
    await expect.poll(() => rows.count()).toBe(all.requests.length);

    // Filters: globex's failures (the request that failed among them), then streamed requests only.
    const failed = await admin(`/requests/${ids.failed}`);
    expect(failed).toMatchObject({ project: "globex", status: 502, attempts: 2, cost_usd: "0" });
    await page.selectOption('[data-filter="project"]', "globex");
    await page.selectOption('[data-filter="status"]', "5xx");
    const globexFailures = await admin("/requests?project=globex&status=5xx&since=24h&limit=100");
    await expect.poll(() => rows.count()).toBe(globexFailures.requests.length);
    const failedRow = `[data-testid="requests-table"] tr[data-row="${ids.failed}"]`;
    expect(await textOf(`${failedRow} td[data-col="status"]`)).toBe("502");
    expect(await textOf(`${failedRow} td[data-col="attempts"]`)).toBe("2");
    await page.click('button:has-text("Clear")');
    await page.selectOption('[data-filter="streamed"]', "yes");
    await expect.poll(() => rows.count()).toBe(all.requests.filter((r: any) => r.ttft_ms !== null).length);
    await page.click('button:has-text("Clear")');
    // A time range (the browser's local time, which the page names): a day before the traffic holds none of it, up
    // to now all of it.
    const local = (ms: number) => page.evaluate((ms) => {
      const d = new Date(ms);
      const p = (n: number) => String(n).padStart(2, "0");
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
    }, ms);
    await page.selectOption('[data-filter="since"]', "range");
    expect(await textOf('[data-testid="range-zone"]')).toMatch(/your time \(UTC−0[78]:00\)/);
    await page.fill('[data-filter="from"]', await local(Date.now() - 48 * 3_600_000));
    await page.fill('[data-filter="to"]', await local(Date.now() - 24 * 3_600_000));
    await expect.poll(() => rows.count()).toBe(0);
    await page.fill('[data-filter="to"]', await local(Date.now() + 120_000));
    await expect.poll(() => rows.count()).toBe(all.requests.length);
    await page.click('button:has-text("Clear")');
    await expect.poll(() => rows.count()).toBe(all.requests.length);
    await shot("requests", false);

    // The request that fell back: flaky's 500, then steady's 200, with the ledger's ids, tokens and cost.
    const rec = await admin(`/requests/${ids.fallback}`);
    expect(rec.attempt_list.map((a: any) => [a.provider, a.status])).toEqual([["flaky", 502], ["steady", 200]]);
    await page.fill('[data-filter="id"]', rec.request_id);
    await page.press('[data-filter="id"]', "Enter");
    await expect.poll(() => rows.count()).toBe(1);
    await page.click(`[data-testid="requests-table"] tr[data-row="${ids.fallback}"]`);
    const detail = '[data-testid="request-detail"]';
    expect(await textOf(`${detail} [data-field="generation_id"]`)).toBe(rec.generation_id);
    expect(await textOf(`${detail} [data-field="request_id"]`)).toBe(rec.request_id);
    expect(await textOf(`${detail} [data-field="cost"]`)).toBe(usd(rec.cost_usd));
    expect(await textOf(`${detail} [data-field="tokens"]`)).toContain(`${int(rec.input_tokens)} in, ${int(rec.output_tokens)} out`);
    const attempts = page.locator(`${detail} [data-testid="attempts"] li`);
    await expect.poll(() => attempts.count()).toBe(2);
    expect(await attempts.nth(0).textContent()).toMatch(/^flaky\s+openai\/gpt-4o-mini\s+502\s+[\d.]+ ms\s+UPSTREAM_ERROR\s+→ fell back$/);
    expect(await attempts.nth(1).textContent()).toMatch(/^steady\s+openai\/gpt-4o-mini\s+200\s+[\d.]+ ms$/);
    await shot("request");
  });

  it("requests: older pages, then live again: the newest page alone, nothing left out between them", async () => {
    const send = (n: number) => Promise.all(Array.from({ length: n }, () => postJson(`${gw.url}/api/v1/chat/completions`, chat("openai/gpt-4o-mini"), { authorization: `Bearer ${ACME}` })));
    const shown = () => page.locator('[data-testid="requests-table"] tbody tr[data-row]').evaluateAll((rs) => rs.map((r) => r.getAttribute("data-row")).sort());
    const newest = async () => (await admin("/requests?since=24h&limit=100")).requests.map((r: any) => r.generation_id).sort();
    await page.click('button:has-text("Clear")');
    for (let i = 0; i < 4; i++) await send(25); // over one page (100) in all
    const first = await newest();
    await expect.poll(shown, { timeout: 15_000 }).toEqual(first);
    // "Older requests" pauses the tail and appends the next page.
    await page.click('[data-testid="older"]');
    expect(await page.isChecked('[data-testid="live"]')).toBe(false);
    const total = (await admin("/requests?since=24h&limit=200")).requests.length;
    expect(total).toBeGreaterThan(100);
    await expect.poll(() => shown().then((s) => s.length)).toBe(total);
    // New requests meanwhile, then live again: the list is the newest page, as the API answers it (not that page
    // with the older one after it, which would hide the requests between the two).
    await send(5);
    await page.check('[data-testid="live"]');
    const now = await newest();
    await expect.poll(shown, { timeout: 15_000 }).toEqual(now);
    await page.waitForSelector('[data-testid="older"]');
  });

  it("providers: every endpoint's circuit, latency and uptime, the failing ones first", async () => {
    await view("providers");
    const models = await admin("/models");
    const flakyUptime = models.models.find((m: any) => m.id === "openai/gpt-4o").endpoints[0].uptime_last_1d;
    expect(flakyUptime).toBeLessThan(1);
    const first = page.locator('[data-testid="endpoints"] tbody tr[data-row]').first();
    await expect.poll(() => first.getAttribute("data-row")).toBe("openai/gpt-4o|flaky");
    expect(await textOf('[data-testid="endpoints"] tbody tr[data-row="openai/gpt-4o|flaky"] td[data-col="uptime"]')).toBe(`${(flakyUptime * 100).toFixed(2)}%`);
    await shot("providers");
  });

  it("keys: created in the console and used with curl, rotated, revoked and then refused", async () => {
    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gw.url });
    await view("keys");
    await page.fill('[data-testid="create-key"] [data-field="id"]', "console-made");
    await page.fill('[data-testid="create-key"] [data-field="name"]', "made in the console");
    await page.fill('[data-testid="create-key"] [data-field="rpm"]', "60");
    await page.fill('[data-testid="create-key"] [data-field="budget"]', "1.50");
    // An expiry date is a UTC day, as `keys new --expires` takes it; the form says when that is here.
    await page.fill('[data-testid="create-key"] [data-field="expires"]', "2099-01-15");
    expect(await textOf('[data-testid="expires-meaning"]')).toBe("stops working at 2099-01-15 00:00 UTC (2099-01-14 16:00 your time)");
    await page.click('[data-testid="create-submit"]');
    const key = await page.inputValue('[data-testid="new-key-value"]');
    expect(key).toMatch(/^mg_live_/);
    await page.click('[data-testid="copy-key"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await shot("keys-created");
    await page.click('[data-testid="new-key-done"]');
    expect(await curlChat(key)).toBe("200");
    const made = (await admin("/keys/acme/console-made"));
    expect(made).toMatchObject({ source: "api", status: "active", name: "made in the console", created_by: "ops", rate_limits: { rpm: 60 }, budget: { usd: "1.50", period: "month" }, expires_at: "2099-01-15T00:00:00.000Z" });

    // The keys' CSV: the API's strings (the budget as its exact decimal and period, not a number read from it), and
    // no column for the buttons.
    await page.waitForSelector('[data-testid="keys-table"] tr[data-row="acme/console-made"]');
    const [keysCsv] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="keys-table"] [data-testid="csv"]')]);
    const keyLines = readFileSync((await keysCsv.path())!, "utf8").trim().split("\r\n");
    expect(keyLines[0]).toBe("Project,Id,Name,Source,Status,Ends with,Created,Expires,Last used,Limits,Budget");
    const madeLine = keyLines.find((l) => l.startsWith("acme,console-made,"));
    // The hint is a cell as the CSV writes it: one starting with "-" (1 key in 64) gets the formula guard's apostrophe.
    const hintCell = toCsv([made.hint], []).trim();
    expect(madeLine).toMatch(new RegExp(`^acme,console-made,made in the console,api,active,${hintCell},${made.created_at},${made.expires_at},[^,]*,60 rpm,1\\.50 / month$`));

    // Rotate: the new key works at once, the old one for the overlap.
    const row = (id: string) => `[data-testid="keys-table"] tr[data-row="acme/${id}"]`;
    await page.click(`${row("console-made")} [data-action="rotate"]`);
    await page.click(`${row("console-made")} [data-action="confirm-rotate"]`);
    const rotated = await page.inputValue('[data-testid="new-key-value"]');
    expect(rotated).not.toBe(key);
    await page.click('[data-testid="new-key-done"]');
    expect(await curlChat(rotated)).toBe("200");
    expect(await curlChat(key)).toBe("200");
    // The old key, active for the overlap, says what replaced it, and its Rotate (the API's 409) is off and says why.
    await page.waitForSelector(row("console-made-r2"));
    expect(await textOf(`${row("console-made")} [data-field="lineage"]`)).toBe("rotated to console-made-r2");
    expect(await textOf(`${row("console-made-r2")} [data-field="lineage"]`)).toBe("rotated from console-made");
    expect(await page.locator(`${row("console-made")} [data-action="rotate"]`).isDisabled()).toBe(true);
    expect(await page.locator(`${row("console-made")} [data-action="rotate"]`).getAttribute("title")).toBe("Already rotated to console-made-r2: rotate console-made-r2 instead");
    expect(await page.locator(`${row("console-made")} [data-action="revoke"]`).isDisabled()).toBe(false);

    // Revoke the new one: refused at once.
    await page.waitForSelector(row("console-made-r2"));
    await page.click(`${row("console-made-r2")} [data-action="revoke"]`);
    await page.click(`${row("console-made-r2")} [data-action="confirm-revoke"]`);
    await page.waitForSelector(row("console-made-r2"), { state: "detached" });
    expect(await curlChat(rotated)).toBe("401");
    expect((await admin("/keys/acme/console-made-r2")).status).toBe("revoked");
    // gateway.yaml's keys are changed in the file, not here.
    expect(await page.locator(`${row("acme-live")} [data-action="revoke"]`).isDisabled()).toBe(true);
    await shot("keys");
  });

  it("a read-scope admin key sees the keys but cannot create, revoke or rotate one", async () => {
    await page.click('[data-testid="sign-out"]');
    await signIn(READ);
    expect(await textOf('[data-testid="who"]')).toMatch(/viewer\s+read only/);
    await view("keys");
    await page.waitForSelector('[data-testid="read-only"]');
    expect(await page.locator('[data-testid="create-submit"]').isDisabled()).toBe(true);
    await page.waitForSelector('[data-testid="keys-table"] tr[data-row="acme/console-made"]');
    expect(await page.locator('[data-testid="keys-table"] tr[data-row="acme/console-made"] [data-action="revoke"]').isDisabled()).toBe(true);
    // Past the switched-off form, the gateway still refuses: the page shows its 403.
    await page.evaluate(() => document.querySelector('[data-testid="create-key"] fieldset')!.removeAttribute("disabled"));
    await page.fill('[data-testid="create-key"] [data-field="id"]', "by-a-viewer");
    await page.click('[data-testid="create-submit"]');
    expect(await textOf('[data-testid="create-error"]')).toMatch(/read scope/);
    const res = await fetch(`${gw.url}/admin/v1/keys/acme/by-a-viewer`, { headers: { authorization: `Bearer ${WRITE}` } });
    expect(res.status).toBe(404);
  });

  it("a phone-sized window: the top bar wraps, every view's link is in the window and works", async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    try {
      await view("overview");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      for (const name of ["overview", "spend", "requests", "providers", "keys", "config"]) {
        const box = (await page.locator(`[data-nav="${name}"]`).boundingBox())!;
        expect(box.x, name).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, name).toBeLessThanOrEqual(375);
      }
      expect((await page.locator('[data-testid="sign-out"]').boundingBox())!.x).toBeLessThanOrEqual(375);
      await view("config");
    } finally {
      await page.setViewportSize({ width: 1400, height: 1000 });
    }
  });

  it("config: what is loaded, and a refused reload with its reason; console.path and console.enabled follow reloads", async () => {
    await view("config");
    const loaded = await admin("/config/loaded", READ);
    expect(validateAdminConfigLoaded(loaded), JSON.stringify(validateAdminConfigLoaded.errors)).toBe(true);
    expect(await textOf('[data-testid="pipeline"]')).toBe(loaded.pipeline.map((p: any) => p.name).join(""));
    expect(await textOf('[data-testid="pipeline"]')).toContain("fallback");
    expect(await textOf('[data-field="last-reload"]')).toBe("none since the start");
    const good = readFileSync(gw.configFile, "utf8");
    writeFileSync(gw.configFile, good.replace("budget:", "budget: [oops"));
    expect((await gw.gateway.reload(gw.configFile)).ok).toBe(false);
    await page.reload();
    await signIn(READ);
    await view("config");
    await page.waitForSelector('[data-testid="reload-problems"]');
    expect(await textOf('[data-field="last-reload"]')).toMatch(/\(call\): refused/);
    expect(await textOf('[data-testid="reload-problems"]')).toMatch(/gateway\.yaml:\d+:\d+/);
    await shot("config");

    // Every request of the whole session went to the gateway's own origin; nothing was refused by the CSP.
    const origin = new URL(gw.url).origin;
    expect(requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith("data:") && !u.startsWith(`blob:${origin}/`))).toEqual([]);
    expect(requested.some((u) => u.includes("/admin/v1/usage"))).toBe(true);
    expect(consoleErrors).toEqual([]);

    // Moved, then switched off, by a reload.
    const conf = YAML.parse(good);
    writeFileSync(gw.configFile, YAML.stringify({ ...conf, console: { path: "/ops/console" } }));
    expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
    expect((await fetch(`${gw.url}/console`)).status).toBe(404);
    expect((await fetch(`${gw.url}/ops/console`)).status).toBe(200);
    writeFileSync(gw.configFile, YAML.stringify({ ...conf, console: { enabled: false } }));
    expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
    expect((await fetch(`${gw.url}/console`)).status).toBe(404);
    writeFileSync(gw.configFile, YAML.stringify({ ...conf, console: { path: "/api/console" } }));
    const refused = await gw.gateway.reload(gw.configFile);
    expect(refused.ok).toBe(false);
    expect(refused.ok ? "" : refused.problems.join("\n")).toMatch(/console\.path \/api\/console is under \/api/);
  });
});
