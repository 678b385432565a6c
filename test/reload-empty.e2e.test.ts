// A running gateway whose gateway.yaml is emptied (truncated while being rewritten, `: > gateway.yaml`) or cut short
// before its projects: refuses the reload and keeps serving its keys; a restart is the way to drop every project.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("reload-empty", true);
const CONFIG = { models: { "a/one": { endpoints: [{ provider: "sim", model: "m" }] } }, projects: { p: { keys: [keyEntry("k", KEY)] } } };
let gw: TestGateway;

const chat = () => postJson(`${gw.baseURL}/chat/completions`, { model: "a/one", messages: [{ role: "user", content: "Hello" }] }, { authorization: `Bearer ${KEY}` });

beforeAll(async () => {
  gw = await startTestGateway(CONFIG);
});
afterAll(async () => {
  await gw?.close();
});

describe("a reload that would leave no project", () => {
  it.each([
    ["emptied", "", /gateway\.yaml:1:1: the file is empty/],
    ["left with only comments", "# being rewritten\n\n", /gateway\.yaml:1:1: the file is empty/],
    ["cut short before projects:", YAML.stringify(CONFIG).split("projects:")[0]!, /gateway\.yaml:1:1: the new config has no projects: it would remove all 1 project\(s\) and the 1 gateway\.yaml key\(s\).*restart the gateway/],
  ])("is refused when the file is %s, and the old keys keep working", async (_what, text, problem) => {
    expect((await chat()).status).toBe(200);
    writeFileSync(gw.configFile, text);
    const r = await gw.gateway.reload(gw.configFile, "file");
    expect(r).toMatchObject({ ok: false, problems: [expect.stringMatching(problem)] });
    expect((await chat()).status).toBe(200);
    writeFileSync(gw.configFile, YAML.stringify(CONFIG));
    expect(await gw.gateway.reload(gw.configFile, "file")).toMatchObject({ ok: true });
  });
});
