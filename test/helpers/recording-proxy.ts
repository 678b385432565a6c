// A loopback reverse proxy that records every request a client sends (method, path, headers, JSON body) on its way to
// the gateway and relays the answer unchanged, streams included: how the coding-agent run captures each agent's
// requests as they reached the gateway. A client that goes away aborts the forwarded request; a gateway that cannot
// be reached is a 502.
import { request } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { listenLoopback, readRequest } from "../upstreams/http-fake.ts";

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The gateway's answer status. */
  status?: number;
  /** The start of the gateway's answer when it is an error (status ≥ 400): what a failing agent was told. */
  error?: string;
}

export interface RecordingProxy {
  /** The proxy's origin (http://127.0.0.1:port): what the client is pointed at instead of the gateway's. */
  origin: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/** Hop-by-hop headers are the proxy's own business. */
const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer"]);

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const to = new URL(target);
  const requests: ProxiedRequest[] = [];
  const server = await listenLoopback((req, res) => {
    void readRequest(req).then((rec) => {
      const entry: ProxiedRequest = { method: rec.method, path: rec.path, headers: rec.headers, body: rec.body };
      requests.push(entry);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP.has(k) && k !== "host" && k !== "content-length"));
      const out = request({ host: to.hostname, port: to.port, method: rec.method, path: rec.path, headers: { ...headers, "content-length": String(rec.raw.length) } }, (up) => {
        entry.status = up.statusCode;
        if ((up.statusCode ?? 0) >= 400) {
          entry.error = "";
          up.on("data", (c: Buffer) => {
            if (entry.error!.length < 2048) entry.error += c.toString("utf8");
          });
        }
        res.writeHead(up.statusCode ?? 502, Object.fromEntries(Object.entries(up.headers).filter(([k]) => !HOP.has(k))));
        up.pipe(res);
        up.on("error", () => res.destroy());
      });
      out.setTimeout(300_000, () => out.destroy(new Error("gateway did not answer in 300 s")));
      out.on("error", (err) => {
        if (res.headersSent) return void res.destroy();
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "PROXY_ERROR", message: String(err) } }));
      });
      res.on("close", () => {
        if (!res.writableFinished) out.destroy();
      });
      out.end(rec.raw);
    }, () => res.destroy());
  });
  return { origin: server.origin, requests, close: () => server.close() };
}
