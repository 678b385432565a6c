import { describe, expect, it } from "vitest";
import type { Target } from "../../core/contracts/provider.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { translators } from "./index.ts";
import { CLIENT_NAMES } from "./client-names.ts";
import { ANTHROPIC_TOOL_NAMES, CONVERSE_TOOL_NAMES, GEMINI_TOOL_NAMES, OPENAI_TOOL_NAMES, clientToolNames, upstreamToolNames } from "./tool-names.ts";

const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });

describe("upstreamToolNames", () => {
  it("a request whose names all pass is the same body, nothing to map back", () => {
    const body = { tools: [fn("get_weather")], messages: [] };
    expect(upstreamToolNames(body, OPENAI_TOOL_NAMES)).toEqual({ body });
    expect(upstreamToolNames(body, OPENAI_TOOL_NAMES).body).toBe(body);
  });

  it("a.b and a real a_b stay two tools; the same name is changed the same way each turn; the client's body is untouched", () => {
    const body = { tools: [fn("github.search_issues"), fn("github_search_issues")], messages: [{ role: "user", content: "hi" }] };
    const a = upstreamToolNames(body, ANTHROPIC_TOOL_NAMES);
    const names = (a.body as any).tools.map((t: any) => t.function.name);
    expect(names[1]).toBe("github_search_issues");
    expect(names[0]).toMatch(/^github_search_issues_[0-9a-f]{8}$/);
    expect(upstreamToolNames(body, ANTHROPIC_TOOL_NAMES).names).toEqual(a.names);
    expect(body.tools[0]!.function.name).toBe("github.search_issues");
    expect([...a.names!]).toEqual([[names[0], "github.search_issues"]]);
  });

  it("a changed name never takes another tool's real name", () => {
    const first = (upstreamToolNames({ tools: [fn("a.b")] }, OPENAI_TOOL_NAMES).body as any).tools[0].function.name;
    const both = upstreamToolNames({ tools: [fn("a.b"), fn(first)] }, OPENAI_TOOL_NAMES).body as any;
    expect(both.tools[1].function.name).toBe(first);
    expect(both.tools[0].function.name).not.toBe(first);
    expect(both.tools[0].function.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it("each upstream's rule: length, characters, Gemini's first character", () => {
    const long = "t".repeat(100);
    expect(upstreamToolNames({ tools: [fn(long)] }, ANTHROPIC_TOOL_NAMES).names).toBeUndefined();
    for (const rule of [OPENAI_TOOL_NAMES, CONVERSE_TOOL_NAMES, GEMINI_TOOL_NAMES]) {
      const sent = (upstreamToolNames({ tools: [fn(long)] }, rule).body as any).tools[0].function.name;
      expect(sent.length).toBe(64);
    }
    expect(upstreamToolNames({ tools: [fn("github.search_issues")] }, GEMINI_TOOL_NAMES).names).toBeUndefined();
    const digit = (upstreamToolNames({ tools: [fn("3d.render")] }, GEMINI_TOOL_NAMES).body as any).tools[0].function.name;
    expect(digit).toMatch(/^_3d\.render_[0-9a-f]{8}$/);
  });

  it("every place chat names a tool, legacy functions too, and the body's client-name mark is kept", () => {
    const body: any = {
      functions: [{ name: "a.b" }], function_call: { name: "a.b" },
      tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [fn("a.b")] } },
      messages: [{ role: "assistant", content: null, function_call: { name: "a.b", arguments: "{}" }, tool_calls: [{ id: "c", type: "function", function: { name: "a.b", arguments: "{}" } }] }, { role: "function", name: "a.b", content: "ok" }],
    };
    Object.defineProperty(body, CLIENT_NAMES, { value: "mark", enumerable: false });
    const out: any = upstreamToolNames(body, OPENAI_TOOL_NAMES).body;
    expect(out[CLIENT_NAMES]).toBe("mark");
    expect(JSON.stringify(out)).not.toContain("a.b");
    const answer = { choices: [{ message: { function_call: { name: out.functions[0].name }, tool_calls: [{ function: { name: out.functions[0].name } }] } }] };
    expect(clientToolNames(answer, upstreamToolNames(body, OPENAI_TOOL_NAMES).names)).toEqual({ choices: [{ message: { function_call: { name: "a.b" }, tool_calls: [{ function: { name: "a.b" } }] } }] });
  });
});

// Every translated pair: the client's name the upstream refuses goes out changed (tools, tool_choice, the history's
// call), valid for that upstream and apart from a real tool named like it; the upstream's call of it comes back under
// the client's name, JSON and stream.
type Client = "chat" | "messages" | "gemini" | "responses";
type Upstream = "chat" | "messages" | "gemini" | "converse";

const targets: Record<Upstream, Target> = {
  chat: { modelId: "openai/gpt-4o", provider: "openai", upstreamModel: "gpt-4o", pricing: {} } as Target,
  messages: { modelId: "anthropic/claude-sonnet-4.5", provider: "anthropic", upstreamModel: "claude-sonnet-4-5", pricing: {} } as Target,
  gemini: { modelId: "google/gemini-2.5-flash", provider: "gemini", upstreamModel: "gemini-2.5-flash", pricing: {} } as Target,
  converse: { modelId: "amazon/nova-pro", provider: "bedrock", upstreamModel: "us.amazon.nova-pro-v1:0", pricing: {} } as Target,
};
const patterns: Record<Upstream, RegExp> = {
  chat: /^[a-zA-Z0-9_-]{1,64}$/, messages: /^[a-zA-Z0-9_-]{1,128}$/, converse: /^[a-zA-Z0-9_-]{1,64}$/, gemini: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/,
};
/** A name the client's own API takes and the upstream refuses. */
const refusedBy = (u: Upstream) => (u === "gemini" ? "mcp/github search" : "github.search_issues");
const REAL = "github_search_issues";
const params = { type: "object", properties: {} };

function clientRequest(c: Client, name: string, stream: boolean): any {
  const model = "m";
  if (c === "chat") {
    return { model, stream, tools: [fn(name), fn(REAL)], tool_choice: { type: "function", function: { name } },
      messages: [{ role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name, arguments: "{}" } }] }, { role: "tool", tool_call_id: "call_1", content: "ok" }] };
  }
  if (c === "messages") {
    return { model, stream, max_tokens: 100, tools: [{ name, input_schema: params }, { name: REAL, input_schema: params }], tool_choice: { type: "tool", name },
      messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name, input: {} }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }] }] };
  }
  if (c === "gemini") {
    return { model, stream, tools: [{ functionDeclarations: [{ name, parameters: params }, { name: REAL, parameters: params }] }], toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [name] } },
      contents: [{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [{ functionCall: { name, args: {} } }] }, { role: "user", parts: [{ functionResponse: { name, response: { r: "ok" } } }] }] };
  }
  return { model, stream, tools: [{ type: "function", name, parameters: params }, { type: "function", name: REAL, parameters: params }], tool_choice: { type: "function", name },
    input: [{ role: "user", content: "q" }, { type: "function_call", call_id: "call_1", name, arguments: "{}" }, { type: "function_call_output", call_id: "call_1", output: "ok" }] };
}

