import { describe, expect, it } from "vitest";
import { chatToResponse, echoOf } from "./response.ts";
import { decodeReasoning, fullResponseOf } from "./reasoning.ts";

const details = [{ type: "reasoning.text", text: "hmm", signature: "sig", format: "anthropic-claude-v1", index: 0 }];
const chat = {
  id: "c", created: 7, model: "claude-x",
  choices: [{ index: 0, finish_reason: "tool_calls", message: {
    role: "assistant", content: "Let me check.", reasoning_content: "hmm", reasoning_details: details,
    tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }],
  } }],
  usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
};

describe("chat completion -> response", () => {
  it("reasoning (summary + encrypted_content), message, function_call; the fields the SDKs read", () => {
    const body = { model: "anthropic/x", input: "Hi", include: ["reasoning.encrypted_content"], tools: [{ type: "function", name: "f" }], reasoning: { effort: "low" } };
    const r: any = chatToResponse(chat, echoOf(body), { flavor: "messages", provider: "claude", show: true });
    expect(r.output.map((o: any) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(r.output[0]).toMatchObject({ id: expect.stringMatching(/^rs_/), summary: [{ type: "summary_text", text: "hmm" }] });
    expect(decodeReasoning(r.output[0].encrypted_content)).toEqual({ p: "messages", d: details });
    expect(r).toMatchObject({
      object: "response", status: "completed", error: null, incomplete_details: null, created_at: 7, model: "claude-x",
      parallel_tool_calls: true, tool_choice: "auto", tools: body.tools, text: { format: { type: "text" } }, truncation: "disabled",
      reasoning: { effort: "low", summary: null }, store: true, previous_response_id: null,
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 14 },
    });
    expect(fullResponseOf(r)).toBeUndefined();
  });

  it("store: false shows encrypted_content; the default (store on, no include) hides it and keeps the full response behind", () => {
    const noStore: any = chatToResponse(chat, echoOf({ model: "m", input: "x", store: false }), { flavor: "messages", provider: "claude", show: true });
    expect(noStore.output[0].encrypted_content).toMatch(/^mgr1\./);
    const hidden: any = chatToResponse(chat, echoOf({ model: "m", input: "x" }), { flavor: "messages", provider: "claude", show: false });
    expect(hidden.output[0]).not.toHaveProperty("encrypted_content");
    expect(JSON.stringify(hidden)).not.toContain("mgr1.");
    expect((fullResponseOf(hidden) as any).output[0].encrypted_content).toMatch(/^mgr1\./);
    expect((fullResponseOf(hidden) as any).id).toBe(hidden.id);
  });

  it("reasoning text without signed state (Gemini thoughts, DeepSeek) still carries the gateway's blob, holding no state", () => {
    // So a client that keeps encrypted reasoning (Codex) sends back what the native passthrough knows to drop, not a
    // bare id OpenAI never issued.
    const plain = { ...chat, choices: [{ ...chat.choices[0], message: { role: "assistant", content: "ok", reasoning_content: "hmm" } }] };
    const r: any = chatToResponse(plain, echoOf({ model: "m", input: "x" }), { flavor: "gemini", provider: "gem", show: true });
    expect(r.output[0]).toEqual({ type: "reasoning", id: expect.any(String), summary: [{ type: "summary_text", text: "hmm" }], encrypted_content: expect.stringMatching(/^mgr1\./) });
    expect(decodeReasoning(r.output[0].encrypted_content)?.d).toEqual([]);
  });

  it("a call cut off by finish_reason length is incomplete (clients run completed calls)", () => {
    const cut = { ...chat, choices: [{ index: 0, finish_reason: "length", message: { role: "assistant", content: null, tool_calls: [
      { id: "call_a", type: "function", function: { name: "f", arguments: "{}" } },
      { id: "call_b", type: "function", function: { name: "f", arguments: "{\"city\":" } },
    ] } }] };
    const r: any = chatToResponse(cut, echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "up", show: false });
    expect(r.status).toBe("incomplete");
    expect(r.output.map((o: any) => [o.call_id, o.status])).toEqual([["call_a", "completed"], ["call_b", "incomplete"]]);
  });

  it("a chat host's reasoning text: the blob names the field it came in, which the next turn sends it back in", () => {
    for (const field of ["reasoning_content", "reasoning"]) {
      const plain = { ...chat, choices: [{ ...chat.choices[0], message: { role: "assistant", content: "ok", [field]: "hmm" } }] };
      const r: any = chatToResponse(plain, echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "ds", show: true });
      expect(decodeReasoning(r.output[0].encrypted_content)).toEqual({ p: "chat", n: "ds", d: [], t: field });
    }
  });

  it("a message cut off by finish_reason length or content_filter is incomplete, as OpenAI marks it; a whole one is completed", () => {
    const answer = (finish: string) => ({ ...chat, choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", content: "The capital is" } }] });
    const statuses = ["length", "content_filter", "stop"].map((f) => (chatToResponse(answer(f), echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "up", show: false }) as any).output.map((o: any) => [o.type, o.status]));
    expect(statuses).toEqual([[["message", "incomplete"]], [["message", "incomplete"]], [["message", "completed"]]]);
  });

  it("a refusal is the message's refusal part", () => {
    const refused = { ...chat, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: null, refusal: "No." } }] };
    const r: any = chatToResponse(refused, echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "up", show: false });
    expect(r.output).toEqual([{ type: "message", id: expect.any(String), status: "completed", role: "assistant", content: [{ type: "refusal", refusal: "No." }] }]);
  });

  it("chat logprobs are the output_text part's logprobs", () => {
    const lp = [{ token: "ok", logprob: -0.2, bytes: [111, 107], top_logprobs: [] }];
    const withLp = { ...chat, choices: [{ index: 0, finish_reason: "stop", logprobs: { content: lp }, message: { role: "assistant", content: "ok" } }] };
    const r: any = chatToResponse(withLp, echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "up", show: false });
    expect(r.output[0].content[0].logprobs).toEqual(lp);
  });
});

