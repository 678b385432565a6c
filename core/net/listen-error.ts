// Why a listener could not bind, in one line an operator can act on: a host that does not resolve or is not this
// machine's, a privileged port, an invalid address. `start` prints it instead of Node's stack trace.

export class CannotListenError extends Error {
  constructor(readonly host: string, readonly port: number, readonly why: string, readonly what: "api" | "metrics" = "api") {
    super(`cannot listen${what === "metrics" ? " for metrics" : ""} on ${hostPort(host, port)} (${why})`);
    this.name = "CannotListenError";
  }
}

const hostPort = (host: string, port: number) => `${host.includes(":") ? `[${host}]` : host}:${port}`;

/**
 * A listen error as a CannotListenError, or undefined for one that is not about the address (EADDRINUSE has its own
 * PortInUseError; anything else is rethrown as it is). The reason names the setting to change.
 */
export function cannotListen(err: unknown, host: string, port: number, what: "api" | "metrics" = "api"): CannotListenError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const setting = what === "metrics" ? "metrics.host" : "--host or server.host";
  const portSetting = what === "metrics" ? "--metrics-port or metrics.port" : "--port or server.port";
  const why: Record<string, string> = {
    ENOTFOUND: `${host} does not resolve to an address: check ${setting}`,
    EAI_AGAIN: `looking up ${host} failed for now (DNS unreachable?): check ${setting}, or give an IP address`,
    EADDRNOTAVAIL: `${host} is not an address of this machine: check ${setting} (0.0.0.0 listens on all of them)`,
    EACCES: port > 0 && port < 1024
      ? `ports below 1024 need root or CAP_NET_BIND_SERVICE: set a higher ${portSetting}`
      : "permission denied",
    EINVAL: `${host} is not a valid address to listen on: check ${setting}`,
  };
  return code && why[code] ? new CannotListenError(host, port, `${why[code]}; ${code}`, what) : undefined;
}
