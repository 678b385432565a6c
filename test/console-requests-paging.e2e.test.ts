// The Requests view's paging and its record in a real browser (headless Chromium, test/helpers/browser.ts): a
// double-clicked "Older requests" appends the older page once, an older page that fails says why beside the button
// (live is off, so no poll would), and in a phone-sized window a tapped request's record, which opens under the
// 100-row list, is brought into sight (and Close goes back to the row).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { launchBrowser, type TestBrowser } from "./helpers/browser.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { sha256Hex } from "../core/keys/keys.ts";

const ADMIN = "mg_admin_console_paging_key_0001";
const ACME = testKey("pagingacme");
/** Over one page (the view asks for 100) and under two: the older page holds the rest. */
const RECORDS = 130;

describe("console: older requests and a request's record in a narrow window", () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let browser: TestBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  const rows = () => page.locator('[data-testid="requests-table"] tbody tr[data-row]');
  const shown = () => rows().evaluateAll((rs) => rs.map((r) => r.getAttribute("data-row")!));
  /** The Requests view anew, live, with its first page loaded. */
  const openRequests = async () => {
    await page.goto("about:blank"); // a load, not a hash change: the page starts signed out and live
    await page.goto(`${gw.url}/console#/requests`);
    await page.fill('[data-testid="key"]', ADMIN);
    await page.click('[data-testid="sign-in-submit"]');
    await page.waitForSelector('main[data-view="requests"]');
    await expect.poll(() => rows().count(), { timeout: 15_000 }).toBe(100);
  };

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    gw = await startTestGateway({
      store: { kind: "sqlite", path: "./data/gateway.db" },
      providers: { up: { protocol: "openai", base_url: upstream.baseUrl, api_key: "sk-fake-upstream" } },
      models: { "openai/gpt-4o-mini": { type: "language", context_window: 8000, max_tokens: 100, endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.000002" } }] } },
      projects: { acme: { keys: [keyEntry("acme-live", ACME)] } },
      admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "read" }],
    });
    for (let sent = 0; sent < RECORDS; sent += 10) {
      await Promise.all(Array.from({ length: 10 }, () => postJson(`${gw.url}/api/v1/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${ACME}` })));
    }
    // Records are written after the answers, in the next group commit: wait until the ledger holds them all.
    const recorded = async () => {
      const res = await fetch(`${gw.url}/admin/v1/requests?since=24h&limit=200`, { headers: { authorization: `Bearer ${ADMIN}` } });
      return ((await res.json()) as { requests: unknown[] }).requests.length;
    };
    for (const until = Date.now() + 10_000; (await recorded()) < RECORDS && Date.now() < until;) await new Promise((r) => setTimeout(r, 100));
    expect(await recorded()).toBe(RECORDS);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e)));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.close();
  });

  it("a double-click on Older requests appends the older page once: every request shown once", async () => {
    await openRequests();
    // The older page takes a moment (a slow store): the second click lands while the first is on its way.
    await page.route(/\/admin\/v1\/requests\?.*cursor=/, async (route) => {
      await new Promise((r) => setTimeout(r, 400));
      await route.continue();
    });
    try {
      await page.locator('[data-testid="older"]').dblclick();
      await expect.poll(() => rows().count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(RECORDS);
      await page.waitForTimeout(800); // a second page, if one was asked for, has answered by now
      const ids = await shown();
      expect(ids.length).toBe(RECORDS);
      expect(new Set(ids).size).toBe(RECORDS);
      expect(await page.isChecked('[data-testid="live"]')).toBe(false);
    } finally {
      await page.unroute(/\/admin\/v1\/requests\?.*cursor=/);
    }
  });

  it("an older page that fails says why beside the button, and a later click loads it", async () => {
    await openRequests();
    await page.route(/\/admin\/v1\/requests\?.*cursor=/, (route) => route.abort("connectionrefused"));
    await page.click('[data-testid="older"]');
    expect(await page.isChecked('[data-testid="live"]')).toBe(false);
    await expect.poll(() => page.locator('[data-testid="older-error"]').textContent(), { timeout: 10_000 }).toBe("Older requests: The gateway cannot be reached");
    expect(await rows().count()).toBe(100);
    // The gateway is back: the same button loads the page, and the error goes.
    await page.unroute(/\/admin\/v1\/requests\?.*cursor=/);
    await page.click('[data-testid="older"]');
    await expect.poll(() => rows().count(), { timeout: 10_000 }).toBe(RECORDS);
    expect(await page.locator('[data-testid="older-error"]').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it("a phone-sized window: a tapped request's record is brought into sight, and Close goes back to its row", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await openRequests();
      const row = rows().nth(2);
      const id = (await row.getAttribute("data-row"))!;
      await row.click();
      const detail = page.locator('[data-testid="request-detail"]');
      await detail.locator('[data-field="generation_id"]').waitFor();
      // The record opens under the 100 rows, thousands of pixels down the page. Its facts are in the window, down to
      // its status and cost, not just its header: the page scrolled while it said "Loading…" stops at the document's
      // end, a few lines into the record.
      const inWindow = (field: string) => detail.locator(`[data-field="${field}"]`).evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight;
      });
      await expect.poll(() => inWindow("status")).toBe(true);
      expect(await inWindow("generation_id")).toBe(true);
      expect(await inWindow("cost")).toBe(true);
      expect(await detail.locator('[data-field="generation_id"]').textContent()).toBe(id);
      await detail.locator('button:has-text("Close")').click();
      await expect.poll(() => page.locator(`[data-testid="requests-table"] tr[data-row="${id}"]`).evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight;
      })).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1400, height: 1000 });
    }
  });
});
