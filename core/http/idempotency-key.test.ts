import { describe, expect, it } from "vitest";
import { idempotencyScope } from "./idempotency-key.ts";

describe("idempotencyScope", () => {
  it("gives every project, endpoint, kind of key and key a scope no other combination has", () => {
    const projects = ["video", "chat", "sandbox", "acme"];
    const endpoints = ["chat", "videos", "messages", "embeddings"]; // endpoint names (never "sandbox")
    const keys = ["k", "chat:k", "videos:k", "sandbox:chat:k"];
    const seen = new Map<string, string>();
    for (const p of projects) for (const e of endpoints) for (const k of keys) for (const sandbox of [false, true]) {
      const scope = idempotencyScope(p, e, k, sandbox);
      const who = JSON.stringify([p, e, k, sandbox]);
      expect(seen.get(scope), `${who} and ${seen.get(scope)} share ${scope}`).toBeUndefined();
      seen.set(scope, who);
    }
  });
});
