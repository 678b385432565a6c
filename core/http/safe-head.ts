// A status and headers the gateway itself did not choose (a plugin's ctx.responseHeaders or response status, a
// GatewayError of a plugin's): Node's writeHead throws on a header value with characters outside latin-1 (a
// client's `user: "😀"` copied into a header), a control character, a malformed name, or a status outside
// 100-999. Thrown there, the request's cleanup was skipped and it hung, so the head is written again without
// what Node refused, and the refusal is logged. The first attempt is the plain writeHead: nothing is checked on
// the path every well-formed response takes.
import { validateHeaderName, validateHeaderValue, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { pluginsThatSetHeaders } from "../pipeline/compose.ts";

export interface DroppedHead {
  status?: number;
  headers: string[];
}

/** Who is told what was left out: the request (its id, and the gateway's log). */
export interface HeadReporter {
  requestId: string;
  gateway?: { log: { error(message: string, fields?: Record<string, unknown>): void } };
}

/**
 * writeHead(status, headers), or, when Node refuses them, a 500 for a status it refuses and no header it refuses,
 * logged at error for `by` (no closure per response: the request itself is the reporter).
 */
export function writeHeadSafely(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, by?: HeadReporter): void {
  try {
    res.writeHead(status, headers);
    return;
  } catch (err) {
    if (res.headersSent) throw err;
  }
  const dropped: DroppedHead = { headers: [] };
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    try {
      validateHeaderName(name);
      for (const v of Array.isArray(value) ? value : [value]) validateHeaderValue(name, String(v));
      kept[name] = value;
    } catch {
      dropped.headers.push(name);
    }
  }
  const valid = Number.isInteger(status) && status >= 200 && status <= 599;
  if (!valid) dropped.status = status;
  for (const name of dropped.headers) res.removeHeader(name);
  res.writeHead(valid ? status : 500, kept);
  // The third-party plugin that set a refused header is named (one per header; usually a single plugin).
  const setters = by && dropped.headers.length ? pluginsThatSetHeaders(by, dropped.headers) : {};
  const plugins = [...new Set(Object.values(setters))];
  by?.gateway?.log.error("response head refused by Node; sent without it", {
    requestId: by.requestId, headers: dropped.headers, ...(dropped.status !== undefined ? { status: dropped.status } : {}),
    ...(plugins.length === 1 ? { plugin: plugins[0] } : plugins.length ? { plugins, setBy: setters } : {}),
  });
}

/** An error's status as sent: a GatewayError made with a status that is not an error status is sent as a 500. */
export function errorStatus(status: number): number {
  return Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
}
