// GET <console.path>: the console's page, and <console.path>/assets/<hashed name>: its script and stylesheet. The page
// holds no data: it asks for an admin key and then reads everything from /admin/v1 with it (docs/console.md), so
// serving the page itself needs no key. It is locked down with a Content-Security-Policy (scripts, styles and
// connections to this origin only, no inline script, no framing) and loads nothing from any other host.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway.ts";
import { GatewayError } from "../errors.ts";
import { requestIdOf } from "../http/handle.ts";
import { acceptsGzip } from "./accept-encoding.ts";
import { consoleBundle, type ConsoleBundle } from "./bundle.ts";
import { consoleSettings, servedHere } from "./settings.ts";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** On every console response: nothing may frame it, sniff it, or learn where it was opened from. */
const COMMON = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
};

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

function page(path: string, b: ConsoleBundle): string {
  const asset = (name: string) => escapeAttr(`${path}/assets/${name}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>model-gateway console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${asset(b.style)}">
<script type="module" src="${asset(b.script)}"></script>
</head>
<body>
<noscript>The console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;
}

function sendError(res: ServerResponse, requestId: string, err: GatewayError, head: boolean): void {
  res.writeHead(err.status, {
    "content-type": "application/json", "x-request-id": requestId, "cache-control": "no-store", ...err.headers,
    ...(err.retryAfter !== undefined ? { "retry-after": String(err.retryAfter) } : {}),
  });
  res.end(head ? undefined : JSON.stringify(err.toJSON()));
}

/**
 * Answer a console request; false when `pathname` is not the console's, or the console is not offered on this
 * connection (console.enabled: false, or auto on a non-loopback address): the caller's 404 then, as for any path.
 */
export async function serveConsole(gateway: Gateway, req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
  const s = consoleSettings(gateway.config.raw);
  if (pathname !== s.path && !pathname.startsWith(`${s.path}/`)) return false;
  if (!servedHere(s, req)) return false;
  const requestId = requestIdOf(req);
  const head = req.method === "HEAD";
  if (req.method !== "GET" && !head) {
    sendError(res, requestId, new GatewayError(405, "INVALID_REQUEST", `Method ${req.method} is not allowed on the console (use GET)`, { headers: { allow: "GET, HEAD" } }), false);
    return true;
  }
  const rest = pathname.slice(s.path.length);
  if (rest !== "" && rest !== "/" && !rest.startsWith("/assets/")) {
    sendError(res, requestId, new GatewayError(404, "NOT_FOUND", `No route for ${req.method} ${pathname}`), head);
    return true;
  }
  let bundle: ConsoleBundle;
  try {
    bundle = await consoleBundle();
  } catch (err) {
    gateway.log.error("console: the bundle cannot be built or read", { error: String((err as Error).message ?? err) });
    sendError(res, requestId, new GatewayError(503, "INTERNAL", "The console is not available: its bundle could not be built (see the gateway's log; `npm run build` builds it)", { retryAfter: 30 }), head);
    return true;
  }
  if (res.destroyed) return true;
  if (rest === "" || rest === "/") {
    const body = page(s.path, bundle);
    res.writeHead(200, {
      ...COMMON,
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": CONTENT_SECURITY_POLICY,
      "cross-origin-opener-policy": "same-origin",
      // The page names the current bundle's hashed files: always fetched anew, so a new build is picked up.
      "cache-control": "no-store",
      "content-length": Buffer.byteLength(body),
      "x-request-id": requestId,
    });
    res.end(head ? undefined : body);
    return true;
  }
  const asset = bundle.assets.get(rest.slice("/assets/".length));
  if (!asset) {
    sendError(res, requestId, new GatewayError(404, "NOT_FOUND", `No console asset ${rest.slice("/assets/".length).slice(0, 100)}`), head);
    return true;
  }
  const gzip = acceptsGzip(req.headers["accept-encoding"]);
  const body = gzip ? asset.gzip : asset.body;
  res.writeHead(200, {
    ...COMMON,
    "content-type": asset.type,
    // Content-hashed names: a name never changes content, so browsers keep it for a year without asking again.
    "cache-control": "public, max-age=31536000, immutable",
    vary: "accept-encoding",
    ...(gzip ? { "content-encoding": "gzip" } : {}),
    "content-length": body.length,
    "x-request-id": requestId,
  });
  res.end(head ? undefined : body);
  return true;
}
