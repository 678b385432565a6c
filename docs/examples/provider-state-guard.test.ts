// The docs' provider-state-guard example, loaded as a deployment loads it, on every route that can carry such a field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolve } from "node:path";
import { readFileSync } from "node:fs";
import { defaultPipeline } from "../../plugins/index.ts";
import { startTestGateway, type TestGateway } from "model-gateway/testing";
import { providerStateField } from "./provider-state-guard.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ plugins: { "provider-state-guard": { module: resolve("docs/examples/provider-state-guard.ts") } } });
});
afterAll(() => gw?.close());

const FILES_API = "https://generativelanguage.googleapis.com/v1beta/files/other-tenants-file";

describe("provider-state-guard refuses ids of state kept at the provider, naming the field", () => {
  it("Gemini routes: cachedContent, a Files API fileUri and a gs:// fileUri", async () => {
    const gemini = (body: unknown) => fetch(`${gw.url}/api/v1beta/models/${encodeURIComponent(gw.model)}:generateContent`, {
      method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": gw.key }, body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() as any }));
    const text = { role: "user", parts: [{ text: "summarise" }] };
    const cached = await gemini({ cachedContent: "cachedContents/other-tenants-cache", contents: [text] });
    expect(cached.status).toBe(400);
    expect(cached.body.error.message).toContain("cachedContent names state kept at the provider");
    for (const fileUri of [FILES_API, "gs://operator-private-bucket/payroll.pdf"]) {
      const r = await gemini({ contents: [{ role: "user", parts: [{ fileData: { mimeType: "application/pdf", fileUri } }, { text: "summarise" }] }] });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain("contents[0].parts[0].fileData.fileUri names state kept at the provider");
    }
    expect((await gemini({ contents: [text] })).status).toBe(200);
  });

  it("chat, Responses and Messages: Gemini URIs where a URL goes, OpenAI and Anthropic file ids, conversations, stored prompts", async () => {
    const chat = await gw.post("/chat/completions", { model: gw.model, messages: [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "image_url", image_url: { url: FILES_API } }] }] });
    expect(chat.status).toBe(400);
    expect(chat.body.error).toMatchObject({ code: "INVALID_REQUEST", param: "messages[0].content[1].image_url.url", details: { reason: "provider_state" } });
    const file = await gw.post("/responses", { model: gw.model, input: [{ role: "user", content: [{ type: "input_file", file_id: "file-abc" }] }] });
    expect(file.body.error?.param).toBe("input[0].content[0].file_id");
    expect((await gw.post("/responses", { model: gw.model, input: "hi", conversation: "conv_123" })).body.error?.param).toBe("conversation");
    expect((await gw.post("/responses", { model: gw.model, input: "hi", prompt: { id: "pmpt_1" } })).body.error?.param).toBe("prompt.id");
    const messages = await gw.post("/messages", { model: gw.model, max_tokens: 16, messages: [{ role: "user", content: [{ type: "document", source: { type: "file", file_id: "file_011" } }] }] });
    expect(messages.status).toBe(400);
    expect(messages.body.error.message).toContain("messages[0].content[0].source.file_id");
    // An ordinary image URL and an ordinary request pass.
    expect((await gw.post("/chat/completions", { model: gw.model, messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
  });

  it("the walk takes no stack: a body nested far past the gateway's own bound is read without overflowing", () => {
    let deep: unknown = { file_id: "file-x" };
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    expect(providerStateField({ input: deep })).toMatch(/^input(\.a)+\.file_id$/);
    expect(providerStateField({ messages: [{ content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }] })).toBeUndefined();
  });
});

describe("the example's load snippet", () => {
  it("keeps the whole default pipeline, with the guard right after auth (a pipeline: replaces the default one whole)", () => {
    const header = readFileSync(resolve("docs/examples/provider-state-guard.ts"), "utf8");
    // The comment's lines from "pipeline: [" to "]", joined.
    const text = header.split("\n").map((l) => l.replace(/^\/\/\s*/, "")).join(" ");
    const listed = /pipeline: \[([^\]]*)\]/.exec(text)?.[1];
    const names = listed?.split(",").map((n) => n.trim());
    expect(names).toEqual(["auth", "provider-state-guard", ...defaultPipeline().filter((n) => n !== "auth")]);
  });
});

