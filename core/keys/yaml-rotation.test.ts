import { describe, expect, it } from "vitest";
import { rotationRefusal, successorId } from "./yaml-rotation.ts";
import type { YamlKey } from "./yaml-edit.ts";

const NOW = Date.parse("2030-01-01T00:00:00Z");
const SOON = "2030-01-01T01:00:00Z";
const key = (id: string, extra: Partial<YamlKey> = {}): YamlKey => ({ project: "demo", id, sha256: "a".repeat(64), ...extra });

describe("rotating a gateway.yaml key", () => {
  it("names the successor the API would: the chain's first free -rN", () => {
    expect(successorId("team", new Set(["team"]))).toBe("team-r2");
    expect(successorId("team-r2", new Set(["team", "team-r2", "team-r4"]))).toBe("team-r3");
  });

  it("refuses a key whose successor the file records, whatever its expiry", () => {
    const old = key("team", { expires_at: SOON, replaced_by: "ci" });
    expect(rotationRefusal([old, key("ci", { rotated_from: "team" })], old, NOW)).toBe("key demo/team was already rotated to demo/ci: rotate ci instead");
  });

  it("asks for the new key's expiry beside a later id of the chain recording no predecessor, never calling it rotated", () => {
    const team = key("team", { expires_at: SOON });
    expect(rotationRefusal([team, key("team-r3")], team, NOW)).toBe(
      `key demo/team has an expires_at (${SOON}) that the new key would take, but demo/team-r3 looks like the successor of an earlier ` +
      `rotation of it that left no record, which would make ${SOON} that rotation's overlap end: pass --expires DATE for the new key ` +
      `(--expires ${SOON} if it is team's own; if team was rotated to team-r3, rotate team-r3 instead)`);
    // Given an expiry, nothing is handed on: rotated (eu-r1 and eu-r2 may be two regions' keys).
    const eu = key("eu-r1", { expires_at: SOON });
    expect(rotationRefusal([eu, key("eu-r2", { expires_at: SOON })], eu, NOW, "2031-01-01T00:00:00Z")).toBeUndefined();
    // No expiry: no rotation ever set one.
    expect(rotationRefusal([key("team"), key("team-r2")], key("team"), NOW)).toBeUndefined();
    // The later id names another predecessor, or is the chain's earlier one, or another project's.
    const r2 = key("team-r2", { expires_at: SOON });
    expect(rotationRefusal([team, key("team-r3", { rotated_from: "team-r2" })], team, NOW)).toBeUndefined();
    expect(rotationRefusal([key("team"), r2], r2, NOW)).toBeUndefined();
    expect(rotationRefusal([team, { ...key("team-r2"), project: "other" }], team, NOW)).toBeUndefined();
  });

  it("refuses a revoked or expired key as the API does", () => {
    expect(rotationRefusal([], key("a", { revoked: true }), NOW)).toBe("key demo/a is revoked: create a new key instead");
    expect(rotationRefusal([], key("a", { expires_at: "2029-12-31T23:59:59Z" }), NOW)).toBe("key demo/a has expired (2029-12-31T23:59:59Z): create a new key instead");
  });
});
