import { describe, expect, it } from "vitest";
import { contextOverflow, overflowDetails } from "./context-overflow.ts";

/** Each provider's overflow as it sends it: status, error object (or whole body), message. */
const cases: [string, number, Record<string, unknown>, { inputTokens?: number; completionTokens?: number; contextWindow?: number }][] = [
  ["OpenAI chat", 400, { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" }, { inputTokens: 130512, contextWindow: 128000 }],
  ["OpenAI Responses", 400, { message: "Your input exceeds the context window of this model. Please adjust your input and try again.", type: "invalid_request_error", param: "input", code: "context_length_exceeded" }, {}],
  ["Azure OpenAI", 400, { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9012 tokens. Please reduce the length of the messages.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" }, { inputTokens: 9012, contextWindow: 8192 }],
  ["Groq", 400, { message: "Please reduce the length of the messages or completion.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" }, {}],
  ["DeepSeek", 400, { message: "This model's maximum context length is 131072 tokens. However, you requested 140312 tokens (132312 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.", type: "invalid_request_error", param: null, code: "invalid_request_error" }, { inputTokens: 132312, completionTokens: 8000, contextWindow: 131072 }],
  ["vLLM", 400, { message: "This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.", type: "BadRequestError", param: null, code: 400 }, { inputTokens: 9591, completionTokens: 10000, contextWindow: 16384 }],
  ["xAI", 400, { message: "This model's maximum prompt length is 131072 but the request contains 136973 tokens." }, { inputTokens: 136973, contextWindow: 131072 }],
  ["Mistral", 400, { object: "error", message: "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length", type: "invalid_request_message_error", param: null, code: "3051" }, { inputTokens: 140000, contextWindow: 131072 }],
  ["Anthropic", 400, { type: "invalid_request_error", message: "prompt is too long: 208573 tokens > 200000 maximum" }, { inputTokens: 208573, contextWindow: 200000 }],
  ["Anthropic, input and max_tokens", 400, { type: "invalid_request_error", message: "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000, decrease input length or `max_tokens` and try again" }, { inputTokens: 190000, completionTokens: 32000, contextWindow: 200000 }],
  ["Claude on Bedrock", 400, { message: "The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum" }, { inputTokens: 200049, contextWindow: 200000 }],
  ["Gemini", 400, { code: 400, message: "The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" }, { inputTokens: 1196265, contextWindow: 1048576 }],
  ["Gemini without the count", 400, { code: 400, message: "The input token count exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" }, { contextWindow: 1048576 }],
  ["Bedrock", 400, { message: "Input is too long for requested model." }, {}],
  ["Bedrock, in a stream", 400, { message: "The model returned the following errors: Input is too long for requested model." }, {}],
  ["Bedrock Titan", 400, { message: "400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 11967 " }, { inputTokens: 11967, contextWindow: 8192 }],
];

describe("contextOverflow", () => {
  for (const [who, status, error, figures] of cases) {
    it(`recognises ${who}'s overflow and the figures it names`, () => {
      expect(contextOverflow(status, error, error.message as string)).toEqual(figures);
    });
  }

  it("says nothing of other refusals, or of a rate limit about tokens", () => {
    expect(contextOverflow(400, { message: "Invalid 'messages[0].content': string too long.", code: "string_above_max_length" }, "Invalid 'messages[0].content': string too long.")).toBeUndefined();
    expect(contextOverflow(400, { code: 400, message: "Request contains an invalid argument.", status: "INVALID_ARGUMENT" }, "Request contains an invalid argument.")).toBeUndefined();
    expect(contextOverflow(400, { message: "max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-4" }, "max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-4")).toBeUndefined();
    const tpm = "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 130512.";
    expect(contextOverflow(429, { message: tpm, code: "rate_limit_exceeded" }, tpm)).toBeUndefined();
    expect(contextOverflow(429, { message: "x", code: "context_length_exceeded" }, "x")).toBeUndefined();
  });

  it("takes vLLM's refusal of a max_tokens the window has no room for as that, not as a prompt too long", () => {
    const vllm = { message: "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context length is 4096 tokens and your request has 1000 input tokens (4000 > 4096 - 1000). None", type: "BadRequestError", param: null, code: 400 };
    expect(contextOverflow(400, vllm, vllm.message)).toBeUndefined();
    expect(overflowDetails(400, vllm, vllm.message)).toEqual({ reason: "max_tokens_exceed_context", input_tokens: 1000, completion_tokens: 4000, context_window: 4096 });
  });

  it("names the prompt's share and the completion's when the provider counts them apart", () => {
    const deepseek = "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (60000 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.";
    expect(overflowDetails(400, { message: deepseek, code: "invalid_request_error" }, deepseek)).toEqual({ reason: "context_length_exceeded", input_tokens: 60000, completion_tokens: 10000, context_window: 65536 });
    const older = "This model's maximum context length is 8192 tokens, however you requested 8500 tokens (7500 in your prompt; 1000 for the completion). Please reduce your prompt; or completion length.";
    expect(contextOverflow(400, { code: "context_length_exceeded" }, older)).toEqual({ inputTokens: 7500, completionTokens: 1000, contextWindow: 8192 });
  });
});
