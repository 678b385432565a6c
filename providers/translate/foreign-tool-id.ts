// Anthropic's tool_use ids and Bedrock Converse's toolUseIds take only [A-Za-z0-9_-] (protocols.md §3.4); other hosts
// issue ids such as `functions.get_weather:0` or `call_x.1:weird`, which those APIs refuse (400) when a chat history
// sends them back. Such an id is rewritten the same way wherever it stands, so a call and its result still pair; a
// hash of the original keeps two ids that differ only in refused characters apart. Converse also takes at most 64
// characters (AWS API reference, ToolUseBlock.toolUseId): a longer id is rewritten as well, and a rewritten id keeps
// within that, its start cut before the hash (which still tells two long ids apart).
import { createHash } from "node:crypto";

const REFUSED = /[^A-Za-z0-9_-]/g;
/** The longest toolUseId Converse takes; Anthropic states no limit, so the same bound serves both. */
const MAX_TOOL_ID = 64;
const HASH = 8;

/**
 * `id` as Anthropic and Converse take it: itself when it has only allowed characters and at most 64 of them (the
 * common case); a longer one is cut before its hash too, refused characters or not.
 */
export function safeToolId(id: unknown): unknown {
  if (typeof id !== "string" || (id.length <= MAX_TOOL_ID && !/[^A-Za-z0-9_-]/.test(id))) return id;
  const hash = createHash("sha256").update(id).digest("hex").slice(0, HASH);
  return `${id.replace(REFUSED, "_").slice(0, MAX_TOOL_ID - HASH - 1)}_${hash}`;
}
