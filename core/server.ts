// Start a gateway on a port: used by the CLI, the end-to-end tests and the load harness alike.
// A plain node:http server (listhen's shutdown helper threw from a 'finish' listener when a client's socket was
// already gone, which killed the process): timeouts from `server:`, and every connection tracked so that a
// shutdown can stop accepting, let requests in flight finish, and then close what is left.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { watch, type FSWatcher } from "node:fs";
import { Gateway } from "./gateway.ts";
import { loadConfig } from "./config/load.ts";
import { createNodeHandler } from "./app.ts";
import type { Logger } from "./log.ts";
import { loggerFromConfig } from "./observability/logger.ts";
import { startObservability } from "./observability/index.ts";
import { startMcp } from "./mcp/registry.ts";
import { answerClientError } from "./http/client-error.ts";
import { drain, shutdownError } from "./shutdown.ts";
import { requestIdOf } from "./http/handle.ts";
import { endpoints } from "./endpoints/index.ts";
import { isGeminiPath } from "./endpoints/gemini/route.ts";
import { toGeminiJSON } from "./errors.ts";

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
  /** Stop accepting, end idle connections, close the gateway (store, pools). In-flight requests are cut. */
  close(): Promise<void>;
  /**
   * Graceful stop (SIGTERM/SIGINT): stop accepting, let requests and streams in flight finish for up to `graceMs`
   * (default `server.shutdown_grace_ms`), end the rest with the protocol's error event, then close the gateway.
   */
  shutdown(opts?: { graceMs?: number }): Promise<void>;
}

export class PortInUseError extends Error {
  constructor(readonly port: number, readonly host: string) {
    super(`port ${port} on ${host} is in use`);
    this.name = "PortInUseError";
  }
}

export async function startGateway(opts: StartOptions): Promise<RunningGateway> {
  const notices: string[] = [];
  const config = await loadConfig(opts.configFile, { env: opts.env, onNotice: (m) => (opts.logger ? opts.logger.info(m) : notices.push(m)) });
  const ownLog = opts.logger ? undefined : loggerFromConfig(config); // `log:` of gateway.yaml; closed (flushed) last
  const log = opts.logger ?? ownLog!;
  for (const m of notices) log.info(m);
  const gateway = await Gateway.create(config, { logger: log });
  await startObservability(gateway).catch(async (err) => {
    await gateway.close();
    throw err;
  });
  startMcp(gateway);
  const handler = createNodeHandler(gateway);
  const s = config.server;
  const server = createServer({
    headersTimeout: s.headersTimeoutMs,
    // Bounds how long a client may take to *send* its request; responses (streams, video jobs) are not bounded.
    requestTimeout: s.requestTimeoutMs,
    keepAliveTimeout: s.keepAliveTimeoutMs,
    maxHeaderSize: s.maxHeaderBytes,
    connectionsCheckingInterval: Math.min(1000, s.headersTimeoutMs),
  }, (req: IncomingMessage, res: ServerResponse) => {
    if (draining) return refuse(req, res, log);
    responses.add(res);
    res.once("close", () => {
      responses.delete(res);
      // A keep-alive connection whose response just ended goes now rather than at its keep-alive timeout.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    (handler as (req: IncomingMessage, res: ServerResponse) => void)(req, res);
  });
  /** Responses in progress: when a shutdown starts, those not yet started are sent with `connection: close`. */
  const responses = new Set<ServerResponse>();
  let draining = false;
  server.on("clientError", (err, socket) => answerClientError(err, socket as Socket));
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  const wanted = opts.port ?? s.port;
  const host = opts.host ?? s.host;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(wanted, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await gateway.close();
    await ownLog?.close();
    // A busy port is an error, never a silent move to another one (0 still means "any free port").
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") throw new PortInUseError(wanted, host);
    throw err;
  }
  // Errors after listen (EMFILE on accept, ...) are logged; they must never be an unhandled 'error' event.
  server.on("error", (err) => log.error("server error", { error: String(err) }));
  const port = (server.address() as { port: number }).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  const watchers: FSWatcher[] = [];
  const onHup = () => void gateway.reload();
  if (opts.watch) {
    let timer: NodeJS.Timeout | undefined;
    const files = [config.file, ...(config.raw.include ?? []).map((f) => new URL(f, `file://${config.dir}/`).pathname)];
    for (const f of files) {
      try {
        const w = watch(f, () => {
          clearTimeout(timer);
          timer = setTimeout(() => void gateway.reload(config.file), 150);
        });
        w.on("error", (err) => log.warn(`stopped watching ${f}: ${err.message}`));
        watchers.push(w);
      } catch (err) {
        log.warn(`cannot watch ${f}: ${(err as Error).message}`);
      }
    }
  }
  if (opts.sighup) process.on("SIGHUP", onHup);

  const stopWatching = () => {
    for (const w of watchers) w.close();
    process.off("SIGHUP", onHup);
  };
  let shuttingDown: Promise<void> | undefined;

  return {
    url,
    port,
    gateway,
    server,
    shutdown(o = {}) {
      return (shuttingDown ??= (async () => {
        stopWatching();
        await drain({
          server,
          sockets,
          inflight: gateway.inflight,
          log,
          startDraining() {
            draining = true;
            for (const res of responses) if (!res.headersSent) res.setHeader("connection", "close");
          },
          closeGateway: () => gateway.close(),
        }, o.graceMs ?? gateway.config.server.shutdownGraceMs);
        await ownLog?.close();
      })());
    },
    async close() {
      stopWatching();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
      await gateway.close();
      await ownLog?.close();
    },
  };
}

/** A request that arrives on an open keep-alive connection during a shutdown: 503 with the envelope, then close. */
function refuse(req: IncomingMessage, res: ServerResponse, log: Logger): void {
  const err = shutdownError();
  const path = (req.url ?? "/").split("?")[0];
  const anthropic = endpoints.some((e) => e.route === path && e.protocol === "anthropic");
  const requestId = requestIdOf(req);
  log.debug("request refused: shutting down", { requestId, path });
  const body = JSON.stringify(anthropic ? err.toAnthropicJSON() : isGeminiPath(path) ? toGeminiJSON(err) : err.toJSON());
  res.writeHead(err.status, {
    "content-type": "application/json",
    "x-request-id": requestId,
    ...(anthropic ? { "request-id": requestId } : {}),
    "retry-after": String(err.retryAfter),
    "content-length": String(Buffer.byteLength(body)),
    connection: "close",
  });
  res.end(body);
}
