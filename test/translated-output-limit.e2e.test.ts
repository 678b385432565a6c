// A Messages client must send max_tokens, and Claude Code sends 32000 or 64000 whatever the model. On the shipped
// gateway (default catalog: openai/gpt-4o writes at most 16384 tokens) against a fake OpenAI that refuses a larger
// limit with the real API's 400, every such call used to fail ("max_tokens is too large: 32000"). The translated
// request now goes out at the model's maximum, named in x-mg-dropped-params; the budget reserves what is sent; a chat
// client on the same model passes through as it sent it (and gets OpenAI's own answer).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { SHIPPED_KEY, startShipped, type Shipped } from "./helpers/shipped-config.ts";

let shipped: Shipped;

beforeAll(async () => {
  shipped = await startShipped();
  shipped.openai.maxCompletionTokens = { "gpt-4o": 16384 };
});

afterAll(async () => {
  await shipped?.close();
});

describe("a translated client's output limit above the model's maximum", () => {
  it("Claude Code's max_tokens 32000 on openai/gpt-4o is answered, sent as 16384 and named", async () => {
    const client = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${shipped.gw.url}/api`, maxRetries: 0 });
    // Streamed, as Claude Code asks (the SDK wants a stream for a limit this large).
    const { data: stream, response } = await client.messages.create({ model: "openai/gpt-4o", max_tokens: 32000, stream: true, messages: [{ role: "user", content: "Hi" }] }).withResponse();
    let text = "";
    for await (const ev of stream) if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
    expect(text).toContain("Hello");
    expect(shipped.openai.requests.at(-1)!.body.max_tokens).toBe(16384);
    expect(response.headers.get("x-mg-dropped-params")?.split(",")).toContain("max_tokens");
  });

  it("a chat client's own limit on the same model goes as sent: OpenAI's refusal is its answer", async () => {
    const client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: `${shipped.gw.url}/api/v1`, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: "openai/gpt-4o", max_tokens: 32000, messages: [{ role: "user", content: "Hi" }] }).then(() => undefined, (e) => e);
    expect(shipped.openai.requests.at(-1)!.body.max_tokens).toBe(32000);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String(err.message)).toContain("max_tokens is too large");
  });
});
