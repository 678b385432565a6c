// Start a gateway on a port: used by the CLI, the end-to-end tests and the load harness alike.
import { listen } from "listhen";
import { watch, type FSWatcher } from "node:fs";
import type { Server } from "node:http";
import { Gateway } from "./gateway.ts";
import { loadConfig } from "./config/load.ts";
import { createNodeHandler } from "./app.ts";
import { createLogger, type Logger } from "./log.ts";

export interface StartOptions {
  configFile: string;
  port?: number;
  host?: string;
  logger?: Logger;
  /** Reload when the config file changes. */
  watch?: boolean;
  /** Reload on SIGHUP. */
  sighup?: boolean;
  env?: Record<string, string | undefined>;
}

export interface RunningGateway {
  url: string;
  port: number;
  gateway: Gateway;
  server: Server;
  close(): Promise<void>;
}

export async function startGateway(opts: StartOptions): Promise<RunningGateway> {
  const log = opts.logger ?? createLogger();
  const config = await loadConfig(opts.configFile, { env: opts.env, onNotice: (m) => log.info(m) });
  const gateway = await Gateway.create(config, { logger: log });
  const handler = createNodeHandler(gateway);
  const wanted = opts.port ?? config.server.port;
  const listener = await listen(handler as never, {
    // A busy port is an error, never a silent move to another one (0 still means "any free port").
    // (get-port-please reads an empty alternativePortRange as "no alternatives"; its type insists on a pair.)
    port: wanted === 0 ? 0 : { port: wanted, ports: [], alternativePortRange: [] as unknown as [number, number], random: false },
    hostname: opts.host ?? config.server.host,
    showURL: false,
    open: false,
    clipboard: false,
    qr: false,
    public: false,
    autoClose: false,
  });
  const server = listener.server as Server;
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0; // streams and video jobs legitimately run for minutes
  const port = (server.address() as { port: number }).port;
  const host = opts.host ?? config.server.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  const watchers: FSWatcher[] = [];
  const onHup = () => void gateway.reload();
  if (opts.watch) {
    let timer: NodeJS.Timeout | undefined;
    const files = [config.file, ...(config.raw.include ?? []).map((f) => new URL(f, `file://${config.dir}/`).pathname)];
    for (const f of files) {
      try {
        watchers.push(watch(f, () => {
          clearTimeout(timer);
          timer = setTimeout(() => void gateway.reload(config.file), 150);
        }));
      } catch (err) {
        log.warn(`cannot watch ${f}: ${(err as Error).message}`);
      }
    }
  }
  if (opts.sighup) process.on("SIGHUP", onHup);

  return {
    url,
    port,
    gateway,
    server,
    async close() {
      for (const w of watchers) w.close();
      process.off("SIGHUP", onHup);
      server.closeIdleConnections?.();
      await listener.close();
      await gateway.close();
    },
  };
}
