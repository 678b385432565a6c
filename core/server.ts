// Start a gateway on a port: used by the CLI, the end-to-end tests and the load harness alike.
// A plain node:http server (listhen's shutdown helper threw from a 'finish' listener when a client's socket was
// already gone, which killed the process): timeouts from `server:`, and every connection tracked so that a
// shutdown can stop accepting, let requests in flight finish, and then close what is left.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Gateway } from "./gateway.ts";
import { loadConfig, type LoadOptions } from "./config/load.ts";
import { createNodeHandler } from "./app.ts";
import type { Logger } from "./log.ts";
import { loggerFromConfig } from "./observability/logger.ts";
import { startObservability } from "./observability/index.ts";
import { startMcp } from "./mcp/registry.ts";
import { answerClientError } from "./http/client-error.ts";
import { requestHeadProblem } from "./http/request-head.ts";
import { answerUnrouted } from "./http/unrouted.ts";
import { envelopeForPath } from "./http/path-envelope.ts";
import { cutAndSettle, drain, shutdownError } from "./shutdown.ts";
import { requestIdOf } from "./http/handle.ts";
import { isMessagesPath } from "./http/messages-path.ts";
import { isGeminiPath } from "./endpoints/gemini/route.ts";
import { GatewayError, toGeminiJSON } from "./errors.ts";
import { writeWhole } from "./http/respond.ts";
import { showToOrigin } from "./http/cors.ts";
import { startMetricsListener, type MetricsListener } from "./observability/metrics-http.ts";
import { capConnections } from "./net/connection-cap.ts";
import { lingerOnClose } from "./net/lingering-close.ts";
import { SHUTTING_DOWN } from "./readiness.ts";
import { watchConfig, type ConfigWatch } from "./config/watch.ts";
import { watchedFiles } from "./config/watched-files.ts";
import { cannotListen } from "./net/listen-error.ts";
import { describeEgress } from "./net/egress-proxy.ts";

export interface StartOptions {
  configFile: string;
  port?: number;
  host?: string;
  /** The metrics listener's port, over `metrics.port` (0: any free port). */
  metricsPort?: number;
  logger?: Logger;
  /** Reload when the config file changes. */
  watch?: boolean;
  /** Reload on SIGHUP. */
  sighup?: boolean;
  env?: Record<string, string | undefined>;
  /** Load the config from these texts instead of the files (a cluster worker joining a running gateway: core/cluster.ts). */
  load?: Pick<LoadOptions, "texts" | "startedWith" | "joined">;
}

export interface RunningGateway {
  url: string;
  port: number;
  /** Where GET /metrics is served apart from the API; undefined when there is no such listener. */
  metricsUrl?: string;
  gateway: Gateway;
  server: Server;
  /**
   * Stop accepting and close the gateway (store, pools) now. Requests in flight are cut and their connections
   * dropped; each still writes its ledger record (an error, a stream's a stream_error) before the store closes (waited
   * for up to 5 s).
   */
  close(): Promise<void>;
  /**
   * Graceful stop (SIGTERM/SIGINT): stop accepting, let requests and streams in flight finish for up to `graceMs`
   * (default `server.shutdown_grace_ms`), end the rest with the protocol's error event, then close the gateway.
   */
  shutdown(opts?: { graceMs?: number }): Promise<void>;
}

export class PortInUseError extends Error {
  constructor(readonly port: number, readonly host: string, readonly what: "api" | "metrics" = "api") {
    super(`${what === "metrics" ? "metrics port" : "port"} ${port} on ${host} is in use`);
    this.name = "PortInUseError";
  }
}

