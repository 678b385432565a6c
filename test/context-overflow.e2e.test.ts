// A prompt longer than the model's window, refused by the upstream in its own words, reaches each client in the words
// its agent recovers on (core/context-overflow.ts): a chat or Responses client gets OpenAI's
// `code: "context_length_exceeded"` (Codex compacts on it, and openai SDK users test err.code for it), a Messages
// client Anthropic's "prompt is too long: N tokens > M maximum" (Claude Code compacts on it), a Gemini client Google's
// INVALID_ARGUMENT as before. Before, every chat and Responses client got code INVALID_REQUEST, and a Messages client
// on an OpenAI or Gemini model the provider's own wording, which neither agent recognises. Still one upstream call,
// never retried, the request's 400. On the shipped gateway.yaml, against fakes answering each provider's real
// overflow (JSON, a stream refused with a status, a stream that fails before its first event).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const OPENAI_CHAT = { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" };
const OPENAI_RESPONSES = { message: "Your input exceeds the context window of this model. Please adjust your input and try again.", type: "invalid_request_error", param: "input", code: "context_length_exceeded" };
const ANTHROPIC = { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 208573 tokens > 200000 maximum" } };
const GEMINI = { error: { code: 400, message: "The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" } };
/** DeepSeek's (and vLLM's, older OpenAI's) overflow of the prompt and the output asked for, the prompt itself fitting. */
const DEEPSEEK = { message: "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (60000 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.", type: "invalid_request_error", param: null, code: "invalid_request_error" };
/** vLLM's refusal of a max_tokens the window has no room for: the prompt fits. */
const VLLM_MAX_TOKENS = { message: "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context length is 4096 tokens and your request has 1000 input tokens (4000 > 4096 - 1000). None", type: "BadRequestError", param: null, code: 400 };
/** Claude Code's parse of Anthropic's refusal of input plus max_tokens (it lowers max_tokens and retries on it). */
const CLAUDE_CODE_MAX_TOKENS = /input length and `max_tokens` exceed context limit: (\d+) \+ (\d+) > (\d+)/;
/** Claude Code's own parse of an overflow's figures (its test for one: the message includes "prompt is too long"). */
const CLAUDE_CODE = /prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i;

let fake: Loopback;
let gw: TestGateway;
/** Upstream calls, by path. */
const calls: string[] = [];

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const named = (o: Record<string, unknown>) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;

beforeAll(async () => {
  fake = await listenLoopback(async (req, res) => {
    const r = await readRequest(req);
    calls.push(r.path);
    const asked = JSON.stringify(r.body);
    if (r.path === "/openai/v1/responses") {
      if (!asked.includes("[failed-event]")) return json(res, 400, { error: OPENAI_RESPONSES });
      // A stream that opens and then fails with the overflow, before any output.
      const resp = (status: string, extra = {}) => ({ id: "resp_1", object: "response", created_at: 1, status, model: "gpt-4o-mini", output: [], usage: null, error: null, ...extra });
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end(named({ type: "response.created", sequence_number: 0, response: resp("in_progress") })
        + named({ type: "response.in_progress", sequence_number: 1, response: resp("in_progress") })
        + named({ type: "response.failed", sequence_number: 2, response: resp("failed", { error: { code: "context_length_exceeded", message: OPENAI_RESPONSES.message } }) }));
    }
    if (r.path === "/openai/v1/chat/completions") {
      if (asked.includes("[no-figures]")) return json(res, 400, { error: { ...OPENAI_CHAT, message: "Please reduce the length of the messages or completion." } });
      if (asked.includes("[with-completion]")) return json(res, 400, { error: DEEPSEEK });
      if (asked.includes("[max-tokens]")) return json(res, 400, VLLM_MAX_TOKENS);
      return json(res, 400, { error: OPENAI_CHAT });
    }
    if (r.path === "/anthropic/v1/messages") return json(res, 400, ANTHROPIC);
    if (r.path.startsWith("/gemini/")) return json(res, 400, GEMINI);
    json(res, 404, { error: { message: `no ${r.path}` } });
  });
  const config = shippedConfig({ openai: `${fake.origin}/openai/v1`, anthropic: `${fake.origin}/anthropic` });
  config.providers.gemini.base_url = `${fake.origin}/gemini`;
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

beforeEach(() => {
  calls.length = 0;
});

/** The SDKs as their users make them: their default retries on (x-should-retry: false must keep them from it). */
const openai = () => new OpenAI({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api/v1` });
const anthropic = () => new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api` });

async function thrown(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("no error thrown");
}

/** Drains a stream the SDK returned, so an error it carries is thrown. */
async function drained(p: Promise<AsyncIterable<unknown>>): Promise<void> {
  for await (const _ of await p) { /* nothing */ }
}

const MODELS = [
  ["openai/gpt-4o-mini", "OpenAI"],
  ["anthropic/claude-haiku-4.5", "Anthropic"],
  ["google/gemini-2.5-flash", "Gemini"],
] as const;

describe("a chat client", () => {
  for (const [model, who] of MODELS) {
    for (const stream of [false, true]) {
      it(`sees err.code context_length_exceeded from ${who}'s overflow (${stream ? "stream" : "JSON"}), param messages, once`, async () => {
        const messages = [{ role: "user" as const, content: "a very long conversation" }];
        const err = await thrown(stream ? drained(openai().chat.completions.create({ model, messages, stream: true })) : openai().chat.completions.create({ model, messages }));
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect(err.status).toBe(400);
        expect(err.code).toBe("context_length_exceeded");
        expect(err.type).toBe("invalid_request_error");
        expect(err.param).toBe("messages");
        expect(err.error.details).toMatchObject({ gateway_code: "INVALID_REQUEST", upstream_status: 400 });
        expect(calls).toHaveLength(1);
        expect(err.headers.get("x-should-retry")).toBe("false");
        const record = await ledgerRecordOf(gw, err.headers.get("x-request-id"));
        expect(record).toMatchObject({ outcome: "error", status: 400 });
        expect(Number(record.costUsd ?? 0)).toBe(0);
      });
    }
  }

  it("sees vLLM's max_tokens refusal as the plain 400 INVALID_REQUEST it is, not an overflow to compact for", async () => {
    const err = await thrown(openai().chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "[max-tokens] short" }], max_tokens: 4000 }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain(VLLM_MAX_TOKENS.message);
    expect(calls).toHaveLength(1);
  });

  it("sees the provider's own message, kept", async () => {
    const err = await thrown(openai().chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "long" }] }));
    expect(err.message).toContain(OPENAI_CHAT.message);
  });
});

