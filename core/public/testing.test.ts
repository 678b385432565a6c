// model-gateway/testing from the sources; test/plugin-install.e2e.test.ts runs it from a plugin package, built.
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { builtins } from "../builtins.ts";
import { startTestGateway } from "./testing.ts";

const TAGGER = resolve("docs/examples/request-tagger.ts");
const leftovers = () => readdirSync(tmpdir()).filter((n) => n.startsWith("mg-plugin-test-")).sort();

describe("startTestGateway", () => {
  it("runs the plugins right after auth, before the built-in ones, in front of the simulator, with a live key", async () => {
    const gw = await startTestGateway({ plugins: { "request-tagger": { module: pathToFileURL(TAGGER), options: { header: "x-team", value: "search" } } } });
    try {
      const config = JSON.parse(readFileSync(gw.configFile, "utf8"));
      expect(config.pipeline).toEqual(["auth", "request-tagger", ...builtins.defaultPipeline().filter((n) => n !== "auth")]);
      expect(gw.key).toMatch(/^mg_live_/);
      const r = await gw.post("/chat/completions", { model: gw.model, messages: [{ role: "user", content: "quote me" }] });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-team")).toBe("search");
      expect(r.body.choices[0].message.content).toContain(`to "quote me"`);
      const anonymous = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(anonymous.status).toBe(401);
    } finally {
      await gw.close();
    }
    expect(existsSync(dirname(gw.configFile))).toBe(false);
  });

  it("rejects with the config's problem, naming the option, and leaves no folder behind", async () => {
    const before = leftovers();
    await expect(startTestGateway({ plugins: { "request-tagger": { module: TAGGER, options: { header: "Team", value: "a" } } } }))
      .rejects.toThrow(/plugin request-tagger options\.header: must match pattern/);
    expect(leftovers()).toEqual(before);
  });
});
