// Real coding agents' own requests (recorded by `npm run test:agents` from Claude Code, Codex, opencode, Qwen Code and
// Gemini CLI runs: test/fixtures/agents/) replayed through the gateway as it ships (SQLite store, full default
// pipeline, a live key with budget and rate limits) on every upstream protocol the agent can reach, against fakes
// that play the same scripted model and refuse what the real APIs refuse. Each replay checks what the agent needs
// back from its first request — a 200, the model it asked for named, a call of its own write tool with that tool's
// arguments, signed reasoning in the form it replays, complete stream framing that ends, usage — and then sends the
// agent's second request, built from that actual answer the way the agent builds it, which must be answered too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRecordings } from "./helpers/agent-fixtures.ts";
import { MODEL, startAgentWorld, type AgentWorld, type Upstream } from "./helpers/agent-world.ts";
import { nextRequest, offeredTools, replay, retarget, type ReplayAnswer } from "./helpers/agent-replay.ts";
import { SHIPPED_KEY, within } from "./helpers/shipped-config.ts";
import { agentScript, conversationText, FINAL_ANSWER } from "./upstreams/scripted-agent.ts";
import { askedEffort, reasoningFor } from "./upstreams/openai-reasoning.ts";
import { thinkingOn } from "./upstreams/anthropic-checks.ts";
import type { AgentProtocol } from "./agents/agents.ts";

/** The upstream protocols a client protocol reaches: a native-Responses model only differs for Responses clients. */
const TARGETS: Record<AgentProtocol, Upstream[]> = {
  messages: ["anthropic", "openai-chat", "gemini"],
  chat: ["anthropic", "openai-chat", "gemini"],
  gemini: ["anthropic", "openai-chat", "gemini"],
  responses: ["anthropic", "openai-chat", "gemini", "openai-responses"],
};

let world: AgentWorld;
beforeAll(async () => {
  world = await startAgentWorld();
});
afterAll(async () => {
  await world?.close();
});

/** Did the upstream's answer to the requests since `from` carry signed reasoning the agent must hand back? */
function upstreamSigned(protocol: AgentProtocol, u: Upstream, from: number, answer: ReplayAnswer): boolean {
  const sent = world.upstreamRequests(u).slice(from).map((r) => r.body);
  if (u === "anthropic") return sent.some(thinkingOn);
  if (u === "gemini") return answer.calls.length > 0; // the fake signs a turn's first call, as Gemini 3 does
  if (u === "openai-responses") return sent.some((b) => (b?.include ?? []).includes("reasoning.encrypted_content"));
  // Groq's reasoning is plain text; a Messages client gets it in a thinking block signed with what its replay needs.
  return protocol === "messages" && sent.some((b) => askedEffort(b) !== undefined);
}

/** The turn-2 request the upstream got hands back turn 1's reasoning the way that upstream wants it (Claude Code). */
function replaysReasoning(u: Upstream, body: any): boolean {
  if (u === "anthropic") return body.messages.findLast((m: any) => m.role === "assistant")?.content?.[0]?.type === "thinking";
  if (u === "gemini") return typeof body.contents.findLast((c: any) => c.role === "model")?.parts.find((p: any) => p.functionCall)?.thoughtSignature === "string";
  const turn = body.messages.findLast((m: any) => m.role === "assistant" && m.tool_calls?.length);
  return turn?.reasoning === reasoningFor(askedEffort(body) ?? "");
}

/** Thinking/reasoning asked for, in the agent's protocol. */
function asksReasoning(protocol: AgentProtocol, body: any): boolean {
  if (protocol === "messages") return body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
  if (protocol === "chat") return (body.reasoning_effort ?? body.reasoning?.effort ?? "none") !== "none";
  if (protocol === "responses") return (body.reasoning?.effort ?? "none") !== "none";
  const tc = body.generationConfig?.thinkingConfig;
  return !!tc && tc.thinkingBudget !== 0;
}

