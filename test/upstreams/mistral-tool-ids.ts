// Mistral's tool-call id rule, for the fake OpenAI upstream standing in for api.mistral.ai: every id of a history
// (assistant tool_calls[].id, tool messages' tool_call_id) must be 9 letters or digits, else the whole request is its
// 400 "Tool call id was … but must be a-z, A-Z, 0-9, with a length of 9." (protocols-2.md §2.10.4).
import type { FakeOpenAI } from "./openai.ts";

export const MISTRAL_TOOL_ID = /^[a-zA-Z0-9]{9}$/;

/** The ids of a chat request's history that Mistral refuses. */
export function idsMistralRefuses(body: any): string[] {
  const ids: unknown[] = [];
  for (const m of body?.messages ?? []) {
    for (const c of m?.tool_calls ?? []) ids.push(c?.id);
    if (m?.role === "tool") ids.push(m.tool_call_id);
  }
  return ids.filter((id) => typeof id !== "string" || !MISTRAL_TOOL_ID.test(id)).map(String);
}

/** Makes `fake` refuse a request carrying a tool-call id Mistral refuses, as Mistral does; others get its defaults. */
export function enforceMistralToolIds(fake: FakeOpenAI): void {
  fake.hook = (rec, res) => {
    const [bad] = idsMistralRefuses(rec.body);
    if (bad === undefined) return false;
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "error", message: `Tool call id was ${bad} but must be a-z, A-Z, 0-9, with a length of 9.`, type: "invalid_request_message_order", param: null, code: "3230" }));
    return true;
  };
}
