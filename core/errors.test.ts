import { describe, expect, it } from "vitest";
import { configFault, DO_NOT_RETRY, GatewayError, geminiHttpStatus, MAX_RETRY_AFTER_S, retryAfterHeader, retryAfterMsHeader, toGeminiJSON } from "./errors.ts";

describe("Gemini error rendering", () => {
  it("Google's envelope: HTTP code, RPC status, the gateway code as ErrorInfo, the field as BadRequest, Retry-After as RetryInfo", () => {
    const err = new GatewayError(429, "RATE_LIMITED", "Too many requests", { retryAfter: 2.2, details: { field: "model", limit: { rpm: 1 } } });
    expect(toGeminiJSON(err)).toEqual({ error: { code: 429, message: "Too many requests", status: "RESOURCE_EXHAUSTED", details: [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "RATE_LIMITED", domain: "model-gateway", metadata: { type: "rate_limit_error", field: "model", limit: '{"rpm":1}' } },
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "model", description: "Too many requests" }] },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" },
    ] } });
    expect(toGeminiJSON(new GatewayError(402, "BUDGET_EXCEEDED", "spent")).error).toMatchObject({ code: 402, status: "RESOURCE_EXHAUSTED", details: [{ reason: "BUDGET_EXCEEDED" }] });
    expect(toGeminiJSON(new GatewayError(502, "UPSTREAM_ERROR", "x")).error.status).toBe("UNAVAILABLE");
  });
});

