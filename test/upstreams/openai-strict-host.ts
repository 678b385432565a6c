// A strict OpenAI-compatible host the gateway does not know (Databricks, OpenCode Zen…), for the fake OpenAI upstream:
// it refuses any field outside its API, as such hosts do ("Extra inputs are not permitted"), and it takes no reasoning
// back — so an assistant message carrying reasoning, reasoning_content or reasoning_details is its 400.
import type { FakeOpenAI } from "./openai.ts";

export const REASONING_FIELDS = ["reasoning", "reasoning_content", "reasoning_details"];

/** Makes `fake` refuse a request whose assistant messages carry a reasoning field. */
export function refuseReasoningBack(fake: FakeOpenAI): void {
  fake.hook = (rec, res) => {
    const messages: any[] = rec.body?.messages ?? [];
    const i = messages.findIndex((m) => m?.role === "assistant" && REASONING_FIELDS.some((k) => k in m));
    if (i < 0) return false;
    const field = REASONING_FIELDS.find((k) => k in messages[i])!;
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `Extra inputs are not permitted: messages.${i}.${field}`, type: "invalid_request_error", param: `messages.${i}.${field}`, code: null } }));
    return true;
  };
}
