// A provider field of another protocol was accepted and never read; a Vertex provider with no project failed every
// request with a 502. check, start and a reload (all through loadConfig) refuse both at load.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";

describe("fields of another protocol", () => {
  it("refuses AWS keys and a credentials_file on an openai provider, and flavor: azure on an anthropic one, naming the protocol they belong to", async () => {
    expect(await problems(`providers:
  openai: { protocol: openai, api_key: sk, aws_access_key_id: AKIA, credentials_file: sa.json }
  claude: { protocol: anthropic, api_key: sk, flavor: azure, api_version: "2024-10-21" }
  gem: { protocol: gemini, api_key: k, region: us-east5, reasoning_field: none }
`)).toEqual([
      "F:2:44: providers.openai.aws_access_key_id: a setting of protocol bedrock, not openai: this provider would never read it (remove it, or fix protocol)",
      "F:2:69: providers.openai.credentials_file: a setting of protocol vertex, not openai: this provider would never read it (remove it, or fix protocol)",
      "F:3:47: providers.claude.flavor: a setting of protocol openai, not anthropic: this provider would never read it (remove it, or fix protocol)",
      "F:3:62: providers.claude.api_version: a setting of protocol openai, not anthropic: this provider would never read it (remove it, or fix protocol)",
      "F:4:40: providers.gem.region: a setting of protocol bedrock or vertex, not gemini: this provider would never read it (remove it, or fix protocol)",
      "F:4:58: providers.gem.reasoning_field: a setting of protocol openai or together, not gemini: this provider would never read it (remove it, or fix protocol)",
    ]);
  });

  it("takes each field on its own protocol", async () => {
    expect(await problems(`providers:
  azure: { protocol: openai, flavor: azure, api_version: "2024-10-21", base_url: "https://r.openai.azure.com", api_key: k, reasoning_field: none, unknown_fields: refused, max_stop_sequences: 4 }
  together: { protocol: together, api_key: k, reasoning_field: reasoning }
  bedrock: { protocol: bedrock, region: us-east-1, aws_access_key_id: A, aws_secret_access_key: S, aws_session_token: T, bedrock_claude_api: converse }
  vertex: { protocol: vertex, region: global, project_id: p, api_key: t }
  sim2: { protocol: sim, sim: { ttft_ms: 0 } }
`)).toEqual([]);
  });

  it("takes a field whose ${VAR:-} expands to \"\" as unset, as the URL check does, and refuses it once the variable holds a value", async () => {
    const config = `providers:
  an: { protocol: anthropic, api_key: k, region: "\${AWS_REGION:-}" }
`;
    expect(await problems(config, {})).toEqual([]);
    expect(await problems(config, { AWS_REGION: "us-east-1" })).toEqual([
      "F:2:42: providers.an.region: a setting of protocol bedrock or vertex, not anthropic: this provider would never read it (remove it, or fix protocol)",
    ]);
  });

  it("the shipped gateway.yaml loads with every provider's variables set", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-shipped-"));
    const shipped = readFileSync(fileURLToPath(new URL("../../gateway.yaml", import.meta.url)), "utf8").replace("include: [catalog/models.yaml]", "");
    const key = join(dir, "sa.json");
    writeFileSync(key, JSON.stringify({ type: "service_account", project_id: "from-key" }));
    const env = Object.fromEntries([...shipped.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => [m[1]!, "set"]));
    const notices: string[] = [];
    const cfg = await loadConfig(write(shipped, "gateway.yaml", dir), { env: { ...env, GOOGLE_APPLICATION_CREDENTIALS: key }, onNotice: (m) => notices.push(m) });
    expect(notices.filter((m) => m.includes("disabled"))).toEqual([]);
    expect(cfg.providers.has("vertex") && cfg.providers.has("bedrock")).toBe(true);
  });
});

describe("a Vertex provider's project", () => {
  it("refuses an api_key (an access token) without project_id: every request was a 502 'no project_id'", async () => {
    expect(await problems(`providers:\n  vertex: { protocol: vertex, api_key: ya29.token }\n`)).toEqual([
      "F:2:3: providers.vertex: project_id is required without credentials_file: an access token (api_key, or a project's own) names no project, so every request would fail",
    ]);
    expect(await problems(`providers:\n  vertex: { protocol: vertex, api_key: ya29.token, project_id: "\${GOOGLE_CLOUD_PROJECT:-}" }\n`)).toHaveLength(1);
    expect(await problems(`providers:\n  vertex: { protocol: vertex, api_key: ya29.token, project_id: my-project }\n`)).toEqual([]);
  });

  it("refuses a key file, readable at load, that has no project_id either; one with it, or not readable yet, is kept as it was", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-vertex-"));
    writeFileSync(join(dir, "no-project.json"), JSON.stringify({ type: "service_account", client_email: "sa@x.iam.gserviceaccount.com" }));
    writeFileSync(join(dir, "with-project.json"), JSON.stringify({ type: "service_account", project_id: "from-key" }));
    const load = async (text: string) => {
      const file = write(text, "gateway.yaml", dir);
      try {
        await loadConfig(file, { env: {} });
        return [];
      } catch (err) {
        return (err as { problems: { message: string }[] }).problems.map((p) => p.message);
      }
    };
    expect(await load(`providers:\n  vertex: { protocol: vertex, credentials_file: no-project.json }\n`)).toEqual([
      "providers.vertex: project_id is required: the service-account key no-project.json has no project_id, so every request would fail",
    ]);
    expect(await load(`providers:\n  vertex: { protocol: vertex, credentials_file: with-project.json }\n`)).toEqual([]);
    expect(await load(`providers:\n  vertex: { protocol: vertex, credentials_file: not-written-yet.json }\n`)).toEqual([]);
    expect(await load(`providers:\n  vertex: { protocol: vertex, credentials_file: no-project.json, project_id: p }\n`)).toEqual([]);
  });

  it("says nothing of a Vertex provider disabled for its unset variable (the shipped one without GOOGLE_APPLICATION_CREDENTIALS)", async () => {
    expect(await problems(`providers:\n  vertex: { protocol: vertex, credentials_file: "\${GOOGLE_APPLICATION_CREDENTIALS}", project_id: "\${GOOGLE_CLOUD_PROJECT:-}" }\n`)).toEqual([]);
  });
});