describe("a chat answer citing web sources -> response", () => {
  // An OpenAI search model's chat answer (or a Claude / Gemini answer as their translators make it).
  const cited = {
    id: "c", created: 7, model: "gpt-4o-search-preview",
    choices: [{ index: 0, finish_reason: "stop", message: {
      role: "assistant", content: "It is “sunny” in Paris.", refusal: null,
      annotations: [{ type: "url_citation", url_citation: { start_index: 0, end_index: 22, url: "https://meteo.fr/paris", title: "Paris — Météo" } }],
    } }],
    usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
  };

  it("the sources are the output_text's url_citation annotations, after a web_search_call item", () => {
    const r: any = chatToResponse(cited, echoOf({ model: "m", input: "weather in paris?", tools: [{ type: "web_search" }] }), { flavor: "chat", provider: "openai", show: false });
    expect(r.output.map((o: any) => o.type)).toEqual(["web_search_call", "message"]);
    expect(r.output[0]).toEqual({ type: "web_search_call", id: expect.stringMatching(/^ws_/), status: "completed", action: { type: "search" } });
    expect(r.output[1].content[0].annotations).toEqual([{ type: "url_citation", start_index: 0, end_index: 22, url: "https://meteo.fr/paris", title: "Paris — Météo" }]);
  });

  it("an answer citing nothing has no web_search_call and empty annotations", () => {
    const plain = { ...cited, choices: [{ ...cited.choices[0], message: { role: "assistant", content: "Hi", refusal: null } }] };
    const r: any = chatToResponse(plain, echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "openai", show: false });
    expect(r.output.map((o: any) => o.type)).toEqual(["message"]);
    expect(r.output[0].content[0].annotations).toEqual([]);
  });
});
