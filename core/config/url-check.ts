// URLs gateway.yaml gives that the gateway builds on rather than calls as written: server.public_url, the origin of
// every signed asset link (a path prefix allowed: a proxy may serve the gateway under one), and telemetry.otlp.endpoint,
// which /v1/traces is appended to. Anything but an absolute http(s) URL there would be pasted into links
// ("not a url/api/v1/assets/...") or stop the start with the exporter's stack; a query or fragment would swallow what
// is appended. Refused at load, at the key.
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

/** Why `value` is no absolute http(s) URL that a path can be appended to, or undefined when it is one. */
export function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "it is not an absolute URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `its scheme is ${url.protocol.slice(0, -1)}`;
  if (!url.hostname) return "it names no host";
  if (url.search || url.hash || /[?#]/.test(value)) return "it has a query or fragment, which the path added to it would end up in";
  return undefined;
}

export function checkBaseUrls(config: GatewayConfig, at: At, problems: ConfigProblem[]): void {
  const fields: [string[], string | undefined, string][] = [
    [["server", "public_url"], config.server?.public_url, "the origin of signed asset links, such as https://gateway.example.com"],
    [["telemetry", "otlp", "endpoint"], config.telemetry?.otlp?.endpoint, "the collector's base URL, such as http://localhost:4318"],
  ];
  for (const [path, value, what] of fields) {
    if (typeof value !== "string" || value === "") continue; // "" (an empty ${VAR:-}) is unset: the Host, the OTEL_* variables
    const why = baseUrlProblem(value);
    // The value is not repeated: a collector URL may hold a password (https://user:token@host).
    if (why) problems.push(at(path, `${path.join(".")}: must be an absolute http(s) URL, ${what} (${why})`));
  }
}
