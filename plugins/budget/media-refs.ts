// Media in a request, whose cost the body's size does not bound: media it names instead of carrying (an image or
// file by URL, a Files API id, a Gemini file URI or cached content), which the upstream fetches, and media it carries
// inline (base64 images, audio, documents), which the upstream bills by what it shows, not by its length: a 1x1 PNG
// of a hundred bytes is 2833 tokens on gpt-4o-mini, a small PDF is billed per page, audio per second. Either way the
// budget reserves input up to the context window for such a request (worst-case.ts), on every protocol the gateway
// accepts.

/** Media the upstream fetches by URL or id (or Gemini cached content). */
export const BY_REFERENCE = 1;
/** Media carried in the body: data: URLs, base64 sources, file_data, input_audio, inlineData. */
export const INLINE = 2;
const BOTH = BY_REFERENCE | INLINE;

const isData = (url: unknown): boolean => typeof url === "string" && /^data:/i.test(url);
const present = (v: unknown): boolean => typeof v === "string" && v !== "";
/** A URL field's media: fetched (http(s), any URL but data:), inline (data:), or none (absent, empty). */
const urlMedia = (url: unknown): number => (isData(url) ? INLINE : present(url) ? BY_REFERENCE : 0);
/** A chat URL part's URL: `{ url }`, or the bare string some clients send. */
const urlOf = (v: any): unknown => (typeof v === "string" ? v : v?.url);
const object = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object";

/** The media one content part or block holds (BY_REFERENCE | INLINE; 0: none). */
function mediaOf(o: any): number {
  const type = o.type;
  switch (type) {
    case "image_url": // chat
      return urlMedia(urlOf(o.image_url));
    case "file": // chat
      return (present(o.file?.file_id) ? BY_REFERENCE : 0) | (present(o.file?.file_data) ? INLINE : 0);
    case "input_audio": // chat: base64 audio, billed by its duration
      return INLINE;
    case "input_image": // Responses
      return (present(o.file_id) ? BY_REFERENCE : 0) | urlMedia(o.image_url);
    case "input_file": // Responses
      return (present(o.file_id) ? BY_REFERENCE : 0) | urlMedia(o.file_url) | (present(o.file_data) ? INLINE : 0);
    case "image": // Messages (source url | file | base64), also inside tool_result and document content
    case "document": {
      // A text or content document is text, bounded by its size; a base64 one is an image or a PDF.
      const source = o.source?.type;
      return source === "url" || source === "file" ? BY_REFERENCE : source === "base64" ? INLINE : 0;
    }
    case "container_upload": // Messages: a Files API file for code execution
      return present(o.file_id) ? BY_REFERENCE : 0;
  }
  // Other hosts' chat parts of the same form ({type: "video_url", video_url: {url}}).
  if (typeof type === "string" && type.endsWith("_url") && type in o) return urlMedia(urlOf(o[type]));
  // Gemini parts: fileData { fileUri }, inlineData { data } (a snake_case request is renamed before the policies:
  // core/endpoints/gemini/field-names.ts); inline text (text/*, JSON) is billed as its text, which its size bounds.
  const inline = object(o.inlineData) && present(o.inlineData.data) && !textual(o.inlineData.mimeType);
  return (object(o.fileData) && present(o.fileData.fileUri) ? BY_REFERENCE : 0) | (inline ? INLINE : 0);
}

/** A MIME type whose content is text: its tokens are bounded by its bytes, so the body's size bounds them. */
const textual = (mime: unknown): boolean => typeof mime === "string" && /^\s*(text\/|application\/json\s*(;|$))/i.test(mime);

/**
 * Fields holding the client's own JSON, never content parts: a Messages tool_use's (server_tool_use, mcp_tool_use)
 * `input`, a Gemini functionCall's args. A `source` or `image_url` key in a tool's arguments is not media.
 */
const clientJson = (o: Record<string, unknown>, k: string): boolean =>
  (k === "input" && typeof o.type === "string" && o.type.endsWith("tool_use")) || k === "functionCall";

/** What a walk has found so far, and whether any media is enough to stop. */
interface Found { bits: number; first: boolean }
const done = (f: Found) => (f.first ? f.bits !== 0 : f.bits === BOTH);

/**
 * Walks content (arrays, parts, nested tool results), showing `visit` each object until it returns true; strings are
 * not entered. True: `visit` stopped it.
 */
function walk(v: unknown, depth: number, visit: (o: any) => boolean): boolean {
  if (!object(v) || depth > 64) return false;
  if (Array.isArray(v)) {
    for (const x of v) if (walk(x, depth + 1, visit)) return true;
    return false;
  }
  if (visit(v)) return true;
  for (const k in v) if (!clientJson(v, k) && walk(v[k], depth + 1, visit)) return true;
  return false;
}

/**
 * Whether `visit` returns true for a part of the conversation (chat/messages `messages`, Messages `system`,
 * Responses `input`, Gemini `contents` and `systemInstruction`), never of tool schemas; stops at the first.
 */
export function someConversationPart(body: any, visit: (part: any) => boolean): boolean {
  if (!object(body)) return false;
  for (const k of ["messages", "system", "input", "contents", "systemInstruction"]) if (walk(body[k], 0, visit)) return true;
  return false;
}

/**
 * The media a request holds: BY_REFERENCE and INLINE bits, in its conversation (someConversationPart).
 * One walk, which stops at the first media when `first` (all a reservation needs to know), else once both are found.
 */
export function mediaIn(body: any, first = false): number {
  if (!object(body)) return 0;
  const f: Found = { bits: present(body.cachedContent) ? BY_REFERENCE : 0, first };
  if (done(f)) return f.bits;
  someConversationPart(body, (o) => {
    f.bits |= mediaOf(o);
    return done(f);
  });
  return f.bits;
}

/** Does the request name media the upstream (or the gateway's downloader) fetches, or cached content? Stops at the first. */
export function namesMedia(body: any): boolean {
  if (!object(body)) return false;
  return present(body.cachedContent) || someConversationPart(body, (o) => (mediaOf(o) & BY_REFERENCE) !== 0);
}
