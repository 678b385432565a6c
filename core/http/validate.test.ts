import { describe, expect, it } from "vitest";
import { validateChatCompletions, validateMessages, validateVideos } from "../generated/validators.js";
import { validationError } from "./validate.ts";

/** The error for `body`, worded for `wording` (the body must be invalid). */
function refuse(body: unknown, wording?: "gateway" | "anthropic", validate: any = validateMessages) {
  expect(validate(body)).toBe(false);
  return validationError(validate, "INVALID_REQUEST", wording);
}

const hi = [{ role: "user", content: "Hi" }];

describe("validation errors", () => {
  it.each([
    [{ model: "m", messages: hi }, "max_tokens: Field required", "max_tokens"],
    [{ model: "m", max_tokens: 5, messages: [...hi, { role: "assistant" }] }, "messages.1.content: Field required", "messages[1].content"],
    [{ model: "m", max_tokens: 5, messages: [{ role: "tool", content: "x" }] }, "messages.0.role: Input should be 'user', 'assistant' or 'system'", "messages[0].role"],
    [{ model: "m", max_tokens: 5, messages: hi, temperature: 1.5 }, "temperature: Input should be less than or equal to 1", "temperature"],
    [{ model: "m", max_tokens: -1, messages: hi }, "max_tokens: Input should be greater than or equal to 0", "max_tokens"], // 0 is a cache pre-warm
    [{ model: "m", max_tokens: "5", messages: hi }, "max_tokens: Input should be a valid integer", "max_tokens"],
    [{ model: "m", max_tokens: 5, messages: [] }, "messages: List should have at least 1 item after validation", "messages"],
    [{ model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ text: "x" }] }] }, "messages.0.content.0.type: Field required", "messages[0].content[0].type"],
    [{ model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ type: "tool_use", id: "t", input: {} }] }] }, "messages.0.content.0.name: Field required", "messages[0].content[0].name"],
    [{ model: "m", max_tokens: 5, messages: [...hi, { role: "system", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }] }, "messages.1.content.0.type: Input should be 'text'", "messages[1].content[0].type"],
  ])("Messages bodies are refused in the Messages API's words (%j)", (body, message, field) => {
    const err = refuse(body, "anthropic");
    expect(err.message).toBe(message);
    // The gateway's own pointer stays, for tools that read details.
    expect(err.details?.field).toBe(field);
    expect(err.toAnthropicJSON()).toMatchObject({ type: "error", error: { type: "invalid_request_error", code: "INVALID_REQUEST", message } });
  });

  it("other endpoints keep the gateway's wording", () => {
    expect(refuse({ model: "m", messages: hi }, "gateway").message).toBe("Invalid request: max_tokens is required");
    expect(refuse({ messages: hi }, undefined, validateChatCompletions).message).toBe("Invalid request: model is required");
  });
});

describe("a malformed chat tool_choice names the field it lacks", () => {
  // Not the string branch's enum nor another object branch's type const (`tool_choice.type must be "custom"`).
  it.each([
    [{ type: "function" }, "tool_choice.function", "Invalid request: tool_choice.function is required"],
    [{ type: "custom" }, "tool_choice.custom", "Invalid request: tool_choice.custom is required"],
    [{ type: "allowed_tools" }, "tool_choice.allowed_tools", "Invalid request: tool_choice.allowed_tools is required"],
    [{ type: "bogus" }, "tool_choice.type", 'Invalid request: tool_choice.type unsupported value "bogus"'],
    [{ function: { name: "f" } }, "tool_choice.type", "Invalid request: tool_choice.type is required"],
    ["maybe", "tool_choice", 'Invalid request: tool_choice must be one of "auto", "required", "none"'],
  ])("%j", (tool_choice, field, message) => {
    const err = refuse({ model: "m", messages: hi, tool_choice }, "gateway", validateChatCompletions);
    expect(err.details?.field).toBe(field);
    expect(err.message).toBe(message);
  });
});

describe("client URL fields: each protocol's own rule", () => {
  const chat = (url: unknown) => ({ model: "m", messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url } }] }] });

  // OpenAI fetches http and https image URLs itself; where the gateway downloads one (a Gemini model), plain http is
  // fetched only from server.url_fetch.allow_hosts (core/net/url-fetch.ts), so the schema must let it through.
  it.each(["http://localhost:24444/img.png", "http://[::1]:24444/img.png", "HTTP://images.example.com/cat.png?v=1", "https://images.example.com/cat.png"])(
    "a chat image URL may be http or https: %s",
    (url) => expect(validateChatCompletions(chat(url)), url).toBe(true),
  );

  it.each(["http://", "http:///img.png", "http://u:pw@localhost/img.png", "ftp://images.example.com/a.png", "//images.example.com/a.png", "localhost/img.png"])(
    "a chat image URL without a scheme we fetch, a host, or with credentials is refused, naming the field: %s",
    (url) => {
      const err = refuse(chat(url), "gateway", validateChatCompletions);
      expect(err.message).toBe("Invalid request: messages[0].content[1].image_url.url must be an http or https URL with a host");
      expect(err.details?.field).toBe("messages[0].content[1].image_url.url");
    },
  );

  it("an Anthropic URL source stays https only (Anthropic answers 'Only HTTPS URLs are supported')", () => {
    for (const type of ["image", "document"]) {
      const err = refuse({ model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ type, source: { type: "url", url: "http://localhost:24444/img.png" } }] }] }, "gateway");
      expect(err.message).toBe("Invalid request: messages[0].content[0].source.url must be an https URL with a host");
    }
  });

  it("a video seed stays https only (the spec: HTTPS required)", () => {
    expect(validateVideos({ model: "m", prompt: "p", image_url: "http://localhost:24444/img.png" })).toBe(false);
    expect(validationError(validateVideos, "BAD_REQUEST").details?.field).toBe("image_url");
  });
});
