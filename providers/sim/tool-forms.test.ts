// The simulator answers as an OpenAI-protocol model: a custom tool (free-form input), and a tool_choice forcing one,
// get a custom call back, as from OpenAI, JSON and streamed; the turn after it answers the tool's result.
import { describe, expect, it } from "vitest";
import { simChat } from "./chat.ts";
import type { CallOptions, Target } from "../../core/contracts/provider.ts";

const target: Target = { modelId: "openai/gpt-5", provider: "sim", upstreamModel: "openai/gpt-5", pricing: {}, sandbox: true };
const call = (): CallOptions => ({ signal: new AbortController().signal, requestId: "r", clientHeaders: {}, reportUsage() {}, reportFirstToken() {} });
const sql = { type: "custom", custom: { name: "run_sql", description: "Run a SQL query", format: { type: "text" } } };
const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
const ask = { model: "openai/gpt-5", messages: [{ role: "user", content: "count the rows of t" }], tools: [weather, sql], tool_choice: { type: "custom", custom: { name: "run_sql" } } };

async function streamed(body: any): Promise<any[]> {
  const r: any = await simChat({ ...body, stream: true }, target, call(), {});
  const out: any[] = [];
  for await (const ev of r.events) if (ev.data !== "[DONE]") out.push(JSON.parse(ev.data));
  return out;
}

describe("the simulator and custom tools", () => {
  it("JSON: a forced custom tool is called as OpenAI calls one", async () => {
    const r: any = await simChat(ask, target, call(), {});
    const c = r.body.choices[0];
    expect(c.finish_reason).toBe("tool_calls");
    expect(c.message.tool_calls).toEqual([{ id: expect.any(String), type: "custom", custom: { name: "run_sql", input: expect.any(String) } }]);
  });

  it("stream: the custom call arrives in pieces of custom.input", async () => {
    const chunks = await streamed(ask);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: "custom", custom: { name: "run_sql" } });
    const input = calls.map((tc: any) => tc.custom?.input ?? "").join("");
    const json: any = await simChat(ask, target, call(), {});
    expect(input).toBe(json.body.choices[0].message.tool_calls[0].custom.input);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
  });

  it("allowed_tools naming a custom tool keeps it", async () => {
    const r: any = await simChat({ ...ask, tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "custom", custom: { name: "run_sql" } }] } } }, target, call(), {});
    expect(r.body.choices[0].message.tool_calls[0]).toMatchObject({ type: "custom", custom: { name: "run_sql" } });
  });

  it("the turn after a custom call answers its result", async () => {
    const r: any = await simChat({
      model: "openai/gpt-5",
      tools: [sql],
      messages: [...ask.messages, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "custom", custom: { name: "run_sql", input: "select count(*) from t" } }] }, { role: "tool", tool_call_id: "call_1", content: "42" }],
    }, target, call(), {});
    expect(r.body.choices[0].finish_reason).toBe("stop");
    expect(r.body.choices[0].message.content).toContain("42");
  });
});
