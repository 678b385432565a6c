// Simulated chat completions in the OpenAI wire shape: JSON, or a stream paced by time-to-first-token and
// tokens/second, with honest usage.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { SimOptions } from "../../core/generated/types/gateway.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { planChoice, type Plan } from "./plan.ts";
import { countTokens, promptTokens } from "./tokens.ts";
import { simToolForms, withCustomCalls, type SimCall } from "./tool-forms.ts";
import { functionCallAnswer, functionCallStream, wantsFunctionCall } from "../translate/chat-tool-forms-answer.ts";
import { markStop } from "../translate/upstream-stop.ts";
import { DROPPED_PARAMS_HEADER } from "../../core/contracts/provider.ts";
import { ignoredFields } from "./ignored-fields.ts";

function completionTokens(plan: Plan): number {
  let n = plan.pieces.length;
  for (const tc of plan.toolCalls) n += countTokens(tc.name) + countTokens(tc.arguments);
  return n;
}

function usageOf(prompt: number, completion: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

export async function simChat(body: any, target: Target, call: CallOptions, opts: SimOptions): Promise<ProviderResult> {
  const n = body.n ?? 1;
  // The model decides on the plain tool forms (legacy functions as tools, allowed_tools as the tools it keeps) and
  // calls custom tools as OpenAI does (tool-forms.ts); a legacy client gets its answer back as function_call, as from
  // OpenAI (chat-tool-forms-answer.ts).
  const { plain, custom } = simToolForms(body);
  const plans = Array.from({ length: n }, (_, i) => withCustomCalls(planChoice(plain, target.upstreamModel, i), custom));
  const legacy = wantsFunctionCall(body);
  const prompt = promptTokens(body);
  const completion = plans.reduce((s, p) => s + completionTokens(p), 0);
  const id = `chatcmpl-sim${randomUUID().replace(/-/g, "").slice(0, 24)}`;
  const created = Math.floor(Date.now() / 1000);
  const model = target.upstreamModel;
  const ttft = opts.ttft_ms ?? 0;
  const tps = opts.tokens_per_second;
  const ignored = ignoredFields(body);
  const headers = ignored.length ? { headers: { [DROPPED_PARAMS_HEADER]: ignored.join(",") } } : {};
  // Chat's finish_reason says "stop" for a stop sequence too: which one matched rides along for a Messages client.
  const stopOf = (p: Plan) => (p.stopSequence === undefined ? undefined : { reason: "stop_sequence" as const, sequence: p.stopSequence });

  if (body.stream !== true) {
    const longest = Math.max(...plans.map(completionTokens));
    await pause(ttft + (tps ? (longest / tps) * 1000 : 0), call.signal);
    // No reportFirstToken: only a stream has a time to first token (the console tells streamed requests by it).
    call.reportUsage({ inputTokens: prompt, outputTokens: completion });
    const json = {
      id,
      object: "chat.completion",
      created,
      model,
      choices: plans.map((p, index) => ({
        index,
        message: {
          role: "assistant",
          content: p.toolCalls.length ? null : p.pieces.join(""),
          refusal: null,
          ...(p.toolCalls.length
            ? { tool_calls: p.toolCalls.map((tc: SimCall) => (tc.custom ? { id: tc.id, type: "custom", custom: { name: tc.name, input: tc.arguments } } : { id: tc.id, type: "function", function: { name: tc.name, arguments: tc.arguments } })) }
            : {}),
        },
        logprobs: null,
        finish_reason: p.finishReason,
      })),
      usage: usageOf(prompt, completion),
      system_fingerprint: "fp_sim",
    };
    // One choice only (a Messages client's): its stop sequence is the answer's.
    if (plans.length === 1) markStop(json, stopOf(plans[0]!));
    return { kind: "json", ...headers, body: legacy ? functionCallAnswer(json) : json };
  }

  const includeUsage = body.stream_options?.include_usage === true;
  const chunkTokens = opts.chunk_tokens ?? 1;
  async function* events(): AsyncGenerator<SseEvent> {
    const chunk = (choices: unknown[], extra?: Record<string, unknown>): SseEvent => ({
      data: JSON.stringify({ id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_sim", choices, ...(includeUsage ? { usage: null } : {}), ...extra }),
    });
    await pause(ttft, call.signal);
    call.reportFirstToken();
    for (let index = 0; index < plans.length; index++) {
      const p = plans[index]!;
      const hasTools = p.toolCalls.length > 0;
      yield chunk([{ index, delta: { role: "assistant", content: hasTools ? null : "", refusal: null }, logprobs: null, finish_reason: null }]);
      for (let i = 0; i < p.pieces.length; i += chunkTokens) {
        await pace(chunkTokens, tps, call.signal);
        yield chunk([{ index, delta: { content: p.pieces.slice(i, i + chunkTokens).join("") }, logprobs: null, finish_reason: null }]);
      }
      for (let t = 0; t < p.toolCalls.length; t++) {
        const tc: SimCall = p.toolCalls[t]!;
        const start = tc.custom ? { type: "custom", custom: { name: tc.name, input: "" } } : { type: "function", function: { name: tc.name, arguments: "" } };
        yield chunk([{ index, delta: { tool_calls: [{ index: t, id: tc.id, ...start }] }, logprobs: null, finish_reason: null }]);
        // Arguments (a custom tool's input) arrive as fragments, like the real API: a few characters at a time.
        for (let i = 0; i < tc.arguments.length; i += 8) {
          await pace(1, tps, call.signal);
          const piece = tc.arguments.slice(i, i + 8);
          yield chunk([{ index, delta: { tool_calls: [{ index: t, ...(tc.custom ? { custom: { input: piece } } : { function: { arguments: piece } }) }] }, logprobs: null, finish_reason: null }]);
        }
      }
      yield markStop(chunk([{ index, delta: {}, logprobs: null, finish_reason: p.finishReason }]), stopOf(p));
    }
    call.reportUsage({ inputTokens: prompt, outputTokens: completion });
    if (includeUsage) yield chunk([], { usage: usageOf(prompt, completion) });
    yield { data: "[DONE]" };
  }
  return { kind: "stream", ...headers, events: legacy ? functionCallStream(events()) : events() };
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms > 0) await sleep(ms, undefined, { signal });
  else if (signal.aborted) throw signal.reason;
}

function pace(tokens: number, tps: number | undefined, signal: AbortSignal): Promise<void> {
  return tps ? pause((tokens / tps) * 1000, signal) : signal.aborted ? Promise.reject(signal.reason) : Promise.resolve();
}
