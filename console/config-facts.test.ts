import { describe, expect, it } from "vitest";
import { adminKeyNote, yamlKeys } from "./config-facts.ts";
import { when } from "./format.ts";

describe("the Config view's words for gateway.yaml's keys", () => {
  const now = Date.parse("2026-11-28T15:00:00Z");

  it("an admin key past its expiry is marked expired, one still valid says when it expires", () => {
    expect(adminKeyNote({ id: "old", scope: "write", expires_at: "2025-01-01T00:00:00.000Z", revoked: false }, now)).toBe(`write, expired ${when("2025-01-01T00:00:00.000Z")}`);
    expect(adminKeyNote({ id: "soon", scope: "read", expires_at: "2026-11-28T15:00:00.000Z", revoked: false }, now)).toMatch(/^read, expired /);
    expect(adminKeyNote({ id: "later", scope: "read", expires_at: "2027-03-01T00:00:00.000Z", revoked: false }, now)).toBe(`read, expires ${when("2027-03-01T00:00:00.000Z")}`);
    expect(adminKeyNote({ id: "gone", scope: "write", expires_at: null, revoked: true }, now)).toBe("write, revoked");
    expect(adminKeyNote({ id: "ops", scope: "write", expires_at: null, revoked: false }, now)).toBe("write");
  });

  it("a project's count says it is gateway.yaml's keys, in the singular for one", () => {
    expect(yamlKeys(1)).toBe("1 key in gateway.yaml");
    expect(yamlKeys(0)).toBe("0 keys in gateway.yaml");
    expect(yamlKeys(3)).toBe("3 keys in gateway.yaml");
  });
});
