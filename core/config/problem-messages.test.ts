// What `check` (and start, and a reload) says about the mistakes operators make writing gateway.yaml by hand: each
// problem names the field and says what to do.
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";

const HASH = "a".repeat(64);
const MODELS = `models:\n  a/m: { endpoints: [{ provider: sim, model: m }] }\n`;

describe("config problems say what to do", () => {
  it("an unknown field names the allowed one it is a typo of, at every level", async () => {
    expect(await problems(`${MODELS}projects:\n  acme:\n    keys: [{ id: k1, sha256: "${HASH}" }]\n    budjet: { usd: "10" }\n    rate_limit: { rpm: 1 }\n`)).toEqual([
      'F:6:5: projects.acme: unknown field "budjet" (did you mean "budget"?)',
      'F:7:5: projects.acme: unknown field "rate_limit" (did you mean "rate_limits"?)',
    ]);
    expect(await problems(`modles: {}\nserver: { prot: 1 }\n`)).toEqual([
      'F:1:1: (top level): unknown field "modles" (did you mean "models"?)',
      'F:2:11: server: unknown field "prot" (did you mean "port"?)',
    ]);
    expect(await problems(`${MODELS}frobnicate: 1\n`)).toEqual(['F:3:1: (top level): unknown field "frobnicate"']);
  });

  it("YAML merge keys (<<: *anchor) are supported", async () => {
    const file = write(`${MODELS}projects:
  acme: &base
    keys: [{ id: k1, sha256: "${HASH}" }]
    allow_models: ["a/*"]
    budget: { usd: "10", period: week }
  beta:
    <<: *base
    keys: [{ id: k2, sha256: "${"b".repeat(64)}" }]
`);
    const config = await loadConfig(file, { env: {} });
    expect(config.projects.get("beta")!.config).toEqual({ keys: [{ id: "k2", sha256: "b".repeat(64) }], allow_models: ["a/*"], budget: { usd: "10", period: "week" } });
    expect(config.keys.get("b".repeat(64))!.projectId).toBe("beta");
  });

  it("several YAML documents: one is wanted, the separators named", async () => {
    expect(await problems(`${MODELS}---\nprojects: {}\n`)).toEqual([
      "F:3:1: gateway.yaml must be one YAML document (found 2; remove the '---' separators)",
    ]);
    // A leading --- (one document) is fine.
    expect(await problems(`---\n${MODELS}`)).toEqual([]);
  });

  it("a key given twice in one mapping is named, with both lines", async () => {
    expect(await problems(`${MODELS}projects:\n  acme:\n    keys: [{ id: k1, sha256: "${HASH}" }]\n    allow_models: ["*"]\n    allow_models: ["a/*"]\n`)).toEqual([
      'F:7:5: key "allow_models" is given twice in this mapping, at lines 6 and 7: keep one',
    ]);
  });

  it("a missing include is reported at its entry under include:", async () => {
    const p = await problems(`include:\n  - catalog/nope.yaml\n${MODELS}`);
    expect(p).toEqual([expect.stringMatching(/^F:2:5: include\.0: cannot read catalog\/nope\.yaml: ENOENT: no such file or directory/)]);
  });

  it("a key hash that is not one says what it must be, and a key pasted in its place is called that", async () => {
    const key = (sha: string) => `${MODELS}projects:\n  acme:\n    keys: [{ id: k1, sha256: "${sha}" }]\n`;
    expect(await problems(key("A".repeat(64)))).toEqual([
      "F:5:30: projects.acme.keys.0.sha256: sha256 must be 64 lowercase hex characters: the SHA-256 of the key (model-gateway keys new prints it)",
    ]);
    const pasted = await problems(key("mg_live_0123456789abcdef0123"));
    expect(pasted).toEqual([
      "F:5:30: projects.acme.keys.0.sha256: this is a key itself, not its SHA-256: a key never goes in gateway.yaml (anyone who reads the file could use it); " +
        "write its SHA-256 instead (model-gateway keys new prints it, or: printf %s \"$KEY\" | sha256sum), and since it was written down, consider it exposed and make a new one",
    ]);
    expect(pasted[0]).not.toContain("0123456789abcdef");
    expect(await problems(`${MODELS}admin_keys: [{ id: ops, scope: read, sha256: "mg_admin_0123456789abcdef0123" }]\n`)).toEqual([
      expect.stringMatching(/^F:3:46: admin_keys\.0\.sha256: this is a key itself, not its SHA-256/),
    ]);
  });

  it("a price or budget written as a number is told to quote it, with the quoted value", async () => {
    expect(await problems(`models:\n  a/m: { endpoints: [{ provider: sim, model: m, pricing: { input: 0.0000001, output: 2 } }] }\n` +
      `projects:\n  acme: { keys: [{ id: k1, sha256: "${HASH}" }], budget: { usd: 10 } }\n`)).toEqual([
      'F:2:67: models.a/m.endpoints.0.pricing.input: must be a decimal string: quote it: "0.0000001"',
      'F:2:86: models.a/m.endpoints.0.pricing.output: must be a decimal string: quote it: "2"',
      'F:4:122: projects.acme.budget.usd: must be a decimal string: quote it: "10"',
    ]);
  });
});

