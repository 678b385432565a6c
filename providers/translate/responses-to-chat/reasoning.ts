// A Responses `reasoning` item's `encrypted_content`, as the gateway writes it for translated upstreams: the upstream's
// opaque reasoning state (Anthropic thinking text + signature, redacted_thinking data), which must come back unchanged
// for the upstream to continue a tool loop. Not encrypted — the upstream's own signature protects it — only encoded:
//
//   "mgr1." + base64url(JSON.stringify({ p, n?, d }))
//
// `mgr1` is the version; `p` the upstream protocol that produced it ("messages", "chat"; `n` the provider for chat);
// `d` the chat-side `reasoning_details` entries (OpenRouter's convention, see chat-to-messages/reasoning.ts), so the
// chat translators replay them as they do for chat clients; `t`, when set, the chat field (reasoning_content,
// reasoning) that carried the upstream's plain reasoning text, which a Messages thinking block holds and is replayed
// in (messages-to-chat/reasoning.ts), and which says a Responses reasoning item's summary is such a text, given back
// to its chat host where the host takes it (request.ts, replayed-reasoning-text.ts: DeepSeek's thinking mode wants it
// within a tool loop); `x`, with `t`, that text itself, for a client that keeps none (Gemini CLI drops
// thought parts: gemini-to-chat/reasoning.ts). A blob is replayed only to the protocol that made it: another upstream
// cannot verify it (and an OpenAI chat upstream would reject the unknown field). Gemini's thought signatures need no
// blob: they ride in the function call's `call_id` (chat-to-gemini/response.ts), which every client sends back.

export const ENCRYPTED_PREFIX = "mgr1.";

export interface ReasoningBlob { p: string; n?: string; d: unknown[]; t?: string; x?: string }

/** `provider` is recorded for chat upstreams only: their reasoning formats are the provider's own. */
export function encodeReasoning(protocol: string, details: unknown[], provider?: string, textField?: string, text?: string): string {
  const blob: ReasoningBlob = protocol === "chat" ? { p: protocol, n: provider, d: details } : { p: protocol, d: details };
  if (textField) blob.t = textField;
  if (textField && text) blob.x = text;
  return ENCRYPTED_PREFIX + Buffer.from(JSON.stringify(blob)).toString("base64url");
}

/** The blob in an encrypted_content, or undefined when it is not the gateway's (e.g. OpenAI's own) or is damaged. */
export function decodeReasoning(s: unknown): ReasoningBlob | undefined {
  if (typeof s !== "string" || !s.startsWith(ENCRYPTED_PREFIX)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(s.slice(ENCRYPTED_PREFIX.length), "base64url").toString("utf8"));
    return v && typeof v.p === "string" && Array.isArray(v.d) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The request asked to see encrypted_content (include), or keeps no state itself (store: false). */
export function showsEncrypted(body: any): boolean {
  const include = Array.isArray(body?.include) ? body.include : [];
  return include.includes("reasoning.encrypted_content") || body?.store === false;
}

/**
 * What the client is shown: without include (and with store on), reasoning items lose encrypted_content. The whole
 * response, with it, is kept on the object under FULL_RESPONSE (a symbol: never serialised) so the gateway's own
 * store can keep what a later previous_response_id needs to rebuild the turn.
 */
export const FULL_RESPONSE = Symbol.for("model-gateway.responses.full");

export function clientItem(item: any, show: boolean): any {
  if (show || item?.type !== "reasoning" || !("encrypted_content" in item)) return item;
  const { encrypted_content: _hidden, ...rest } = item;
  return rest;
}

export function withFull<T extends object>(shown: T, full: unknown): T {
  if (shown !== full) Object.defineProperty(shown, FULL_RESPONSE, { value: full, enumerable: false });
  return shown;
}

/** The full response behind a JSON body or a terminal stream event, when the client was shown less. */
export function fullResponseOf(x: any): unknown {
  return x?.[FULL_RESPONSE];
}

/**
 * A request for an upstream serving /responses itself (the native passthrough) without the reasoning items the gateway
 * made for a translated one: that upstream cannot verify our blob and would refuse the request (a conversation may
 * cross from Claude to OpenAI by fallback). Returns the body unchanged when there are none; else a copy and the
 * dropped fields.
 */
export function withoutGatewayReasoning(body: any): { body: any; dropped: string[] } {
  const input = body?.input;
  if (!Array.isArray(input) || !input.some(isGatewayReasoning)) return { body, dropped: [] };
  const dropped: string[] = [];
  const kept = input.filter((item: unknown, i: number) => (isGatewayReasoning(item) ? (dropped.push(`input[${i}]`), false) : true));
  return { body: { ...body, input: kept }, dropped };
}

const isGatewayReasoning = (item: any) => item?.type === "reasoning" && typeof item.encrypted_content === "string" && item.encrypted_content.startsWith(ENCRYPTED_PREFIX);
