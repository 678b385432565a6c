// allow_models entries were only compared with model ids at request time: a typo passed check and start without a
// word, and the project's requests were refused 403 MODEL_NOT_ALLOWED. check, start and a reload (all loadConfig)
// now refuse entries that can never match, and note exact ids no model of the gateway has.
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";

const models = `models:
  acme/m1: { endpoints: [{ provider: sim, model: m1 }] }
  acme/m2: { endpoints: [{ provider: sim, model: m2 }] }
`;
const project = (allow: string) => `projects:\n  p1: { keys: [{ id: k, sha256: "${"a".repeat(64)}" }], allow_models: ${allow} }\n`;

async function notices(text: string): Promise<string[]> {
  const out: string[] = [];
  await loadConfig(write(text), { env: {}, onNotice: (m) => out.push(m) });
  return out.filter((m) => m.includes("allow_models"));
}

describe("allow_models entries that can never match", () => {
  it("refuses an id with a space around it, saying what to write", async () => {
    expect(await problems(models + project(`["acme/m1 ", " acme/*"]`))).toEqual([
      `F:5:119: projects.p1.allow_models[0]: "acme/m1 " holds a space, which no model id has, so it never matches: write "acme/m1"`,
      `F:5:131: projects.p1.allow_models[1]: " acme/*" holds a space, which no model id has, so it never matches: write "acme/*"`,
    ]);
  });

  it("refuses characters no model id holds and an exact entry that is no provider/name id", async () => {
    expect(await problems(models + project(`["acme/[m]1", "gpt-4o"]`))).toEqual([
      `F:5:119: projects.p1.allow_models[0]: "acme/[m]1" holds the character "[", which no model id has, so it never matches (ids are provider/name: letters, digits, . _ : -; globs add * and ?)`,
      `F:5:132: projects.p1.allow_models[1]: "gpt-4o" is not a model id (provider/name, as under models:), so it never matches: write the whole id (such as "openai/gpt-4o") or a glob ("*/gpt-4o")`,
    ]);
  });
});

describe("allow_models ids that name no model", () => {
  it("notes an exact id no model has, naming the project, the entry and a near id", async () => {
    expect(await notices(models + project(`["acme/m1", "acme/m3", "acme/nope"]`))).toEqual([
      `project p1: allow_models[1] "acme/m3" names no model of this gateway (did you mean "acme/m1"?): it allows nothing until a model of that id is added`,
      `project p1: allow_models[2] "acme/nope" names no model of this gateway: it allows nothing until a model of that id is added`,
    ]);
  });

  it("says nothing of known ids and globs, which may pre-authorise models added later", async () => {
    expect(await notices(models + project(`["acme/m2", "acme/*", "other/*", "*-mini"]`))).toEqual([]);
    expect(await notices(models + project(`[]`))).toEqual([]);
  });
});
