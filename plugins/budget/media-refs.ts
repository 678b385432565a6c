// Media a request names instead of carrying: an image or file by URL, a Files API id, a Gemini file URI or cached
// content. The upstream bills what it fetches as input tokens, so the body's size bounds nothing about it: the budget
// reserves input up to the context window for such a request (worst-case.ts), on every protocol the gateway accepts.

/** A URL the upstream fetches (an inline data: URL is in the body, so its size bounds it). */
const remote = (url: unknown): boolean => typeof url === "string" && url !== "" && !/^data:/i.test(url);
const present = (v: unknown): boolean => typeof v === "string" && v !== "";

/** One content part or block that names media held elsewhere. */
function namesMedia(o: any): boolean {
  const type = o.type;
  switch (type) {
    case "image_url": // chat
      return remote(typeof o.image_url === "string" ? o.image_url : o.image_url?.url);
    case "file": // chat
      return present(o.file?.file_id);
    case "input_image": // Responses
      return present(o.file_id) || remote(o.image_url);
    case "input_file": // Responses
      return present(o.file_id) || remote(o.file_url);
    case "image": // Messages (source url | file), also inside tool_result and document content
    case "document":
      return o.source?.type === "url" || o.source?.type === "file";
    case "container_upload": // Messages: a Files API file for code execution
      return present(o.file_id);
  }
  // Other hosts' chat parts of the same form ({type: "video_url", video_url: {url}}).
  if (typeof type === "string" && type.endsWith("_url") && type in o) return remote(typeof o[type] === "string" ? o[type] : o[type]?.url);
  // Gemini parts: fileData { fileUri } (a snake_case request is renamed before the policies: core/endpoints/gemini/field-names.ts).
  const fd = o.fileData;
  return fd !== null && typeof fd === "object" && present(fd.fileUri);
}

/** Walks content (arrays, parts, nested tool results) for a part that names media; strings are not entered. */
function walk(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== "object" || depth > 64) return false;
  if (Array.isArray(v)) {
    for (const x of v) if (walk(x, depth + 1)) return true;
    return false;
  }
  if (namesMedia(v)) return true;
  for (const k in v) if (walk((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

/**
 * Does the request name media or files the upstream fetches (by URL or id), or Gemini cached content? Only the
 * conversation is searched (chat/messages `messages`, Messages `system`, Responses `input`, Gemini `contents` and
 * `systemInstruction`), never tool schemas.
 */
export function referencesMedia(body: any): boolean {
  if (body === null || typeof body !== "object") return false;
  if (present(body.cachedContent)) return true;
  for (const k of ["messages", "system", "input", "contents", "systemInstruction"]) if (walk(body[k], 0)) return true;
  return false;
}
