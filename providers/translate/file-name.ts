// The `filename` of a chat `file` part. OpenAI's chat API refuses file_data without one (400 "Missing required
// parameter: ...file.file_id"), so every file part a translation makes carries a name: the client's own (a Messages
// document's title, a Gemini part's displayName), made safe as a file name, else one from the media type.
const EXTENSION: Record<string, string> = {
  "application/pdf": "pdf", "application/json": "json", "application/xml": "xml", "application/rtf": "rtf", "application/zip": "zip",
  "application/msword": "doc", "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/vnd.ms-powerpoint": "ppt", "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
  "text/plain": "txt", "text/markdown": "md", "text/csv": "csv", "text/html": "html",
};

/** The extension of a media type: known ones as written, else its subtype when that is a plain word, else "bin". */
function extensionOf(mime: string): string {
  const m = mime.toLowerCase();
  if (EXTENSION[m]) return EXTENSION[m];
  const sub = /^[a-z]+\/(?:x-)?([a-z0-9]{1,8})$/.exec(m)?.[1];
  return sub ?? "bin";
}

/** At most `n` characters of `s`, cut by code points: a cut between a surrogate pair would leave half an emoji. */
const firstCodePoints = (s: string, n: number) => Array.from(s).slice(0, n).join("");

/** What a chat file part is named: `title` made safe (path separators and control characters out, at most 100 characters, the type's extension added when it has none), else `document.<ext>`. */
export function chatFileName(mime: string, title?: unknown): string {
  const ext = extensionOf(mime);
  const safe = typeof title === "string" ? firstCodePoints(title.replace(/[\u0000-\u001f\u007f\\/:*?"<>|]+/g, " ").replace(/\s+/g, " ").trim().replace(/^\.+/, ""), 100).trim() : "";
  if (!safe) return `document.${ext}`;
  return safe.toLowerCase().endsWith(`.${ext}`) ? safe : `${safe}.${ext}`;
}

/** The media type of a base64 `data:` URL, lower case; undefined for anything else. */
export const dataUrlType = (url: string): string | undefined => /^data:([^;,]+);base64,/i.exec(url)?.[1]?.toLowerCase();