describe("Gemini rendering of an error not to retry", () => {
  it("a 5xx marked x-should-retry: false is 400 FAILED_PRECONDITION (the Gemini SDKs retry on the status alone)", () => {
    const upstream401 = new GatewayError(502, "UPSTREAM_ERROR", "Provider p returned HTTP 401: bad key", { headers: DO_NOT_RETRY, details: { upstream_status: 401 } });
    expect(geminiHttpStatus(upstream401)).toBe(400);
    expect(toGeminiJSON(upstream401).error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION", details: [{ reason: "UPSTREAM_ERROR", metadata: { upstream_status: "401" } }] });
    expect(toGeminiJSON(configFault("No provider is available for m: $K is not set", { model: "m" })).error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION" });
  });

  it("a retryable 5xx and a 4xx keep their own status", () => {
    const transient = new GatewayError(502, "UPSTREAM_ERROR", "x", { retryable: true });
    expect(geminiHttpStatus(transient)).toBe(502);
    expect(toGeminiJSON(transient).error).toMatchObject({ code: 502, status: "UNAVAILABLE" });
    const bad = new GatewayError(400, "INVALID_REQUEST", "x", { headers: DO_NOT_RETRY });
    expect(toGeminiJSON(bad).error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
  });
});

describe("Retry-After", () => {
  it("an upstream's absurd or malformed value is bounded to MAX_RETRY_AFTER_S and formats as digits only", () => {
    for (const v of [251606556426, 1e297, Infinity]) {
      const e = new GatewayError(502, "UPSTREAM_ERROR", "x", { retryAfter: v });
      expect(e.retryAfter).toBe(MAX_RETRY_AFTER_S);
      expect(retryAfterHeader(e.retryAfter!)).toBe("3600");
    }
    expect(new GatewayError(502, "UPSTREAM_ERROR", "x", { retryAfter: Number.NaN }).retryAfter).toBeUndefined();
    expect(retryAfterHeader(new GatewayError(502, "UPSTREAM_ERROR", "x", { retryAfter: -5 }).retryAfter!)).toBe("0");
    expect(retryAfterHeader(1.2)).toBe("2");
    expect(retryAfterMsHeader(1.5)).toBe("1500"); // retry-after-ms: the same wait, unrounded
    expect(retryAfterMsHeader(1e297)).toBe("3600000");
  });
});

describe("an upstream's context overflow, in each client protocol's words", () => {
  const overflow = (message: string, figures: Record<string, unknown> = {}) => new GatewayError(400, "INVALID_REQUEST", message, {
    headers: DO_NOT_RETRY, details: { provider: "up", upstream_status: 400, field: "messages", reason: "context_length_exceeded", ...figures },
  });
  const CLAUDE_CODE = /prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i;
  /** Claude Code's parse of Anthropic's refusal of input plus max_tokens (VY2 in 2.0.76). */
  const CLAUDE_CODE_MAX_TOKENS = /input length and `max_tokens` exceed context limit: (\d+) \+ (\d+) > (\d+)/;

  it("is OpenAI's code context_length_exceeded to chat and Responses clients, the gateway's code in details, param their prompt's field", () => {
    const err = overflow("Provider up rejected the request (HTTP 400): Your input exceeds the context window of this model.");
    expect(err.toJSON("chat").error).toMatchObject({ code: "context_length_exceeded", type: "invalid_request_error", param: "messages", details: { gateway_code: "INVALID_REQUEST" } });
    expect(err.toJSON("responses").error).toMatchObject({ code: "context_length_exceeded", param: "input", message: err.message });
    // Any other route (embeddings: the spec's INVALID_REQUEST for an input over the context) and JSON.stringify's key:
    // the gateway's code as it was.
    expect(err.toJSON().error).toMatchObject({ code: "INVALID_REQUEST", param: "messages", details: { reason: "context_length_exceeded" } });
    expect(err.toJSON().error.details).not.toHaveProperty("gateway_code");
    expect(JSON.parse(JSON.stringify(err)).error).toMatchObject({ code: "INVALID_REQUEST" });
    expect(err.code).toBe("INVALID_REQUEST"); // what the ledger, logs and metrics record
  });

  it("starts with Anthropic's wording to a Messages client: the provider's figures, else the gateway's, then the provider's text", () => {
    const said = "Provider up rejected the request (HTTP 400): This model's maximum context length is 128000 tokens.";
    const named = overflow(said, { input_tokens: 130512, context_window: 128000 }).toAnthropicJSON({ input_tokens: 9, context_window: 9 }) as any;
    expect(named.error).toMatchObject({ type: "invalid_request_error", message: `prompt is too long: 130512 tokens > 128000 maximum. ${said}` });
    const estimated = overflow(said).toAnthropicJSON({ input_tokens: 131000, context_window: 128000 }) as any;
    expect(CLAUDE_CODE.exec(estimated.error.message)?.slice(1)).toEqual(["131000", "128000"]);
    const none = overflow(said).toAnthropicJSON() as any;
    expect(none.error.message).toBe(`prompt is too long. ${said}`);
    expect(CLAUDE_CODE.exec(none.error.message)).toBeNull(); // no figures made up from "HTTP 400"
  });

  it("never names figures where the prompt fits: no figures when the gateway's estimate is within the window", () => {
    const said = "Provider up rejected the request (HTTP 400): Please reduce the length of the messages or completion.";
    const message = (overflow(said).toAnthropicJSON({ input_tokens: 28, context_window: 128000 }) as any).error.message;
    expect(message).toBe(`prompt is too long. ${said}`); // Claude Code compacts on the phrase alone
    expect(CLAUDE_CODE.exec(message)).toBeNull(); // "28 tokens > 128000" would make its gap negative: no recovery
    expect((overflow(said, { input_tokens: 1000, context_window: 4096 }).toAnthropicJSON() as any).error.message).toBe(`prompt is too long. ${said}`);
  });

  it("is Anthropic's input-and-max_tokens wording when the prompt fits but not with the output asked for", () => {
    const said = "Provider up rejected the request (HTTP 400): This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (60000 in the messages, 10000 in the completion).";
    const message = (overflow(said, { input_tokens: 60000, completion_tokens: 10000, context_window: 65536 }).toAnthropicJSON({ input_tokens: 9, context_window: 9 }) as any).error.message;
    expect(CLAUDE_CODE_MAX_TOKENS.exec(message)?.slice(1)).toEqual(["60000", "10000", "65536"]); // Claude Code lowers max_tokens and retries
    expect(message.toLowerCase()).not.toContain("prompt is too long");
    expect(message).toContain(said);
    // The prompt alone past the window: lowering max_tokens would not help.
    const over = (overflow(said, { input_tokens: 70000, completion_tokens: 10000, context_window: 65536 }).toAnthropicJSON() as any).error.message;
    expect(CLAUDE_CODE.exec(over)?.slice(1)).toEqual(["70000", "65536"]);
  });

  it("renders vLLM's max_tokens-too-large refusal as a plain 400 to chat clients and Anthropic's max_tokens wording to Messages clients", () => {
    const said = "Provider up rejected the request (HTTP 400): 'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context length is 4096 tokens and your request has 1000 input tokens (4000 > 4096 - 1000). None";
    const err = new GatewayError(400, "INVALID_REQUEST", said, { headers: DO_NOT_RETRY, details: { reason: "max_tokens_exceed_context", input_tokens: 1000, completion_tokens: 4000, context_window: 4096 } });
    expect(err.toJSON("chat").error).toMatchObject({ code: "INVALID_REQUEST", message: said });
    expect(err.toJSON("responses").error.code).toBe("INVALID_REQUEST");
    const message = (err.toAnthropicJSON({ input_tokens: 29, context_window: 4096 }) as any).error.message;
    expect(CLAUDE_CODE_MAX_TOKENS.exec(message)?.slice(1)).toEqual(["1000", "4000", "4096"]);
    expect(message.toLowerCase()).not.toContain("prompt is too long");
  });

  it("leaves a message already in Anthropic's wording as it is", () => {
    const said = "Provider anthropic rejected the request (HTTP 400): prompt is too long: 208573 tokens > 200000 maximum";
    expect((overflow(said).toAnthropicJSON({ input_tokens: 1, context_window: 2 }) as any).error.message).toBe(said);
    const maxTokens = "Provider anthropic rejected the request (HTTP 400): input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000, decrease input length or `max_tokens` and try again";
    expect((overflow(maxTokens, { input_tokens: 190000, completion_tokens: 32000, context_window: 200000 }).toAnthropicJSON() as any).error.message).toBe(maxTokens);
  });

  it("stays Google's INVALID_ARGUMENT with the provider's message to a Gemini client", () => {
    const err = overflow("Provider up rejected the request (HTTP 400): The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).");
    expect(toGeminiJSON(err).error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", message: err.message });
  });

  it("changes nothing for any other 400", () => {
    const err = new GatewayError(400, "INVALID_REQUEST", "bad", { details: { field: "messages" } });
    expect(err.toJSON("chat").error).toEqual({ code: "INVALID_REQUEST", message: "bad", type: "invalid_request_error", details: { field: "messages" }, param: "messages" });
    expect((err.toAnthropicJSON({ input_tokens: 1, context_window: 2 }) as any).error.message).toBe("bad");
  });
});
