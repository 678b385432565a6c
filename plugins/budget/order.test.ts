// The policy plugins declare what must run before them; a pipeline that breaks it is refused at boot.
import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { loadConfig } from "../../core/config/load.ts";
import { ConfigError } from "../../core/config/source.ts";
import { policyConfig } from "../../test/helpers/policy-config.ts";

async function problems(pipeline: string[]): Promise<string[]> {
  const file = join(mkdtempSync(join(tmpdir(), "mg-order-")), "gateway.yaml");
  writeFileSync(file, YAML.stringify(policyConfig("http://127.0.0.1:9/v1", { pipeline })));
  try {
    await loadConfig(file);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => p.message);
    throw err;
  }
}

describe("policy plugin order", () => {
  it("accepts the default order", async () => {
    expect(await problems(["auth", "allowlist", "budget", "rate-limit", "idempotency", "router", "usage-metering"])).toEqual([]);
  });

  it("refuses a policy plugin placed before auth, or without it", async () => {
    expect(await problems(["budget", "auth", "router"])).toEqual(["budget needs auth before it, but auth comes after it"]);
    expect(await problems(["rate-limit", "idempotency", "router"])).toEqual([
      "rate-limit needs auth before it, but auth is not in the pipeline",
      "idempotency needs auth before it, but auth is not in the pipeline",
      expect.stringMatching(/^pipeline: has no auth, so every request would be served unauthenticated/),
    ]);
  });
});
