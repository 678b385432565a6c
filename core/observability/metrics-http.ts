// GET /metrics: the Prometheus text, behind `metrics.token` when one is set. It has a listener of its own
// (`metrics.host:port`, loopback by default), apart from the API port every client reaches; the API port serves it
// only when `metrics.api_port` is set, which the config allows only with a token.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import type { Gateway } from "../gateway.ts";
import type { Logger } from "../log.ts";
import { GatewayError } from "../errors.ts";
import { clusterScrape } from "./cluster-scrape.ts";
import { requestHeadProblem } from "../http/request-head.ts";
import { answerClientError } from "../http/client-error.ts";

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/** Compared as digests, so neither the token's length nor its bytes show in the timing. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : "";
  return timingSafeEqual(sha256(given), sha256(token));
}

function sendError(res: ServerResponse, err: GatewayError): void {
  const body = JSON.stringify(err.toJSON());
  res.writeHead(err.status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...err.headers });
  res.end(body);
}

export async function serveMetrics(gateway: Gateway, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { token } = gateway.config.metrics;
  if (token && !bearerMatches(req.headers.authorization, token)) {
    return sendError(res, new GatewayError(401, "UNAUTHORIZED", "GET /metrics needs Authorization: Bearer <metrics.token>", {
      headers: { "www-authenticate": 'Bearer realm="metrics"' },
    }));
  }
  const { registry } = gateway.metrics;
  // HEAD (an uptime probe) reads no counts: it is not a scrape, so it neither gathers the cluster's metrics nor ends a
  // shutdown's wait for one more scrape (core/shutdown.ts), on one process or with --workers N alike.
  if (req.method === "HEAD") {
    res.writeHead(200, { "content-type": registry.contentType });
    return void res.end();
  }
  // In progress until its connection is done with it: a shutdown's last wait (core/shutdown.ts) closes no scrape mid-answer.
  res.once("close", gateway.metrics.scrapes.answering());
  // A worker of `start --workers N` answers for the whole cluster, whichever worker the scrape reached; its own counts
  // are read as its part of that sum (core/cluster.ts), which is where the scrape is noted, once.
  const { requests } = gateway.metrics;
  const read = clusterScrape ? undefined : gateway.metrics.scrapes.reading(() => requests.added);
  const text = await (clusterScrape ? clusterScrape() : registry.metrics());
  res.writeHead(200, { "content-type": registry.contentType });
  // Sent whole: a shutdown waiting for one more scrape (core/shutdown.ts) may close the listener now.
  if (read) res.once("finish", read);
  res.end(text);
}

export interface MetricsListener {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** A scraper needs a connection or two; this keeps the listener from holding many file descriptors. */
const MAX_CONNECTIONS = 32;
/**
 * A scraper sends its request as soon as it connects, so a connection that has not within this long is dropped;
 * Node checks these deadlines every CHECK_MS (30 s by default, which let silent sockets hold the port that long).
 */
const HEADERS_TIMEOUT_MS = 3000;
const CHECK_MS = 1000;

/**
 * At most `max` connections, the oldest one without a request in progress closed to make room for a new one (a
 * silent socket, a keep-alive idle one): connections that send nothing cannot lock a scraper out. A new connection
 * is refused only when every held one is answering a request. Returns the held sockets.
 */
function capEvictingIdle(server: Server, max: number): Set<Socket> {
  const sockets = new Set<Socket>(); // in the order they came: the oldest first
  const busy = new Map<Socket, number>();
  const answering = (req: IncomingMessage, res: ServerResponse) => {
    const s = req.socket;
    busy.set(s, (busy.get(s) ?? 0) + 1);
    res.once("close", () => {
      const n = (busy.get(s) ?? 1) - 1;
      if (n > 0) busy.set(s, n);
      else busy.delete(s);
    });
  };
  server.on("request", answering);
  server.on("checkContinue", answering); // a scrape with Expect: 100-continue comes there, not to "request"
  server.on("connection", (socket: Socket) => {
    if (sockets.size >= max) {
      let idle: Socket | undefined;
      for (const s of sockets) if (!busy.has(s)) { idle = s; break; }
      if (!idle) return void socket.destroy();
      sockets.delete(idle);
      idle.destroy();
    }
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      busy.delete(socket);
    });
  });
  return sockets;
}

/** Listen on host:port for /metrics alone. Rejects with the listen error (EADDRINUSE, ...); the caller decides. */
export async function startMetricsListener(gateway: Gateway, log: Logger, host: string, port: number): Promise<MetricsListener> {
  // A missing Host and too many header lines are answered below in this port's JSON envelope, as the API port does
  // (core/http/request-head.ts), not with Node's bare 400 or by silently dropping the lines past its 2000th.
  const options = {
    headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: 10_000, keepAliveTimeout: 5000, connectionsCheckingInterval: CHECK_MS, maxHeaderSize: 16_384,
    requireHostHeader: false,
  };
  const server = createServer(options, onRequest);
  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const problem = requestHeadProblem(req);
    if (problem) return sendError(res, problem);
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/metrics" && (req.method === "GET" || req.method === "HEAD")) {
      serveMetrics(gateway, req, res).catch((err) => {
        log.error("metrics scrape failed", { error: String(err) });
        if (!res.headersSent) sendError(res, new GatewayError(500, "INTERNAL", "Collecting the metrics failed"));
        else res.destroy();
      });
      return;
    }
    sendError(res, new GatewayError(404, "NOT_FOUND", `No route for ${req.method} ${path} (this port serves GET /metrics)`));
  }
  server.maxHeadersCount = 0; // every line kept (maxHeaderSize bounds them), so a count over ours is refused, not cut
  // `Expect: 100-continue`: Node's own handling sent the 100 before any check, inviting the body of a request then
  // refused (two Hosts, none). No route here reads a body, so none is asked for: the answer comes straight away, as on
  // the API port (core/server.ts), and the connection closes after it (the body may or may not follow).
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader("connection", "close");
    onRequest(req, res);
  });
  // An Expect other than 100-continue: a malformed head's 400 first, else the 417 in the envelope (Node's has no body).
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    const problem = requestHeadProblem(req) ??
      new GatewayError(417, "INVALID_REQUEST", `Expect: ${String(req.headers.expect).slice(0, 100)} is not supported (only 100-continue is)`, {
        headers: { connection: "close" },
      });
    sendError(res, problem);
  });
  // What the parser refuses (a head over maxHeaderSize, a malformed one) gets an answer, not a closed connection; a
  // connection that sent nothing in time is just dropped (HEADERS_TIMEOUT_MS).
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") socket.destroy();
    else answerClientError(err, socket);
  });
  const sockets = capEvictingIdle(server, MAX_CONNECTIONS);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => log.error("metrics listener error", { error: String(err) }));
  const bound = (server.address() as { port: number }).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/metrics`,
    server,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}
