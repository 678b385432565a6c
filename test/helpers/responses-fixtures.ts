// What several Responses API end-to-end files share: the weather function tool and reading a stream's events.
import type OpenAI from "openai";

/** A non-strict function tool every fake upstream knows how to call. */
export const weatherTools: OpenAI.Responses.FunctionTool[] = [{
  type: "function", name: "get_weather", description: "Weather in a city", strict: false,
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];

/** Drains a `responses.stream(...)`: event types and sequence numbers in arrival order, the text deltas, finalResponse(). */
export async function readResponseStream(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent> & { finalResponse(): Promise<OpenAI.Responses.Response> }) {
  const types: string[] = [];
  const seqs: number[] = [];
  let deltas = "";
  for await (const e of stream) {
    types.push(e.type);
    seqs.push(e.sequence_number);
    if (e.type === "response.output_text.delta") deltas += e.delta;
  }
  return { types, seqs, deltas, final: await stream.finalResponse() };
}

/** A function_call_output for each function call of `r`: "result of <name>". */
export const functionCallOutputs = (r: OpenAI.Responses.Response): OpenAI.Responses.ResponseInputItem[] =>
  r.output.filter((o) => o.type === "function_call").map((c) => ({ type: "function_call_output", call_id: c.call_id, output: `result of ${c.name}` }));
