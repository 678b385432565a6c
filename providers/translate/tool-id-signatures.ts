// Tool-call ids a Gemini model made carry its thought signature (chat-to-gemini/response.ts toolCallId). Only Gemini
// wants it back; a native upstream of another protocol gets the ids without it, calls and results alike so they still
// pair: OpenAI refuses chat ids over 40 characters and Responses call_ids over 64, and a real signature is hundreds.
// Each returns the same body when no id is signed (the common case), else a copy.
import { signedToolId, unsignedToolId } from "./chat-to-gemini/response.ts";

/** Chat: assistant tool_calls[].id and tool messages' tool_call_id. */
export function chatWithoutToolIdSignatures(body: any): any {
  const messages = body?.messages;
  if (!Array.isArray(messages)) return body;
  const signed = (m: any) => signedToolId(m?.tool_call_id) || (Array.isArray(m?.tool_calls) && m.tool_calls.some((c: any) => signedToolId(c?.id)));
  if (!messages.some(signed)) return body;
  return {
    ...body,
    messages: messages.map((m: any) => {
      if (!signed(m)) return m;
      const out = { ...m };
      if (typeof m.tool_call_id === "string") out.tool_call_id = unsignedToolId(m.tool_call_id);
      if (Array.isArray(m.tool_calls)) out.tool_calls = m.tool_calls.map((c: any) => (signedToolId(c?.id) ? { ...c, id: unsignedToolId(c.id) } : c));
      return out;
    }),
  };
}

/** Responses: call_id of function and custom tool calls and their outputs in `input`. */
export function responsesWithoutToolIdSignatures(body: any): any {
  const input = body?.input;
  if (!Array.isArray(input) || !input.some((it: any) => signedToolId(it?.call_id))) return body;
  return { ...body, input: input.map((it: any) => (signedToolId(it?.call_id) ? { ...it, call_id: unsignedToolId(it.call_id) } : it)) };
}

/** Messages: tool_use ids and tool_result tool_use_ids in the messages' content blocks. */
export function messagesWithoutToolIdSignatures(body: any): any {
  const messages = body?.messages;
  const signedBlock = (b: any) => (b?.type === "tool_use" && signedToolId(b.id)) || (b?.type === "tool_result" && signedToolId(b.tool_use_id));
  const signed = (m: any) => Array.isArray(m?.content) && m.content.some(signedBlock);
  if (!Array.isArray(messages) || !messages.some(signed)) return body;
  return {
    ...body,
    messages: messages.map((m: any) => !signed(m) ? m : {
      ...m,
      content: m.content.map((b: any) => !signedBlock(b) ? b : b.type === "tool_use" ? { ...b, id: unsignedToolId(b.id) } : { ...b, tool_use_id: unsignedToolId(b.tool_use_id) }),
    }),
  };
}
