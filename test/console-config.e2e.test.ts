// The Config view in a real browser (headless Chromium, test/helpers/browser.ts): after a reload that changed a
// setting the running gateway reads only at start, the admin API lists it in restart_pending, and the page must say
// it waits for a restart instead of "in force" alone (the old value is what still runs); gateway.yaml's admin keys
// past their expiry are marked expired, and a project's key count says it is gateway.yaml's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import YAML from "yaml";
import type { Page } from "playwright-core";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { launchBrowser, type TestBrowser } from "./helpers/browser.ts";
import { sha256Hex } from "../core/keys/keys.ts";

const ADMIN = "mg_admin_console_config_key_0001";

describe("console: the Config view", () => {
  let gw: TestGateway;
  let browser: TestBrowser;
  let page: Page;

  const textOf = async (selector: string) => {
    const el = page.locator(selector).first();
    await expect.poll(async () => (await el.textContent()) ?? "…", { timeout: 10_000 }).not.toMatch(/…|Loading/);
    return ((await el.textContent()) ?? "").trim();
  };
  const openConfig = async () => {
    await page.goto("about:blank");
    await page.goto(`${gw.url}/console#/config`);
    await page.fill('[data-testid="key"]', ADMIN);
    await page.click('[data-testid="sign-in-submit"]');
    await page.waitForSelector('[data-testid="config-state"]');
  };

  beforeAll(async () => {
    gw = await startTestGateway({
      store: { kind: "memory" },
      providers: {},
      models: {},
      projects: { acme: { keys: [keyEntry("acme-live", testKey("configacme"))] } },
      admin_keys: [
        { id: "viewer", sha256: sha256Hex(ADMIN), scope: "read" },
        { id: "old", sha256: sha256Hex("mg_admin_console_config_old_0001"), scope: "write", expires_at: "2025-01-01T00:00:00Z" },
      ],
    });
    browser = await launchBrowser();
    page = await browser.context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("an admin key past its expiry is marked expired; a project's count is of gateway.yaml's keys", async () => {
    await openConfig();
    expect(await textOf('[data-testid="config-admin-keys"] [data-row="old"]')).toMatch(/^old write, expired \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(await textOf('[data-testid="config-admin-keys"] [data-row="viewer"]')).toBe("viewer read");
    expect(await textOf('[data-testid="config-projects"]')).toBe("acme 1 key in gateway.yaml");
  });

  it("a reload that changes server.max_connections: applied, and the page says it waits for a restart", async () => {
    await openConfig();
    expect(await textOf('[data-field="status"]')).toBe("in force");
    expect(await page.locator('[data-field="restart-pending"]').count()).toBe(0);

    const conf = YAML.parse(readFileSync(gw.configFile, "utf8"));
    writeFileSync(gw.configFile, YAML.stringify({ ...conf, server: { ...conf.server, max_connections: 500 } }));
    expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
    const res = await fetch(`${gw.url}/admin/v1/config`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(((await res.json()) as any).config.restart_pending).toEqual(["server.max_connections"]);

    await openConfig();
    expect(await textOf('[data-field="last-reload"]')).toMatch(/\(call\): applied$/);
    expect(await textOf('[data-field="status"]')).toBe("in force, but for the settings below that wait for a restart");
    expect(await textOf('[data-field="restart-pending"]')).toBe("server.max_connections read only when the gateway starts: it still runs with the value it started with");
  });
});
