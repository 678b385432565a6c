// Claude on Bedrock (InvokeModel) and on Vertex fetches no URLs: an image or document block with a `url` source is
// Bedrock's or Vertex's 400 (protocols-2 §3.3), though Anthropic's own API reads it. So for those drivers the gateway
// downloads each such URL itself, as it does for Gemini (chat-to-gemini/media-urls.ts: the client-URL guard,
// server.url_fetch's bounds, once per client request) and sends the bytes as a base64 source. A URL that cannot be
// downloaded, or serves no image or PDF, is a 400 naming the client's field before any upstream call.
import type { Translator } from "../../core/contracts/translator.ts";
import type { UrlFetchOptions } from "../../core/net/url-fetch.ts";
import { inlineUrls, type InlineFor, type PendingUrl } from "./chat-to-gemini/media-urls.ts";

/** Drivers whose Claude takes no URL sources. */
const FETCHES_NO_URLS = new Set(["bedrock", "vertex"]);

/** Whether the gateway downloads a messages body's URL sources for this driver (so what a URL serves decides its block). */
export const gatewayDownloadsClaudeUrls = (driverProtocol: string | undefined): boolean => FETCHES_NO_URLS.has(driverProtocol ?? "");

const CLAUDE: InlineFor = { upstream: "Claude on Bedrock and Vertex", types: ["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf"], what: "an image (jpeg, png, gif, webp) or a PDF" };

/** All an image block takes (a document's title, context and citations are Bedrock's and Vertex's 400 on one). */
const IMAGE_FIELDS = new Set(["type", "source", "cache_control"]);

/** Whether a field an image block loses said anything (named then, as Converse names a document's: messages-to-chat). */
const saidSomething = (k: string, v: unknown) => (k === "citations" ? (v as any)?.enabled === true : v !== undefined && v !== null && v !== "");

const urlSource = (b: any): b is { source: { type: "url"; url: string } } =>
  (b?.type === "image" || b?.type === "document") && b.source?.type === "url" && typeof b.source.url === "string";
const holdsUrl = (b: any): boolean => urlSource(b) || (b?.type === "tool_result" && Array.isArray(b.content) && b.content.some(urlSource));

/** The path of the first string `value` in the client's body (where it sent the URL), else `fallback`. */
function pathOf(client: unknown, value: string, fallback: string): string {
  const walk = (v: unknown, at: string): string | undefined => {
    if (v === value) return at;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) { const f = walk(v[i], `${at}[${i}]`); if (f) return f; }
    else if (v && typeof v === "object") for (const k of Object.keys(v)) { const f = walk((v as any)[k], at ? `${at}.${k}` : k); if (f) return f; }
    return undefined;
  };
  return walk(client, "") ?? fallback;
}

/**
 * The messages body with each block holding a URL source copied (the client's body, which a fallback may send
 * elsewhere as it is, stays untouched), and those blocks to download. What a block loses once its URL has answered
 * is named in `dropped` then (the caller reads it after the download).
 */
function pendingUrls(body: any, client: unknown, dropped: string[]): { body: any; pending: PendingUrl[] } {
  const pending: PendingUrl[] = [];
  if (!Array.isArray(body?.messages) || !body.messages.some((m: any) => Array.isArray(m?.content) && m.content.some(holdsUrl))) return { body, pending };
  const own = (b: any, at: string) => {
    const part = { ...b };
    const url = b.source.url;
    const field = pathOf(client, url, `${at}.source.url`);
    const block = field.endsWith(".source.url") ? field.slice(0, -".source.url".length) : at;
    pending.push({
      part, url, field,
      // A URL that served a PDF is a document, one that served an image an image (with only an image's fields),
      // whatever block named it.
      inline: (mimeType, data) => {
        part.type = mimeType === "application/pdf" ? "document" : "image";
        part.source = { type: "base64", media_type: mimeType, data };
        if (part.type !== "image") return;
        for (const k of Object.keys(part)) {
          if (IMAGE_FIELDS.has(k)) continue;
          if (saidSomething(k, part[k]) && !dropped.includes(`${block}.${k}`)) dropped.push(`${block}.${k}`);
          delete part[k];
        }
      },
    });
    return part;
  };
  const messages = body.messages.map((m: any, i: number) => !Array.isArray(m?.content) || !m.content.some(holdsUrl) ? m : {
    ...m,
    content: m.content.map((b: any, j: number) => {
      const at = `messages[${i}].content[${j}]`;
      if (urlSource(b)) return own(b, at);
      if (!holdsUrl(b)) return b;
      return { ...b, content: b.content.map((c: any, k: number) => (urlSource(c) ? own(c, `${at}.content[${k}]`) : c)) };
    }),
  });
  // Every own property kept (a mark under a symbol too), messages replaced.
  const copy: Record<string, unknown> = Object.defineProperties({}, Object.getOwnPropertyDescriptors(body));
  copy.messages = messages;
  return { body: copy, pending };
}

/** `inner` (any client -> messages) with the URL sources of its body downloaded before a Bedrock or Vertex call. */
export function inliningClaudeUrls<S>(inner: Translator<S>): Translator<S> {
  return {
    ...inner,
    request(body, target, opts) {
      const t = inner.request(body, target, opts);
      if (!gatewayDownloadsClaudeUrls(opts.driverProtocol)) return t;
      // A list of its own, which the downloads may add to (the caller reads it once they are done).
      const dropped = [...t.dropped];
      const p = pendingUrls(t.body, body, dropped);
      if (!p.pending.length) return t;
      const earlier = t.download;
      const download = async (policy: UrlFetchOptions, signal: AbortSignal) => {
        await earlier?.(policy, signal);
        await inlineUrls(p.pending, policy, signal, CLAUDE);
      };
      return { ...t, body: p.body, dropped, download };
    },
  };
}
