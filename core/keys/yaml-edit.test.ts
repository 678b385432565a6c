import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { addAdminKey, addProjectKey, setProjectKeyField, yamlKeys, YamlEditError } from "./yaml-edit.ts";

const FILE = `# top comment
server: { host: 127.0.0.1 }   # aligned   comment
projects:
  acme:
    keys:
      # the first key
      - { id: k1, sha256: "${"a".repeat(64)}" }  # trailing
      - id: k2
        sha256: "${"b".repeat(64)}"
        revoked: false
    allow_models: ["*"]
  flowy:
    keys: []
`;

const SHA = "c".repeat(64);

describe("gateway.yaml key edits", () => {
  it("adds a key after its siblings in their style, leaving every other byte as it was", () => {
    const out = addProjectKey(FILE, "acme", { id: "k3", sha256: SHA, rate_limits: { rpm: 10 }, budget: { usd: "5", period: "month" } });
    const added = `      - { id: k3, sha256: "${SHA}", rate_limits: { rpm: 10 }, budget: { usd: "5", period: month } }\n`;
    expect(out).toBe(FILE.replace(`        revoked: false\n`, `        revoked: false\n${added}`));
    expect(parse(out).projects.acme.keys[2]).toEqual({ id: "k3", sha256: SHA, rate_limits: { rpm: 10 }, budget: { usd: "5", period: "month" } });
    const flowOut = addProjectKey(FILE, "flowy", { id: "f1", sha256: SHA });
    expect(flowOut).toBe(FILE.replace("keys: []", `keys: [{ id: f1, sha256: "${SHA}" }]`));
    // After a given key (rotation puts the new key next to the old one).
    const afterK1 = addProjectKey(FILE, "acme", { id: "k1-r2", sha256: SHA }, "k1");
    expect(parse(afterK1).projects.acme.keys.map((k: any) => k.id)).toEqual(["k1", "k1-r2", "k2"]);
    expect(afterK1).toContain("  # trailing\n      - { id: k1-r2");
  });

  it("sets a field in a flow map or a block map, replacing a value already there", () => {
    const a = setProjectKeyField(FILE, "acme", "k1", "revoked", true);
    expect(a).toBe(FILE.replace(`"${"a".repeat(64)}" }`, `"${"a".repeat(64)}", revoked: true }`));
    const b = setProjectKeyField(FILE, "acme", "k2", "revoked", true);
    expect(b).toBe(FILE.replace("revoked: false", "revoked: true"));
    const c = setProjectKeyField(FILE, "acme", "k2", "expires_at", "2027-01-01T00:00:00Z");
    expect(c).toBe(FILE.replace("        revoked: false\n", `        revoked: false\n        expires_at: "2027-01-01T00:00:00Z"\n`));
    expect(parse(c).projects.acme.keys[1].expires_at).toBe("2027-01-01T00:00:00Z");
  });

  it("adds admin keys, creating admin_keys: at the end when missing", () => {
    const one = addAdminKey(FILE, { id: "ops", sha256: SHA, scope: "write" });
    expect(one).toBe(`${FILE}\nadmin_keys:\n  - { id: ops, sha256: "${SHA}", scope: write }\n`);
    const two = addAdminKey(one, { id: "viewer", sha256: "d".repeat(64), scope: "read" });
    expect(parse(two).admin_keys.map((k: any) => k.id)).toEqual(["ops", "viewer"]);
    expect(() => addAdminKey(two, { id: "ops", sha256: SHA, scope: "read" })).toThrow(/already has a key ops/);
  });

  it("refuses what it cannot do cleanly, saying why", () => {
    expect(() => addProjectKey(FILE, "nope", { id: "x", sha256: SHA })).toThrow(/no project nope .*declared: acme, flowy/);
    expect(() => addProjectKey(FILE, "acme", { id: "k1", sha256: SHA })).toThrow(YamlEditError);
    expect(() => setProjectKeyField(FILE, "acme", "zz", "revoked", true)).toThrow(/no key zz/);
    expect(() => addProjectKey("projects: [", "acme", { id: "x", sha256: SHA })).toThrow(/not valid YAML/);
    expect(yamlKeys(FILE).map((k) => `${k.project}/${k.id}`)).toEqual(["acme/k1", "acme/k2"]);
  });
});
