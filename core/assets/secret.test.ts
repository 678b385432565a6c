import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sharedSecretWarning, WORKER_SECRET_ENV } from "./secret.ts";

describe("sharedSecretWarning", () => {
  it("warns only when a shared (Redis) store runs without server.signing_secret", () => {
    expect(sharedSecretWarning({ server: {}, store: { kind: "redis" } })).toMatch(/server\.signing_secret is not set/);
    expect(sharedSecretWarning({ server: { signingSecret: "s" }, store: { kind: "redis" } })).toBeUndefined();
    expect(sharedSecretWarning({ server: {}, store: { kind: "sqlite" } })).toBeUndefined();
    expect(sharedSecretWarning({ server: {}, store: { kind: "memory" } })).toBeUndefined();
  });
});

describe("fallbackSigningSecret", () => {
  beforeEach(() => vi.resetModules()); // a fresh module: its secret is drawn once per process
  afterEach(() => {
    delete process.env[WORKER_SECRET_ENV];
    vi.resetModules();
  });

  it("a worker takes the primary's secret and removes it from its environment", async () => {
    process.env[WORKER_SECRET_ENV] = "p".repeat(64);
    const { fallbackSigningSecret } = await import("./secret.ts");
    expect(fallbackSigningSecret()).toBe("p".repeat(64));
    expect(process.env[WORKER_SECRET_ENV]).toBeUndefined();
    expect(fallbackSigningSecret()).toBe("p".repeat(64));
  });

  it("a process on its own draws one random secret and keeps it", async () => {
    const { fallbackSigningSecret } = await import("./secret.ts");
    const s = fallbackSigningSecret();
    expect(s).toMatch(/^[0-9a-f]{64}$/);
    expect(fallbackSigningSecret()).toBe(s);
  });
});
