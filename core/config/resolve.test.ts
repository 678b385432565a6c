// Config checks an operator audit found missing: each test here failed before its fix.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./load.ts";
import { ConfigError, formatProblem } from "./source.ts";

function write(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "mg-cfg-")), "gateway.yaml");
  writeFileSync(file, text);
  return file;
}

async function problems(text: string, env: Record<string, string> = {}): Promise<string[]> {
  const file = write(text);
  try {
    await loadConfig(file, { env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => formatProblem(p).replaceAll(file, "F"));
    throw err;
  }
  return [];
}

const A = "a".repeat(64);
const B = "b".repeat(64);

describe("project keys", () => {
  it("refuses a key id declared twice in one project, at the second and naming the first", async () => {
    expect(await problems(`projects:
  acme:
    keys:
      - { id: ci2, sha256: "${A}" }
      - { id: ci2, sha256: "${B}" }
`)).toEqual([
      "F:5:15: project acme: key id ci2 is already declared at F:4:15 (revocation, rate limits and budgets go by id: give each key its own)",
    ]);
  });

  it("allows the same key id in two projects", async () => {
    expect(await problems(`projects:
  acme: { keys: [{ id: ci, sha256: "${A}" }] }
  other: { keys: [{ id: ci, sha256: "${B}" }] }
`)).toEqual([]);
  });
});

describe("metrics", () => {
  it("reads metrics.token from the environment, as the shipped gateway.yaml's comment suggests", async () => {
    const shipped = readFileSync(fileURLToPath(new URL("../../gateway.yaml", import.meta.url)), "utf8");
    const example = /^# (metrics: \{.*\})/m.exec(shipped)?.[1];
    expect(example).toBe('metrics: { host: 10.0.0.5, port: 9464, token: "${METRICS_TOKEN}" }');
    const token = "scrape-token-from-the-environment";
    const cfg = await loadConfig(write(`${example}\n`), { env: { METRICS_TOKEN: token } });
    // What the metrics listener and GET /metrics check a scrape's bearer token against.
    expect(cfg.metrics).toMatchObject({ host: "10.0.0.5", port: 9464, token });
  });

  it("refuses an unset metrics token rather than leaving /metrics open", async () => {
    expect(await problems(`metrics: { token: "\${METRICS_TOKEN}" }\n`)).toContain(
      "F:1:19: environment variable METRICS_TOKEN is not set and has no default (write ${METRICS_TOKEN:-default})",
    );
  });
});
