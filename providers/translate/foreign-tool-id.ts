// Anthropic's tool_use ids and Bedrock Converse's toolUseIds take only [A-Za-z0-9_-] (protocols.md §3.4); other hosts
// issue ids such as `functions.get_weather:0` or `call_x.1:weird`, which those APIs refuse (400) when a chat history
// sends them back. Such an id is rewritten the same way wherever it stands, so a call and its result still pair; a
// hash of the original keeps two ids that differ only in refused characters apart.
import { createHash } from "node:crypto";

const REFUSED = /[^A-Za-z0-9_-]/g;

/** `id` as Anthropic and Converse take it: itself when it has only allowed characters (the common case). */
export function safeToolId(id: unknown): unknown {
  if (typeof id !== "string" || !/[^A-Za-z0-9_-]/.test(id)) return id;
  return `${id.replace(REFUSED, "_")}_${createHash("sha256").update(id).digest("hex").slice(0, 8)}`;
}