/** The names the upstream body gives its tools, its tool_choice and the history's calls. */
function sentNames(u: Upstream, b: any): { tools: string[]; choice?: string; history: string[] } {
  const parts = (list: any[], key: string) => list.flatMap((m: any) => (Array.isArray(m.content ?? m.parts) ? m.content ?? m.parts : []).map((p: any) => p?.[key]?.name ?? (p?.type === key ? p.name : undefined)).filter(Boolean));
  if (u === "chat") return { tools: b.tools.map((t: any) => t.function.name), choice: b.tool_choice?.function?.name, history: b.messages.flatMap((m: any) => m.tool_calls ?? []).map((tc: any) => tc.function.name) };
  if (u === "messages") return { tools: b.tools.map((t: any) => t.name), choice: b.tool_choice?.name, history: parts(b.messages, "tool_use") };
  if (u === "gemini") return { tools: b.tools.flatMap((t: any) => t.functionDeclarations ?? []).map((d: any) => d.name), choice: b.toolConfig?.functionCallingConfig?.allowedFunctionNames?.[0], history: [...parts(b.contents, "functionCall"), ...parts(b.contents, "functionResponse")] };
  return { tools: b.toolConfig.tools.map((t: any) => t.toolSpec?.name).filter(Boolean), choice: b.toolConfig.toolChoice?.tool?.name, history: parts(b.messages, "toolUse") };
}

