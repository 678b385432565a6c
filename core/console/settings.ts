// `console:` in gateway.yaml (docs/console.md): whether the operator console is served and where. Read on every
// console request, so a reload that moves or switches it off takes effect at once.
import type { IncomingMessage } from "node:http";
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "../config/source.ts";

export interface ConsoleSettings {
  enabled: "auto" | boolean;
  /** No trailing slash. */
  path: string;
}

export const DEFAULT_CONSOLE_PATH = "/console";

/** Paths the gateway answers itself: the console cannot live under them. */
const RESERVED = ["/api", "/admin", "/metrics", "/healthz", "/readyz"];

export function consoleSettings(raw: GatewayConfig): ConsoleSettings {
  return { enabled: raw.console?.enabled ?? "auto", path: raw.console?.path ?? DEFAULT_CONSOLE_PATH };
}

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

/** What the schema cannot say: the path is not one the gateway already answers. */
export function checkConsole(config: GatewayConfig, at: At, problems: ConfigProblem[]): void {
  const path = config.console?.path;
  if (path === undefined) return;
  const clash = RESERVED.find((r) => path === r || path.startsWith(`${r}/`));
  if (clash) problems.push(at(["console", "path"], `console.path ${path} is under ${clash}, which the gateway answers itself; pick another path (default ${DEFAULT_CONSOLE_PATH})`));
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (a dual-stack listener reports ::ffff:127.0.0.1). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith("::ffff:") ? address.slice(7) : address;
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** Is the console offered on this connection? `auto`: only to connections made to a loopback address. */
export function servedHere(s: ConsoleSettings, req: IncomingMessage): boolean {
  if (s.enabled === false) return false;
  return s.enabled === true || isLoopback(req.socket.localAddress);
}
