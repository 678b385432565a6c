// Configured header maps (a provider's, an MCP server's, a project's own MCP credentials, the OTLP exporter's) are
// sent on every call to that upstream: a name that is not an HTTP token ("bad header") or a value holding a line
// break would have the HTTP client refuse each call ("invalid header key"), seen only as upstream failures. An api_key
// (the provider's or a project's own) goes in a header too. Refused at load instead, naming the field; a value is
// never repeated (it is often a secret).
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

/** RFC 9110 §5.6.2 token characters: what a field name may hold. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A character an HTTP client refuses in a field value: controls but tab (CR, LF, NUL...) and anything past U+00FF. */
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

const NAMED: Record<string, string> = { "\r": "a carriage return", "\n": "a line feed", "\0": "a NUL character" };

/** Why a header value cannot be sent, or undefined when it can. */
export function headerValueProblem(value: string): string | undefined {
  const bad = BAD_VALUE_CHAR.exec(value)?.[0];
  if (bad === undefined) return undefined;
  const code = `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  return `its value holds ${NAMED[bad] ?? (bad.charCodeAt(0) < 0x20 || bad === "\x7f" ? "a control character" : "a character an HTTP header cannot carry")} (${code})`;
}

/** Every header map gateway.yaml configures, with where it is. */
function headerMaps(config: GatewayConfig): { path: string[]; headers: Record<string, string> }[] {
  const maps: { path: string[]; headers: Record<string, string> }[] = [];
  for (const [name, pc] of Object.entries(config.providers ?? {})) if (pc.headers) maps.push({ path: ["providers", name, "headers"], headers: pc.headers });
  for (const [name, sc] of Object.entries(config.mcp_servers ?? {})) if (sc.headers) maps.push({ path: ["mcp_servers", name, "headers"], headers: sc.headers });
  for (const [pid, project] of Object.entries(config.projects ?? {})) {
    for (const [name, own] of Object.entries(project.mcp?.servers ?? {})) {
      if (own.headers) maps.push({ path: ["projects", pid, "mcp", "servers", name, "headers"], headers: own.headers });
    }
  }
  const otlp = config.telemetry?.otlp?.headers;
  if (otlp) maps.push({ path: ["telemetry", "otlp", "headers"], headers: otlp });
  return maps;
}

export function checkHeaders(config: GatewayConfig, at: At, problems: ConfigProblem[]): void {
  for (const { path, headers } of headerMaps(config)) {
    for (const [name, value] of Object.entries(headers)) {
      const where = [...path, name].join(".");
      if (!TOKEN.test(name)) {
        problems.push(at([...path, name], `${where}: ${JSON.stringify(name)} is not an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only: no spaces, colons or other characters)`, true));
        continue;
      }
      const why = typeof value === "string" ? headerValueProblem(value) : undefined;
      if (why) problems.push(at([...path, name], `${where}: ${why}, which no HTTP request may carry`));
    }
  }
  for (const { path, value } of apiKeys(config)) {
    const why = headerValueProblem(value);
    if (why) problems.push(at(path, `${path.join(".")}: ${why}, which no HTTP request may carry (a line break from the variable it was read from?)`));
  }
}

/** The api_keys sent as a header (Authorization, x-api-key, api-key): the providers' and the projects' own. */
function apiKeys(config: GatewayConfig): { path: string[]; value: string }[] {
  const keys: { path: string[]; value: string }[] = [];
  for (const [name, pc] of Object.entries(config.providers ?? {})) if (typeof pc.api_key === "string") keys.push({ path: ["providers", name, "api_key"], value: pc.api_key });
  for (const [pid, project] of Object.entries(config.projects ?? {})) {
    for (const [name, own] of Object.entries(project.providers ?? {})) {
      if (typeof own.api_key === "string") keys.push({ path: ["projects", pid, "providers", name, "api_key"], value: own.api_key });
    }
  }
  return keys;
}
