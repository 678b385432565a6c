import { describe, expect, it } from "vitest";
import { problems } from "./config.testkit.ts";

const HASH = "a".repeat(64);
const config = (pipeline: string) => `
providers:
  oai: { protocol: openai, api_key: sk-operator }
models:
  openai/gpt-4o-mini: { endpoints: [{ provider: oai, model: gpt-4o-mini, pricing: { input: "0", output: "0" } }] }
projects:
  acme: { keys: [{ id: k1, sha256: "${HASH}" }] }
${pipeline}
`;

describe("a pipeline without auth", () => {
  it("is refused at the pipeline: it would serve every request without a key, on the operator's provider keys", async () => {
    expect(await problems(config("pipeline: [router, fallback, stream-transcoder]"))).toEqual([
      "F:8:11: pipeline: has no auth, so every request would be served unauthenticated (no key asked for, nothing recorded, no budget or limit) on the operator's provider keys: add auth, first",
    ]);
    expect(await problems(config("pipeline: []"))).toEqual([expect.stringMatching(/^F:8:11: pipeline: has no auth, so every request would be served unauthenticated/)]);
  });

  it("is named once, beside each plugin that needs auth before it", async () => {
    expect(await problems(config("pipeline: [router, usage-metering]"))).toEqual([
      "F:8:20: usage-metering needs auth before it, but auth is not in the pipeline",
      expect.stringMatching(/^F:8:11: pipeline: has no auth/),
    ]);
  });

  it("is fine with auth anywhere, and without pipeline: (the default one starts with auth)", async () => {
    expect(await problems(config("pipeline: [auth, router]"))).toEqual([]);
    expect(await problems(config(""))).toEqual([]);
  });
});
