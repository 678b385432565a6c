// Config checks an operator audit found missing: each test here failed before its fix.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";


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
    // Only the variable: not also the empty string's "must NOT have fewer than 16 characters".
    expect(await problems(`metrics: { token: "\${METRICS_TOKEN}" }\n`)).toEqual([
      "F:1:19: metrics.token: environment variable METRICS_TOKEN is not set and has no default (write ${METRICS_TOKEN:-default})",
    ]);
  });
});

describe("unset variables in a provider's fields", () => {
  async function load(text: string, env: Record<string, string> = {}) {
    const notices: string[] = [];
    const cfg = await loadConfig(write(text), { env, onNotice: (m) => notices.push(m) });
    return { cfg, notices: notices.filter((m) => !m.includes("stream-transcoder")) };
  }

  it("disables the provider with one notice naming every unset variable, not a schema error about the empty value", async () => {
    const { cfg, notices } = await load(`providers:
  fakeai: { protocol: openai, base_url: "\${FAKE_URL}", timeout_ms: "\${FT}", api_key: "\${FAKE_KEY}", headers: { x-org: "\${FAKE_ORG}" } }
  bedrock: { protocol: bedrock, region: "\${AWS_REGION:-us-east-1}", aws_access_key_id: "\${AWS_ACCESS_KEY_ID}", aws_secret_access_key: "\${AWS_SECRET_ACCESS_KEY}", aws_session_token: "\${AWS_SESSION_TOKEN:-}" }
models:
  fake/a: { endpoints: [{ provider: fakeai, model: a, pricing: { input: "0", output: "0" } }] }
`);
    expect(notices).toEqual([
      'provider "fakeai" disabled: $FAKE_URL, $FT, $FAKE_KEY, $FAKE_ORG are not set',
      'provider "bedrock" disabled: $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY are not set',
    ]);
    expect(cfg.providers.has("fakeai")).toBe(false);
    expect(cfg.disabledProviders.get("fakeai")).toBe("$FAKE_URL, $FT, $FAKE_KEY, $FAKE_ORG are not set");
    expect(cfg.models.get("fake/a")!.endpoints).toEqual([]);
    // The declaration BYOK requests still use holds no half-expanded values ("" base_url, "" timeout).
    expect(cfg.raw.providers!.fakeai).toEqual({ protocol: "openai", headers: {} });
  });

  it("still reports what is wrong with a disabled provider apart from its unset variables", async () => {
    expect(await problems(`providers:\n  fakeai: { protocol: openai, base_url: "\${FAKE_URL}", timeout_ms: fast }\n`)).toEqual([
      "F:2:68: providers.fakeai.timeout_ms: must be integer",
    ]);
  });

  it("names the variable behind a schema problem it caused where it disables nothing (a project's own credentials)", async () => {
    expect(await problems(`providers:
  openai: { protocol: openai, api_key: sk }
projects:
  p: { keys: [{ id: k, sha256: "${A}" }], providers: { openai: { api_key: "\${ACME_KEY}", timeout_ms: "\${ACME_TIMEOUT}" } } }
`)).toEqual([
      "F:4:162: projects.p.providers.openai.timeout_ms: must be integer (because $ACME_TIMEOUT is not set)",
    ]);
  });

  it("names the field of each unset variable on a flow mapping's one line, not only its column", async () => {
    expect(await problems(`server: { host: "\${GATEWAY_HOST}", port: "\${GATEWAY_PORT}" }\nlog: { file: "\${LOG_FILE}" }\n`)).toEqual([
      "F:1:17: server.host: environment variable GATEWAY_HOST is not set and has no default (write ${GATEWAY_HOST:-default})",
      "F:1:42: server.port: environment variable GATEWAY_PORT is not set and has no default (write ${GATEWAY_PORT:-default})",
      "F:2:14: log.file: environment variable LOG_FILE is not set and has no default (write ${LOG_FILE:-default})",
    ]);
  });

  it("reports an unset variable outside providers once, not again as the empty value's schema problem", async () => {
    expect(await problems(`server: { port: "\${GATEWAY_PORT}" }\n`)).toEqual([
      "F:1:17: server.port: environment variable GATEWAY_PORT is not set and has no default (write ${GATEWAY_PORT:-default})",
    ]);
  });
});

describe("endpoints without pricing", () => {
  const notice = (model: string, endpoint: string) => `model ${model}: endpoint ${endpoint} has no pricing, so its requests cost $0 and no budget limits them` +
    ' (give pricing, or pricing: { input: "0", output: "0" } for a free model)';

  it("says so once per unpriced endpoint; an explicit zero price, the simulator and a priced endpoint say nothing", async () => {
    const notices: string[] = [];
    await loadConfig(write(`providers:
  xai: { protocol: openai, base_url: https://api.x.ai/v1, api_key: sk }
  local: { protocol: openai, base_url: http://127.0.0.1:11434/v1 }
  fastsim: { protocol: sim }
models:
  xai/grok-4:
    endpoints:
      - { provider: xai, model: grok-4-0709, reasoning_effort: false }
      - { provider: local, model: grok, pricing: {} }
  meta/llama: { endpoints: [{ provider: local, model: llama, pricing: { input: "0", output: "0" } }] }
  x/priced: { endpoints: [{ provider: xai, model: p, pricing: { input: "0.000003", output: "0.000015" } }] }
  x/sim: { endpoints: [{ provider: sim, model: s }, { provider: fastsim, model: s }] }
`), { env: {}, onNotice: (m) => notices.push(m) });
    expect(notices.filter((m) => m.includes("pricing"))).toEqual([notice("xai/grok-4", "xai/grok-4-0709"), notice("xai/grok-4", "local/grok")]);
  });
});
