// Provider settings that belong to one protocol: an AWS key or a Vertex credentials_file on an openai provider, or
// flavor: azure on an anthropic one, was accepted and never read, so the operator believed it in force. Refused at
// load, naming the protocol it belongs to. And a Vertex provider that can find no project (no project_id, no key file,
// or a key file without one) failed every request with a 502; refused at load too.
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { GatewayConfig, ProviderConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;
type Protocol = ProviderConfig["protocol"];

/** Each protocol-bound field -> the protocols whose drivers read it (together is an openai-protocol host). */
const OWNERS: Partial<Record<keyof ProviderConfig, readonly Protocol[]>> = {
  flavor: ["openai"],
  api_version: ["openai"],
  reasoning_field: ["openai", "together"],
  unknown_fields: ["openai", "together"],
  max_stop_sequences: ["openai", "together"],
  tool_call_ids: ["openai", "together"],
  region: ["bedrock", "vertex"],
  aws_access_key_id: ["bedrock"],
  aws_secret_access_key: ["bedrock"],
  aws_session_token: ["bedrock"],
  bedrock_claude_api: ["bedrock"],
  credentials_file: ["vertex"],
  project_id: ["vertex"],
  sim: ["sim"],
};

const list = (ps: readonly string[]) => (ps.length === 1 ? ps[0]! : `${ps.slice(0, -1).join(", ")} or ${ps[ps.length - 1]}`);

/**
 * `enabled`: whether a provider is switched on (a disabled one, its variables unset, is only named in a notice); its
 * credentials_file is relative to `configDir`.
 */
export function checkProviderFields(config: GatewayConfig, configDir: string, enabled: (provider: string) => boolean, at: At, problems: ConfigProblem[]): void {
  for (const [name, pc] of Object.entries(config.providers ?? {})) {
    for (const field of Object.keys(pc) as (keyof ProviderConfig)[]) {
      const owners = OWNERS[field];
      // "" (a ${VAR:-} whose variable is unset or empty) is no setting, as the URL check takes it.
      if (!owners || pc[field] === undefined || pc[field] === "" || owners.includes(pc.protocol)) continue;
      problems.push(at(["providers", name, field],
        `providers.${name}.${field}: a setting of protocol ${list(owners)}, not ${pc.protocol}: this provider would never read it (remove it, or fix protocol)`, true));
    }
    if (pc.protocol === "vertex" && enabled(name)) {
      const missing = vertexProjectProblem(pc, configDir);
      if (missing) problems.push(at(["providers", name], `providers.${name}: ${missing}`, true));
    }
  }
}

/**
 * Why a Vertex provider has no project to put in its URLs: project_id is unset (or empty) and there is no key file to
 * take it from, or the key file, readable now, has none. A key file that cannot be read yet is left to the first
 * request (it is read then, and fixing it needs no restart).
 */
function vertexProjectProblem(pc: ProviderConfig, configDir: string): string | undefined {
  if (pc.project_id) return undefined;
  if (!pc.credentials_file) {
    return "project_id is required without credentials_file: an access token (api_key, or a project's own) names no project, so every request would fail";
  }
  let account: unknown;
  try {
    const file = isAbsolute(pc.credentials_file) ? pc.credentials_file : resolve(configDir, pc.credentials_file);
    account = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  const project = (account as { project_id?: unknown } | null)?.project_id;
  if (typeof project === "string" && project) return undefined;
  return `project_id is required: the service-account key ${pc.credentials_file} has no project_id, so every request would fail`;
}
