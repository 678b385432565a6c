import { describe, expect, it } from "vitest";
import { reservedInputs, unboundedInput, unseenInput } from "./unbounded-input.ts";

const ask = (endpoint: string, body: unknown) => ({ endpoint, body }) as Parameters<typeof reservedInputs>[0];

describe("input the body does not bound", () => {
  it("names each reason, and the field a stored conversation is continued by", () => {
    expect(reservedInputs(ask("responses", { previous_response_id: "resp_1", input: "Hi" }))).toEqual({ kinds: ["stored_conversation"], continuedBy: "previous_response_id" });
    expect(reservedInputs(ask("responses", { conversation: { id: "conv_1" }, input: "Hi" })).continuedBy).toBe("conversation");
    expect(reservedInputs(ask("responses", { input: [{ type: "item_reference", id: "msg_1" }] })).continuedBy).toBe("item_reference");
    expect(reservedInputs(ask("responses", { prompt: { id: "pmpt_1" }, tools: [{ type: "web_search" }], input: "Hi" })).kinds).toEqual(["stored_prompt", "server_tools"]);
    expect(reservedInputs(ask("chat", { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] })).kinds).toEqual(["media_by_reference"]);
  });

  it("Responses tools the client runs (Codex's shell and patch tools, computer use) are not server tools: their results come in the next body", () => {
    for (const type of ["local_shell", "shell", "apply_patch", "computer_use_preview"]) {
      expect(reservedInputs(ask("responses", { input: "Hi", tools: [{ type }, { type: "function", name: "f" }] })).kinds, type).toEqual(["request_body"]);
    }
    expect(reservedInputs(ask("responses", { input: "Hi", tools: [{ type: "local_shell" }, { type: "code_interpreter" }] })).kinds).toEqual(["server_tools"]);
  });

  it("Claude's MCP connector is a server tool: Anthropic runs its tools and adds their results", () => {
    const servers = [{ type: "url", url: "https://example.com/mcp", name: "docs" }];
    const hi = [{ role: "user", content: "Hi" }];
    // mcp-client-2025-04-04: the servers alone; mcp-client-2025-11-20: with an mcp_toolset naming one.
    expect(reservedInputs(ask("messages", { messages: hi, mcp_servers: servers })).kinds).toEqual(["server_tools"]);
    expect(reservedInputs(ask("messages", { messages: hi, mcp_servers: servers, tools: [{ type: "mcp_toolset", mcp_server_name: "docs" }] })).kinds).toEqual(["server_tools"]);
    expect(unboundedInput(ask("messages", { messages: hi, mcp_servers: [] }))).toBe(false);
    expect(unboundedInput(ask("messages", { messages: hi, tools: [{ name: "lookup", input_schema: { type: "object" } }] }))).toBe(false);
  });

  it("inline media: billed by what it shows, not by its size (a 1x1 PNG is 2833 tokens on gpt-4o-mini)", () => {
    const pixel = { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } };
    const inline = ask("chat", { messages: [{ role: "user", content: [pixel] }] });
    expect(reservedInputs(inline).kinds).toEqual(["inline_media"]);
    expect(unboundedInput(inline)).toBe(true);
    const both = ask("chat", { messages: [{ role: "user", content: [pixel, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] });
    expect(reservedInputs(both).kinds).toEqual(["media_by_reference", "inline_media"]);
    const pdf = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } };
    expect(reservedInputs(ask("messages", { messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [pdf] }] }] })).kinds).toEqual(["inline_media"]);
    expect(reservedInputs(ask("gemini", { contents: [{ role: "user", parts: [{ inlineData: { mimeType: "audio/wav", data: "UklGRg==" } }] }] })).kinds).toEqual(["inline_media"]);
  });

  it("a request whose input is all text in its body: request_body, and not unbounded", () => {
    const text = ask("chat", { messages: [{ role: "user", content: [{ type: "text", text: "data:image/png;base64,AAAA" }] }] });
    expect(reservedInputs(text).kinds).toEqual(["request_body"]);
    expect(unboundedInput(text)).toBe(false);
    // previous_response_id means nothing outside the Responses API; media operations' input is their body.
    expect(unboundedInput(ask("chat", { previous_response_id: "x", messages: [] }))).toBe(false);
    expect(unboundedInput(ask("embeddings", { input: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }))).toBe(false);
    expect(unboundedInput(ask("images", { prompt: "a cat", image: "data:image/png;base64,AAAA" }))).toBe(false);
    expect(unboundedInput(ask("responses", { previous_response_id: "resp_1" }))).toBe(true);
  });

  it("input out of sight (may be audio): a continuation, a stored prompt, media by URL or id, cached content; not inline media or server tools", () => {
    const user = (part: unknown) => ({ messages: [{ role: "user", content: [part] }] });
    expect(unseenInput(ask("responses", { previous_response_id: "resp_1", input: "Hi" }))).toBe(true);
    expect(unseenInput(ask("responses", { prompt: { id: "pmpt_1" }, input: "Hi" }))).toBe(true);
    expect(unseenInput(ask("chat", user({ type: "image_url", image_url: { url: "https://example.com/voice.mp3" } })))).toBe(true);
    expect(unseenInput(ask("gemini", { cachedContent: "cachedContents/c1", contents: [] }))).toBe(true);
    // Inline media after a URL does not hide it, nor a URL after inline media.
    const both = [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "file", file: { file_id: "file-1" } }];
    expect(unseenInput(ask("chat", { messages: [{ role: "user", content: both }] }))).toBe(true);
    expect(unseenInput(ask("chat", user({ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } })))).toBe(false);
    expect(unseenInput(ask("responses", { input: "Hi", tools: [{ type: "web_search" }] }))).toBe(false);
    expect(unseenInput(ask("embeddings", { input: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }))).toBe(false);
  });
});
