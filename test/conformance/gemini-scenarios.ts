// The Gemini client's cells of the conformance matrix: each scenario as a Gemini API app (the @google/genai wire
// shapes, test/helpers/gemini-client.ts) and Gemini CLI drive it, against every upstream protocol. A tool loop keeps
// its history the way Gemini CLI does (thought parts dropped, a placeholder signature on an unsigned first call,
// `<name>__<id>` function ids), so reasoning must survive in the signatures alone.
import { expect } from "vitest";
import { validateGeminiGenerateContentResponse } from "../../core/generated/validators.js";
import { GeminiApiError, assemble, cliModelTurn, cliResults } from "../helpers/gemini-client.ts";
import type { Env, Upstream } from "./env.ts";

type Run = (env: Env, u: Upstream) => Promise<void>;

const city = { type: "OBJECT", properties: { city: { type: "STRING" } }, required: ["city"] };
/** One declaration in Gemini's own schema dialect, one in JSON Schema (parametersJsonSchema, what Gemini CLI sends). */
const tools = [{ functionDeclarations: [
  { name: "get_weather", description: "Weather in a city", parameters: city },
  { name: "get_time", description: "Local time in a city", parametersJsonSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
] }];
const weatherSchema = { type: "OBJECT", properties: { city: { type: "STRING" }, temp: { type: "NUMBER" } }, required: ["city", "temp"] };
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const user = (text: string) => ({ role: "user", parts: [{ text }] });
const ask = user("Weather and time in Paris?");
const thinking = { thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } };

async function once(env: Env, u: Upstream, body: Record<string, unknown>): Promise<any> {
  const r = await env.gemini.generate(env.model[u], body);
  expect(validateGeminiGenerateContentResponse(r)).toBe(true);
  expect(r.modelVersion).toBe(env.model[u]);
  return r;
}

/** A stream, every event checked; only the last one finishes. */
async function streamed(env: Env, u: Upstream, body: Record<string, unknown>) {
  const events = await env.gemini.stream(env.model[u], body);
  for (const e of events) expect(validateGeminiGenerateContentResponse(e)).toBe(true);
  expect(events.filter((e) => e.candidates?.[0]?.finishReason).length).toBe(1);
  expect(events.at(-1).candidates[0].finishReason).toBeTruthy();
  const a = assemble(events);
  expect(a.modelVersion).toBe(env.model[u]);
  return { events, ...a };
}

function callsOf(parts: any[], min = 1): any[] {
  const calls = parts.filter((p) => p.functionCall).map((p) => p.functionCall);
  expect(calls.length).toBeGreaterThanOrEqual(min);
  for (const c of calls) expect(typeof c.args.city).toBe("string");
  return calls;
}

function textOf(parts: any[], finishReason: string | undefined): string {
  expect(parts.some((p) => p.functionCall)).toBe(false);
  const text = parts.filter((p) => typeof p.text === "string" && !p.thought).map((p) => p.text).join("");
  expect(text.length).toBeGreaterThan(0);
  expect(finishReason).toBe("STOP");
  return text;
}
const candidate = (r: any) => ({ parts: r.candidates[0].content.parts ?? [], finishReason: r.candidates[0].finishReason });

/** Gemini CLI's tool loop: its first answer, its history of it, the results, and the final answer (streamed). */
async function cliLoop(env: Env, u: Upstream, first: { parts: any[] }, extra: Record<string, unknown> = {}) {
  callsOf(first.parts);
  const model = cliModelTurn(first.parts);
  const results = cliResults(model, (c) => (c.name === "get_time" ? { error: "clock is down" } : { output: `${c.name}: ok` }));
  const final = await streamed(env, u, { contents: [ask, model, results], tools, ...extra });
  return textOf(final.parts, final.finishReason);
}

async function apiError(p: Promise<unknown>): Promise<GeminiApiError> {
  const err = await p.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(GeminiApiError);
  return err;
}

/** Upstream failures as the Gemini SDK sees them: the gateway's status and code (ErrorInfo reason), Google's RPC status. */
function errorRun(upstreamStatus: 400 | 429 | 500): Run {
  const want = upstreamStatus === 400 ? { code: 400, status: "INVALID_ARGUMENT", reason: "INVALID_REQUEST" } : { code: 502, status: "UNAVAILABLE", reason: "UPSTREAM_ERROR" };
  return async (env, u) => {
    env.fail(u, upstreamStatus, 5);
    const err = await apiError(once(env, u, { contents: [user("Hi")] }));
    expect(err.status).toBe(want.code);
    expect(err.body.error).toMatchObject({ code: want.code, status: want.status });
    expect(err.body.error.details).toContainEqual(expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: want.reason }));
  };
}

