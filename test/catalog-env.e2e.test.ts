// Issue 25, item 11: ${ENV} in the catalog. An included catalog file (or a model in gateway.yaml) that names an
// environment variable would publish its value through GET /v1/models; the gateway refuses such a config, at start
// and on reload, with the file, line and field — and the providers' own ${VAR}s keep working.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("catalog-env");
const SECRET = "sk-live-provider-key-0f1e2d3c4b5a69788796a5b4";
const ENV = { CATALOG_TEST_PROVIDER_KEY: SECRET };

const config = {
  store: { kind: "sqlite", path: "./gateway.db" },
  include: ["catalog.yaml"],
  providers: { up: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "${CATALOG_TEST_PROVIDER_KEY}" } },
  projects: { p: { keys: [keyEntry("k", KEY)], budget: { usd: "10", period: "month" }, rate_limits: { rpm: 1000 } } },
};
const catalog = (description: string) => YAML.stringify({ models: { "x/model": { name: "X", description, endpoints: [{ provider: "up", model: "m" }] } } });

const get = async (gw: TestGateway, path: string) => {
  const res = await fetch(`${gw.baseURL}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  return { status: res.status, text: await res.text() };
};

describe("${ENV} in the public catalog", () => {
  it("an included catalog naming a variable is refused at start, naming the file, line and field", async () => {
    const start = startTestGateway(config, { env: ENV, files: { "catalog.yaml": catalog("Served with ${CATALOG_TEST_PROVIDER_KEY}") } });
    const err = await start.then(async (gw) => {
      const listed = await get(gw, "/models");
      await gw.close();
      return new Error(`started, and GET /v1/models says: ${listed.text.slice(0, 300)}`);
    }, (e: Error) => e);
    expect(err.message).toMatch(/catalog\.yaml:\d+:\d+: models\.x\/model\.description: \$\{CATALOG_TEST_PROVIDER_KEY\} is not expanded here/);
    expect(err.message).not.toContain(SECRET);
  });

  it("a model in gateway.yaml naming a variable is refused too", async () => {
    const own = { ...config, include: undefined, models: { "x/own": { name: "${CATALOG_TEST_PROVIDER_KEY}", endpoints: [{ provider: "up", model: "m" }] } } };
    const err = await startTestGateway(own, { env: ENV }).then(async (gw) => {
      await gw.close();
      return new Error("started");
    }, (e: Error) => e);
    expect(err.message).toMatch(/gateway\.yaml:\d+:\d+: models\.x\/own\.name: \$\{CATALOG_TEST_PROVIDER_KEY\} is not expanded here/);
  });

  describe("a running gateway", () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(config, { env: ENV, files: { "catalog.yaml": catalog("A plain model") } });
    });
    afterAll(async () => {
      await gw?.close();
    });

    it("refuses a reload whose catalog names a variable; the listing and endpoints never show it", async () => {
      writeFileSync(join(gw.dir, "catalog.yaml"), catalog("Leaks ${CATALOG_TEST_PROVIDER_KEY}"));
      const reload = await gw.gateway.reload();
      expect(reload.ok).toBe(false);
      expect(JSON.stringify(reload)).toMatch(/catalog\.yaml:\d+:\d+: models\.x\/model\.description: \$\{CATALOG_TEST_PROVIDER_KEY\} is not expanded here/);
      for (const path of ["/models", "/models/x/model", "/models/x/model/endpoints"]) {
        const r = await get(gw, path);
        expect(r.status, path).toBe(200);
        if (!path.endsWith("/endpoints")) expect(r.text, path).toContain("A plain model"); // the old catalog serves on
        expect(r.text, path).not.toContain(SECRET);
      }
    });
  });
});