/** Thinking on in what the gateway sent the upstream. */
function upstreamThinks(u: Upstream, body: any): boolean {
  if (u === "anthropic") return thinkingOn(body);
  if (u === "gemini") return !!body?.generationConfig?.thinkingConfig && body.generationConfig.thinkingConfig.thinkingBudget !== 0;
  if (u === "openai-chat") return (body?.reasoning_effort ?? "none") !== "none";
  return (body?.reasoning?.effort ?? "none") !== "none";
}

const recordings = loadRecordings();

describe("recordings exist for every agent", () => {
  it("test/fixtures/agents holds a two-turn recording per agent", () => {
    const agents = new Set(recordings.filter((r) => r.turns.length >= 2).map((r) => r.agent));
    expect([...agents].sort()).toEqual(["claude-code", "codex", "gemini-cli", "opencode", "opencode-responses", "qwen-code"]);
  });
});

for (const rec of recordings) {
  const [first, second] = rec.turns;
  if (!first || !second) continue;
  describe(`${rec.agent} ${first.version} (${first.protocol}), recorded on ${rec.upstream}`, () => {
    for (const target of TARGETS[first.protocol]) {
      const model = MODEL[target];
      /** The model names each turn's answer gave, checked on their own below. */
      const named: string[][] = [];
      it(`replayed on ${model} (${target}): tool call, reasoning, framing, usage; turn 2 from the actual answer`, async () => {
        const since = world.upstreamRequests(target).length;
        const a = await within(replay(world.gw.url, first, model, SHIPPED_KEY), 20_000, "turn 1");
        expect(a.status, a.raw.slice(0, 500)).toBe(200);
        expect(a.streamed).toBe(first.body.stream === true || first.path.includes("streamGenerateContent"));
        expect(a.complete, "stream framing complete and ended").toBe(true);
        expect(a.usage ?? true, "usage reported").toBe(true);
        // The write tool the agent defined, called with that tool's own argument names and values.
        const body = retarget(first, model).body;
        const expected = agentScript({ tools: offeredTools(first.protocol, body), text: conversationText(body.messages ?? body.input ?? body.contents), answered: false });
        expect(expected && "call" in expected, "the recording offers a write tool").toBe(true);
        if (!expected || !("call" in expected)) return;
        expect(a.calls.map((c) => ({ name: c.name, args: c.args }))).toEqual([{ name: expected.call.name, args: expected.call.input }]);
        // The agent's reasoning setting reaches every thinking model.
        if (asksReasoning(first.protocol, first.body)) {
          expect(world.upstreamRequests(target).slice(since).some((r) => upstreamThinks(target, r.body)), "thinking on upstream").toBe(true);
        }
        const signed = upstreamSigned(first.protocol, target, since, a);
        if (signed) expect(a.signedReasoning, "signed reasoning handed to the agent").toBe(true);
        // Claude Code gets the model's reasoning as thinking blocks, whatever the upstream.
        if (first.protocol === "messages" && asksReasoning(first.protocol, first.body)) {
          expect(a.history.content.some((x: any) => x.type === "thinking" && x.signature), "a signed thinking block in the answer").toBe(true);
        }
        named.push(a.models);

        const from = world.upstreamRequests(target).length;
        const b = await within(replay(world.gw.url, second, model, SHIPPED_KEY, nextRequest(first, second, a, model)), 20_000, "turn 2");
        expect(b.status, b.raw.slice(0, 500)).toBe(200);
        expect(b.complete, "turn 2 stream framing complete and ended").toBe(true);
        expect(b.calls).toEqual([]);
        expect(b.text).toBe(FINAL_ANSWER);
        named.push(b.models);
        // ...and turn 2 hands that reasoning back to the upstream that made it.
        if (first.protocol === "messages" && signed) {
          expect(world.upstreamRequests(target).slice(from).some((r) => replaysReasoning(target, r.body)), "turn 1's reasoning replayed upstream").toBe(true);
        }
      });

      // Every answer names the gateway model id the agent asked for, never the upstream's own id: Claude Code, for one,
      // drops the signed thinking of an answer that names another model, and Anthropic then refuses its next turn.
      it(`replayed on ${model} (${target}): every answer names ${model}`, () => {
        expect(named.length, "the replay above answered").toBeGreaterThan(0);
        for (const models of named) expect(models).toEqual([model]);
      });
    }
  });
}