describe("a Responses client", () => {
  for (const [model, who] of MODELS) {
    for (const stream of [false, true]) {
      it(`sees err.code context_length_exceeded from ${who}'s overflow (${stream ? "stream" : "JSON"}), param input, once`, async () => {
        const input = "a very long conversation";
        const err = await thrown(stream ? drained(openai().responses.create({ model, input, stream: true })) : openai().responses.create({ model, input }));
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect(err.code).toBe("context_length_exceeded");
        expect(err.param).toBe("input");
        expect(err.error.details.gateway_code).toBe("INVALID_REQUEST");
        expect(calls).toHaveLength(1);
      });
    }
  }

  it("sees err.code context_length_exceeded when OpenAI's stream ends in response.failed with it before any output", async () => {
    const err = await thrown(drained(openai().responses.create({ model: "openai/gpt-4o-mini", input: "[failed-event] long", stream: true })));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe("context_length_exceeded");
    expect(err.message).toContain(OPENAI_RESPONSES.message);
    expect(calls).toEqual(["/openai/v1/responses"]);
  });
});

describe("a Messages client (Claude Code)", () => {
  const ask = (model: string, content: string, stream = false) => {
    const body = { model, max_tokens: 1000, messages: [{ role: "user" as const, content }] };
    return thrown(stream ? drained(anthropic().messages.create({ ...body, stream: true })) : anthropic().messages.create(body));
  };

  for (const [model, who, figures] of [
    ["openai/gpt-4o-mini", "OpenAI", ["130512", "128000"]],
    ["google/gemini-2.5-flash", "Gemini", ["1196265", "1048576"]],
  ] as const) {
    for (const stream of [false, true]) {
      it(`reads "prompt is too long" with the provider's figures from ${who}'s overflow (${stream ? "stream" : "JSON"}), once`, async () => {
        const err = await ask(model, "a very long conversation", stream);
        expect(err).toBeInstanceOf(Anthropic.BadRequestError);
        expect(err.error.error.type).toBe("invalid_request_error");
        expect(err.message.toLowerCase()).toContain("prompt is too long");
        expect(CLAUDE_CODE.exec(err.message)?.slice(1)).toEqual(figures);
        expect(err.message).toContain(who === "OpenAI" ? OPENAI_CHAT.message : GEMINI.error.message); // the provider's text follows
        expect(calls).toHaveLength(1);
      });
    }
  }

  it("reads \"prompt is too long\" without figures where the provider names none and the gateway's estimate is within the window", async () => {
    const err = await ask("openai/gpt-4o-mini", "[no-figures] " + "word ".repeat(4000));
    expect(err.message.toLowerCase()).toContain("prompt is too long"); // Claude Code compacts on the phrase
    // About 5000 tokens estimated against gpt-4o-mini's 128000: "5000 tokens > 128000" would stop Claude Code's recovery.
    expect(CLAUDE_CODE.exec(err.message)).toBeNull();
    expect(err.message).toContain("Please reduce the length of the messages or completion.");
  });

  for (const stream of [false, true]) {
    it(`reads Anthropic's input-and-max_tokens wording where the prompt fits but not with the output asked for (${stream ? "stream" : "JSON"})`, async () => {
      const err = await ask("openai/gpt-4o-mini", "[with-completion] long", stream);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(CLAUDE_CODE_MAX_TOKENS.exec(err.message)?.slice(1)).toEqual(["60000", "10000", "65536"]);
      expect(err.message.toLowerCase()).not.toContain("prompt is too long");
      expect(err.message).toContain(DEEPSEEK.message);
      expect(calls).toHaveLength(1);
    });
  }

  it("reads vLLM's max_tokens refusal in Anthropic's max_tokens wording, never \"prompt is too long\"", async () => {
    const err = await ask("openai/gpt-4o-mini", "[max-tokens] short");
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(CLAUDE_CODE_MAX_TOKENS.exec(err.message)?.slice(1)).toEqual(["1000", "4000", "4096"]);
    expect(err.message.toLowerCase()).not.toContain("prompt is too long");
    expect(err.message).toContain(VLLM_MAX_TOKENS.message);
  });

  it("on Claude reads Anthropic's own message as it came, which Claude Code's parse still matches", async () => {
    const err = await ask("anthropic/claude-haiku-4.5", "long");
    expect(err.message).toContain(ANTHROPIC.error.message);
    expect(CLAUDE_CODE.exec(err.message)?.slice(1)).toEqual(["208573", "200000"]);
  });
});

describe("a Gemini client", () => {
  it("still gets Google's 400 INVALID_ARGUMENT with the provider's message, from an OpenAI overflow too", async () => {
    const res = await fetch(`${gw.url}/api/v1beta/models/openai/gpt-4o-mini:generateContent`, {
      method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": SHIPPED_KEY },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "long" }] }] }),
    });
    const body = await res.json();
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", message: expect.stringContaining(OPENAI_CHAT.message) });
  });
});