export async function startGateway(opts: StartOptions): Promise<RunningGateway> {
  const notices: string[] = [];
  const config = await loadConfig(opts.configFile, { ...opts.load, env: opts.env, onNotice: (m) => (opts.logger ? opts.logger.info(m) : notices.push(m)) });
  const ownLog = opts.logger ? undefined : loggerFromConfig(config); // `log:` of gateway.yaml; closed (flushed) last
  const log = opts.logger ?? ownLog!;
  for (const m of notices) log.info(m);
  // Which proxy outbound calls use, masked, and what skips it: the first thing to check when upstreams are unreachable.
  if (config.server.egressProxy) log.info("egress proxy in use", describeEgress(config.server.egressProxy));
  const gateway = await Gateway.create(config, { logger: log, env: opts.env });
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
    // A missing Host and too many header lines are answered in the envelope by onRequest (core/http/request-head.ts).
    requireHostHeader: false,
  }, onRequest);
  server.maxHeadersCount = 0; // every line kept (maxHeaderSize bounds them), so a count over ours is refused, not cut
  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (draining) return refuse(gateway, req, res, log);
    responses.add(res);
    res.once("close", () => {
      responses.delete(res);
      // A keep-alive connection whose response just ended goes now rather than at its keep-alive timeout.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    const problem = requestHeadProblem(req);
    if (problem) {
      const envelope = envelopeForPath((req.url ?? "/").split("?")[0], problem);
      return answerUnrouted(gateway, req, res, problem, envelope.body, envelope.anthropic);
    }
    (handler as (req: IncomingMessage, res: ServerResponse) => void)(req, res);
  }
  // `Expect: 100-continue`: the 100 goes out when the body is read (after auth), not on arrival, so a client
  // without a valid key gets its 401 before sending the body at all. Until then the connection cannot be reused
  // (the body may or may not follow the answer), so it closes after the answer unless the body was asked for.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader("connection", "close");
    onRequest(req, res);
  });
  // Any other expectation: Node's own 417 has an empty body; the spec's envelope, and the connection closes (the body
  // the client holds back may or may not follow). A head that is refused anyway (no Host, two Hosts) gets that 400
  // first: the expectation is only read on a well-formed request.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    if (requestHeadProblem(req)) return onRequest(req, res);
    const err = new GatewayError(417, "INVALID_REQUEST", `Expect: ${String(req.headers.expect).slice(0, 100)} is not supported (only 100-continue is)`);
    writeWhole(res, err.status, { "content-type": "application/json", connection: "close", "x-request-id": requestIdOf(req) }, JSON.stringify(err.toJSON()));
  });
  /** Responses in progress: when a shutdown starts, those not yet started are sent with `connection: close`. */
  const responses = new Set<ServerResponse>();
  let draining = false;
  server.on("clientError", (err, socket) => answerClientError(err, socket as Socket));
  capConnections(server, s.maxConnections, log, gateway.metrics.connectionsDropped);
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    lingerOnClose(socket);
    gateway.metrics.connections.inc();
    socket.once("close", () => {
      sockets.delete(socket);
      gateway.metrics.connections.dec();
    });
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
    // A host that does not resolve or is not this machine's, a privileged port: one line, not a stack trace.
    throw cannotListen(err, host, wanted) ?? err;
  }
  // Errors after listen (EMFILE on accept, ...) are logged; they must never be an unhandled 'error' event.
  server.on("error", (err) => log.error("server error", { error: String(err) }));
  const port = (server.address() as { port: number }).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  let metrics: MetricsListener | undefined;
  try {
    metrics = await listenForMetrics(gateway, log, opts.metricsPort);
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await gateway.close();
    await ownLog?.close();
    throw err;
  }

  const onHup = () => void gateway.reload(undefined, "sighup");
  let watcher: ConfigWatch | undefined;
  if (opts.watch) {
    watcher = watchConfig({
      // The live config's files, and the includes the file on disk names (a refused reload's new include too).
      files: () => watchedFiles(gateway.config),
      // Measured from what was loaded, not the disk now: an edit made while the gateway started is reloaded.
      served: gateway.config.texts,
      onChange: () => gateway.reload(gateway.config.file, "file"),
      log,
    });
  }
  if (opts.sighup) process.on("SIGHUP", onHup);

  const stopWatching = () => {
    watcher?.close();
    process.off("SIGHUP", onHup);
  };
  let shuttingDown: Promise<void> | undefined;

  return {
    url,
    port,
    metricsUrl: metrics?.url,
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
            gateway.draining = true;
            for (const res of responses) if (!res.headersSent) res.setHeader("connection", "close");
          },
          closeGateway: () => gateway.close(),
          // Scrapes go on while requests drain, and after, until one more has read what the drain counted.
          metrics: metrics && { scrapes: gateway.metrics.scrapes, close: () => metrics!.close() },
        }, o.graceMs ?? gateway.config.server.shutdownGraceMs);
        await ownLog?.close();
      })());
    },
    async close() {
      stopWatching();
      await metrics?.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const settled = cutAndSettle(gateway.inflight, shutdownError());
      for (const socket of sockets) socket.destroy();
      await closed;
      if (!(await settled)) log.warn("closing with requests still unfinished", { inFlight: gateway.inflight.size });
      await gateway.close();
      await ownLog?.close();
    },
  };
}

/**
 * The metrics listener of `metrics:`. A port set in the config (or given) that is in use stops the start, as the
 * API port does; the default port in use (a second gateway on the machine) only skips the listener, with a warning.
 */
async function listenForMetrics(gateway: Gateway, log: Logger, portOverride: number | undefined): Promise<MetricsListener | undefined> {
  const m = gateway.config.metrics;
  if (!m.listener) return undefined;
  const port = portOverride ?? m.port;
  try {
    return await startMetricsListener(gateway, log, m.host, port);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw cannotListen(err, m.host, port, "metrics") ?? err;
    if (portOverride !== undefined || m.portConfigured) throw new PortInUseError(port, m.host, "metrics");
    log.warn(`metrics port ${port} on ${m.host} is in use: GET /metrics is not served (set metrics.port)`);
    return undefined;
  }
}

/** A request that arrives on an open keep-alive connection during a shutdown: 503 with the envelope, then close. */
function refuse(gateway: Gateway, req: IncomingMessage, res: ServerResponse, log: Logger): void {
  const path = (req.url ?? "/").split("?")[0]!;
  if (path === "/readyz") {
    res.writeHead(503, { "content-type": "application/json", "retry-after": "1", connection: "close", "content-length": String(Buffer.byteLength(SHUTTING_DOWN)) });
    return void res.end(SHUTTING_DOWN);
  }
  const err = shutdownError();
  // A page calling from an allowed origin reads the 503 and its Retry-After, as any other answer of the API.
  const cors = gateway.config.server.cors;
  if (cors !== undefined) showToOrigin(cors, req, res, path);
  // Every Messages path, also one no route takes (messages/batches): the Anthropic SDK reads only its own envelope.
  const anthropic = isMessagesPath(path);
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
