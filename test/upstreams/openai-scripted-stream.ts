// A scripted chat-completions stream for the fake OpenAI upstream: a test lists one turn's chunks (reasoning, text and
// tool-call fragments in whatever order a host sends them) and the fake streams them as SSE, then [DONE].
import type { FakeOpenAI, RecordedRequest } from "./openai.ts";

/** Builders for one stream's chunks: a delta (with a finish reason on the last), an argument fragment, the usage chunk. */
export function chatChunks(id: string, model: string) {
  const base = { id, object: "chat.completion.chunk", created: 1770000000, model };
  const chunk = (delta: unknown, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  const args = (a: string, index = 0) => chunk({ tool_calls: [{ index, function: { arguments: a } }] });
  const usage = { ...base, choices: [], usage: { prompt_tokens: 40, completion_tokens: 25, total_tokens: 65 } };
  return { chunk, args, usage };
}

/** Makes `fake` answer a streamed request with the chunks `chunksFor` gives; given none, the fake answers as usual. */
export function streamScripted(fake: FakeOpenAI, chunksFor: (rec: RecordedRequest) => unknown[] | undefined): void {
  fake.hook = (rec, res) => {
    const chunks = rec.body?.stream ? chunksFor(rec) : undefined;
    if (!chunks) return false;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n");
    return true;
  };
}

/**
 * Call W1 get_weather opened, then reasoning and text between its argument fragments ({"city": "Paris", "unit": "C"};
 * text "Checking now.", reasoning "Paris it is."), the finish and usage chunks. With `thinking`, the turn first reasons
 * that, and the reasoning between the fragments goes on from it.
 */
export function callSplitByTextAndReasoning(model: string, thinking?: string): unknown[] {
  const { chunk, args, usage } = chatChunks("chatcmpl-between", model);
  const open = { tool_calls: [{ index: 0, id: "call_W1", type: "function", function: { name: "get_weather", arguments: "{\"city\": " } }] };
  return [
    ...(thinking === undefined
      ? [chunk({ role: "assistant", content: null, ...open })]
      : [chunk({ role: "assistant", content: null, reasoning_content: thinking }), chunk(open)]),
    chunk({ reasoning_content: thinking === undefined ? "Paris it is." : " Paris it is." }),
    args("\"Paris\", "),
    chunk({ content: "Checking" }),
    args("\"unit\": \"C\"}"),
    chunk({ content: " now." }),
    chunk({}, "tool_calls"),
    usage,
  ];
}