export const GEMINI_RUNS: Record<string, Run> = {
  text: async (env, u) => {
    const r = await once(env, u, { systemInstruction: { parts: [{ text: "Be brief." }] }, contents: [user("Hi")] });
    textOf(candidate(r).parts, candidate(r).finishReason);
    const m = r.usageMetadata;
    expect(m.promptTokenCount).toBeGreaterThan(0);
    expect(m.totalTokenCount).toBe(m.promptTokenCount + (m.candidatesTokenCount ?? 0) + (m.thoughtsTokenCount ?? 0));
  },
  stream: async (env, u) => {
    const s = await streamed(env, u, { contents: [user("Hi")] });
    expect(textOf(s.parts, s.finishReason)).toBe(s.events.flatMap((e) => e.candidates[0].content.parts ?? []).map((p: any) => p.text ?? "").join(""));
    expect(s.usage.candidatesTokenCount).toBeGreaterThan(0);
  },
  "tool_choice auto": async (env, u) => void callsOf(candidate(await once(env, u, { contents: [ask], tools, toolConfig: { functionCallingConfig: { mode: "AUTO" } } })).parts),
  "tool_choice none": async (env, u) => {
    const r = await once(env, u, { contents: [ask], tools, toolConfig: { functionCallingConfig: { mode: "NONE" } } });
    textOf(candidate(r).parts, candidate(r).finishReason);
  },
  "tool_choice required": async (env, u) => void callsOf(candidate(await once(env, u, { contents: [ask], tools, toolConfig: { functionCallingConfig: { mode: "ANY" } } })).parts),
  "tool_choice named": async (env, u) => {
    const r = await once(env, u, { contents: [ask], tools, toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_time"] } } });
    expect(callsOf(candidate(r).parts).map((c) => c.name)).toEqual(["get_time"]);
  },
  "parallel tool calls (stream)": async (env, u) => {
    const s = await streamed(env, u, { contents: [ask], tools });
    expect(callsOf(s.parts, 2).map((c) => c.name)).toEqual(["get_weather", "get_time"]);
    expect(s.finishReason).toBe("STOP");
  },
  "two-step tool loop": async (env, u) => void (await cliLoop(env, u, await streamed(env, u, { contents: [ask], tools }))),
  "structured output": async (env, u) => {
    const r = await once(env, u, { contents: [user("Weather in Paris as JSON")], generationConfig: { responseMimeType: "application/json", responseSchema: weatherSchema } });
    const out = JSON.parse(textOf(candidate(r).parts, candidate(r).finishReason));
    expect(typeof out.city).toBe("string");
    expect(typeof out.temp).toBe("number");
  },
  "image input": async (env, u) => {
    const r = await once(env, u, { contents: [{ role: "user", parts: [{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: PNG } }] }] });
    textOf(candidate(r).parts, candidate(r).finishReason);
    expect(IMAGE_ON_WIRE[u](env.last(u).body)).toBe(`data:image/png;base64,${PNG}`);
  },
  // Gemini CLI's loop with thinking on: thought parts come back (includeThoughts) and are then dropped from its
  // history, so what the upstream needs back (Anthropic's signed thinking block, Gemini's thought signature) must ride
  // in a thoughtSignature the CLI keeps; the fakes refuse the next turn without it.
  "reasoning across a tool loop": async (env, u) => {
    const r = await once(env, u, { contents: [ask], tools, generationConfig: thinking });
    const parts = candidate(r).parts;
    if (u !== "openai") expect(parts[0]).toMatchObject({ thought: true, text: expect.any(String) });
    if (u === "anthropic") expect(env.last(u).body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    await cliLoop(env, u, { parts }, { generationConfig: thinking });
  },
  "reasoning across a tool loop (stream)": async (env, u) => {
    const s = await streamed(env, u, { contents: [ask], tools, generationConfig: thinking });
    if (u !== "openai") expect(s.thoughts.length).toBeGreaterThan(0);
    if (u === "gemini") expect(s.usage.thoughtsTokenCount).toBeGreaterThan(0); // Anthropic counts thinking in output_tokens only
    await cliLoop(env, u, s, { generationConfig: thinking });
  },
  "upstream 400": errorRun(400),
  "upstream 429": errorRun(429),
  "upstream 500": errorRun(500),
  "n > 1": async (env, u) => {
    const p = once(env, u, { contents: [user("Hi")], generationConfig: { candidateCount: 2 } });
    if (u !== "anthropic") {
      await p;
      const body = env.last(u).body;
      expect(u === "gemini" ? body.generationConfig.candidateCount : body.n).toBe(2);
      return;
    }
    const err = await apiError(p);
    expect(err.status).toBe(400);
    expect(err.body.error.details).toContainEqual(expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [expect.objectContaining({ field: "generationConfig.candidateCount" })] }));
  },
};

const IMAGE_ON_WIRE: Record<Upstream, (body: any) => unknown> = {
  openai: (b) => b.messages.at(-1).content.find((p: any) => p.type === "image_url")?.image_url.url,
  anthropic: (b) => {
    const img = b.messages.at(-1).content.find((p: any) => p.type === "image");
    return img && `data:${img.source.media_type};base64,${img.source.data}`;
  },
  gemini: (b) => {
    const img = b.contents.at(-1).parts.find((p: any) => p.inlineData)?.inlineData;
    return img && `data:${img.mimeType};base64,${img.data}`;
  },
};
