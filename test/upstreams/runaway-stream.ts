// A broken upstream whose stream does not stop: POST /v1/responses streams OpenAI Responses events, POST
// /v1/chat/completions chat chunks, each answer delta " word" (one estimated token) after `first` (the first delta's
// text), until the gateway lets go of it or `capBytes` are written (then it ends as a normal stream would: chat with
// no usage, Responses with response.completed). Each request's fate is recorded: whether its connection was closed before the stream ended.
import type { ServerResponse } from "node:http";
import { listenLoopback, readRequest } from "./http-fake.ts";

export interface RunawayCall {
  path: string;
  /** The connection closed before the fake ended the stream. */
  cut: boolean;
  /** The stream's fate is known (ended or cut). */
  settled: boolean;
}

export interface RunawayUpstream {
  baseUrl: string;
  calls: RunawayCall[];
  /** The first delta's text of the next answers (default " word"). */
  first: string;
  close(): Promise<void>;
}

export const WORD = " word";

const responsesEvent = (type: string, seq: number, fields: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...fields })}\n\n`;

function* responsesEvents(first: string): Generator<string> {
  const response = { id: `resp_runaway${Math.random().toString(36).slice(2)}`, object: "response", created_at: 1, status: "in_progress", model: "m", output: [] };
  let seq = 0;
  yield responsesEvent("response.created", seq++, { response });
  yield responsesEvent("response.in_progress", seq++, { response });
  yield responsesEvent("response.output_item.added", seq++, { output_index: 0, item: { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] } });
  yield responsesEvent("response.content_part.added", seq++, { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  for (let delta = first; ; delta = WORD) yield responsesEvent("response.output_text.delta", seq++, { item_id: "msg_1", output_index: 0, content_index: 0, delta, logprobs: [] });
}

/** The final event of a Responses stream that reached the cap: the whole text, the usage of its `words` deltas. */
const completed = (first: string, words: number) => responsesEvent("response.completed", words + 4, {
  response: {
    id: "resp_runaway", object: "response", created_at: 1, status: "completed", model: "m",
    output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: first + WORD.repeat(words - 1), annotations: [] }] }],
    usage: { input_tokens: 5, output_tokens: words, total_tokens: 5 + words },
  },
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function* chatEvents(first: string): Generator<string> {
  yield chunk({ role: "assistant", content: first });
  for (;;) yield chunk({ content: WORD });
}

/** Resolves once `res` can take more, or false when its connection is gone. */
const drained = (res: ServerResponse) => new Promise<boolean>((r) => {
  const done = (ok: boolean) => () => { res.off("drain", onDrain); res.off("close", onClose); r(ok); };
  const onDrain = done(true), onClose = done(false);
  res.once("drain", onDrain);
  res.once("close", onClose);
});

export async function startRunawayUpstream(capBytes = 4 * 1024 * 1024): Promise<RunawayUpstream> {
  const up: RunawayUpstream = { baseUrl: "", calls: [], first: WORD, close: async () => {} };
  const server = await listenLoopback(async (req, res) => {
    const { path, method } = await readRequest(req);
    if (method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }));
      return;
    }
    const call: RunawayCall = { path, cut: false, settled: false };
    up.calls.push(call);
    res.on("close", () => {
      if (!res.writableEnded) call.cut = true;
      call.settled = true;
    });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const events = path.endsWith("/responses") ? responsesEvents(up.first) : chatEvents(up.first);
    let written = 0, n = 0;
    while (written < capBytes) {
      if (res.destroyed) return;
      const ev = events.next().value!;
      written += ev.length;
      n++;
      if (!res.write(ev) && !(await drained(res))) return;
    }
    res.end(path.endsWith("/responses") ? completed(up.first, n - 4) : `${chunk({}, "stop")}data: [DONE]\n\n`);
  });
  up.baseUrl = `${server.origin}/v1`;
  up.close = server.close;
  return up;
}