function upstreamJson(u: Upstream, name: string): unknown {
  if (u === "chat") return { id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name, arguments: "{}" } }] }, finish_reason: "tool_calls" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
  if (u === "messages") return { id: "msg_1", type: "message", role: "assistant", model: "m", content: [{ type: "tool_use", id: "toolu_9", name, input: {} }], stop_reason: "tool_use", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
  if (u === "gemini") return { candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall: { name, args: {} } }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 }, modelVersion: "m" };
  return { output: { message: { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_9", name, input: {} } }] } }, stopReason: "tool_use", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, metrics: { latencyMs: 1 } };
}

function upstreamEvents(u: Upstream, name: string): SseEvent[] {
  const data = (x: unknown, event?: string): SseEvent => ({ ...(event ? { event } : {}), data: JSON.stringify(x) });
  if (u === "chat") {
    const chunk = (delta: unknown, finish: string | null) => data({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
    return [chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_9", type: "function", function: { name, arguments: "" } }] }, null), chunk({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }, null), chunk({}, "tool_calls"), { data: "[DONE]" }];
  }
  if (u === "messages") {
    const ev = (type: string, x: Record<string, unknown>) => data({ type, ...x }, type);
    return [ev("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
      ev("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_9", name, input: {} } }), ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: "{}" } }),
      ev("content_block_stop", { index: 0 }), ev("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 1 } }), ev("message_stop", {})];
  }
  if (u === "gemini") return [data(upstreamJson(u, name))];
  return [data({ role: "assistant" }, "messageStart"), data({ contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_9", name } } }, "contentBlockStart"),
    data({ contentBlockIndex: 0, delta: { toolUse: { input: "{}" } } }, "contentBlockDelta"), data({ contentBlockIndex: 0 }, "contentBlockStop"),
    data({ stopReason: "tool_use" }, "messageStop"), data({ usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, metrics: { latencyMs: 1 } }, "metadata")];
}

/** The names of the calls in the client's answer (JSON, or the stream's events). */
function calledNames(c: Client, answers: any[]): string[] {
  return answers.flatMap((a) => {
    if (c === "chat") return (a.choices?.[0]?.message ?? a.choices?.[0]?.delta)?.tool_calls?.map((tc: any) => tc.function?.name).filter(Boolean) ?? [];
    if (c === "messages") return (a.content ?? (a.content_block ? [a.content_block] : [])).filter((b: any) => b.type === "tool_use").map((b: any) => b.name);
    if (c === "gemini") return (a.candidates?.[0]?.content?.parts ?? []).filter((p: any) => p.functionCall).map((p: any) => p.functionCall.name);
    if (a.type === "response.output_item.added") return a.item.type === "function_call" ? [a.item.name] : [];
    return (a.output ?? []).filter((o: any) => o.type === "function_call").map((o: any) => o.name);
  });
}

const opts = (u: Upstream) => ({ cacheMarkers: false, cacheAuto: false, driverProtocol: u === "chat" ? "openai" : u === "messages" ? "anthropic" : u === "gemini" ? "gemini" : "bedrock", provider: targets[u].provider });
const call = { reportUsage: () => {}, inputEstimate: 1, signal: new AbortController().signal } as any;
async function* from(events: SseEvent[]) { yield* events; }

const pairs: [Client, Upstream][] = [
  ["chat", "messages"], ["chat", "gemini"], ["chat", "converse"],
  ["messages", "chat"], ["messages", "gemini"], ["messages", "converse"],
  ["gemini", "chat"], ["gemini", "messages"], ["gemini", "converse"],
  ["responses", "chat"], ["responses", "messages"], ["responses", "gemini"], ["responses", "converse"],
];

describe.each(pairs)("a %s client on a %s upstream", (c, u) => {
  const name = refusedBy(u);
  const t = translators[c][u]!;

  it("sends a name the upstream takes, the same in tools, tool_choice and the replayed call, apart from the real one", () => {
    const sent = sentNames(u, t.request(clientRequest(c, name, false), targets[u], opts(u)).body);
    const safe = sent.tools[0]!;
    expect(sent.tools).toEqual([safe, REAL]);
    expect(safe).toMatch(patterns[u]);
    expect(sent.choice).toBe(safe);
    expect(sent.history.length).toBeGreaterThan(0);
    expect(new Set(sent.history)).toEqual(new Set([safe]));
  });

  it("gives the call back under the client's name, JSON and stream", async () => {
    const json = t.request(clientRequest(c, name, false), targets[u], opts(u));
    const safe = sentNames(u, json.body).tools[0]!;
    expect(safe).not.toBe(name);
    expect(calledNames(c, [t.response(upstreamJson(u, safe), json.state, call)])).toEqual([name]);
    expect(calledNames(c, [t.response(upstreamJson(u, REAL), json.state, call)])).toEqual([REAL]);

    const streamed = t.request(clientRequest(c, name, true), targets[u], opts(u));
    const out: any[] = [];
    for await (const e of t.stream(from(upstreamEvents(u, safe)), streamed.state, call)) if (e.data && e.data !== "[DONE]") out.push(JSON.parse(e.data));
    expect(calledNames(c, out)).toEqual([name]);
  });
});
