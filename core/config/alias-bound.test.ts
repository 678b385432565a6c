import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";

const hash = (i: number) => i.toString(16).padStart(64, "0");
const keys = (n: number) => Array.from({ length: n }, (_, i) => `      - { id: k${i}, sha256: "${hash(i)}", rate_limits: *per_key }`).join("\n");
const withKeys = (n: number) => `
models:
  a/m: { endpoints: [{ provider: sim, model: m }] }
projects:
  acme:
    rate_limits: &per_key { rpm: 60, tpm: 100000 }
    keys:
${keys(n)}
`;

describe("YAML aliases", () => {
  it("may be used more than 100 times (one anchor for 250 keys' rate limits)", async () => {
    const config = await loadConfig(write(withKeys(250)), { env: {} });
    expect(config.keys.size).toBe(250);
    expect(config.keys.get(hash(249))!.rateLimits).toEqual({ rpm: 60, tpm: 100000 });
  });

  it("are refused, at the alias, when they expand the file past what it could honestly need (billion laughs)", async () => {
    const levels = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const bomb = levels.map((l, i) => `  ${l}: &${l} [${i === 0 ? Array(10).fill('"x"').join(", ") : Array(10).fill(`*${levels[i - 1]}`).join(", ")}]`).join("\n");
    const p = await problems(`${withKeys(1)}routing:\n${bomb}\n`);
    expect(p).toEqual([expect.stringMatching(/^F:\d+:\d+: YAML aliases make this file stand for more than 100000 values .*refused, as it could exhaust/)]);
    // The alias named is in the file as written: the first use that the bound was crossed in.
    const [, line, column] = /^F:(\d+):(\d+)/.exec(p[0]!)!;
    expect(Number(line)).toBeGreaterThan(10);
    expect(Number(column)).toBeGreaterThan(1);
  });

  it("are refused, at the alias, when one is inside the value it names", async () => {
    expect(await problems(`${withKeys(1)}pipeline: &p [auth, router, *p]\n`)).toEqual([
      "F:9:29: alias *p is inside the value its anchor &p names: a value cannot contain itself",
    ]);
  });
});
