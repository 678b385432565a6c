// A real OTLP/HTTP trace receiver on loopback: accepts POST /v1/traces (JSON, as the gateway's exporter sends)
// and keeps every span, flattened, for tests to inspect.
import { createServer, type Server } from "node:http";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client (OTLP SpanKind). */
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage?: string;
  service?: string;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Request headers of every export. */
  exports: Array<Record<string, string | string[] | undefined>>;
  /** Every export's body as it arrived (attributes, events, status messages: all of it, for leak checks). */
  bodies: string[];
  /** While set, every export is refused with this status (a collector in trouble); the spans are not kept. */
  refuseWith?: number;
  /** Exports refused so far. */
  refused: number;
  close(): Promise<void>;
}

function value(v: any): unknown {
  if (!v || typeof v !== "object") return v;
  if ("stringValue" in v) return v.stringValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("boolValue" in v) return v.boolValue;
  if ("arrayValue" in v) return (v.arrayValue.values ?? []).map(value);
  return v;
}

const attrs = (list: any[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: OtlpReceiver["exports"] = [];
  const bodies: string[] = [];
  const receiver = { refuseWith: undefined as number | undefined, refused: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).includes("json")) {
        res.writeHead(415).end();
        return;
      }
      if (receiver.refuseWith) {
        receiver.refused++;
        res.writeHead(receiver.refuseWith, { "content-type": "application/json" }).end("{}");
        return;
      }
      exports.push(req.headers);
      const text = Buffer.concat(chunks).toString("utf8");
      bodies.push(text);
      const body = JSON.parse(text);
      for (const rs of body.resourceSpans ?? []) {
        const service = attrs(rs.resource?.attributes)["service.name"] as string | undefined;
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind,
              attributes: attrs(s.attributes), statusCode: s.status?.code ?? 0, statusMessage: s.status?.message || undefined, service,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return Object.assign(receiver, { url: `http://127.0.0.1:${port}`, spans, exports, bodies, close: () => new Promise<void>((r) => server.close(() => r())) });
}
