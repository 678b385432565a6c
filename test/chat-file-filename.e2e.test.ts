// A PDF a Messages, Gemini or Responses client attaches reaches an OpenAI chat model as a `file` part with a
// `filename`: the live API refuses file_data without one (400 "Missing required parameter: ...file.file_id"), so
// Claude Code or Gemini CLI attaching a PDF to an OpenAI model failed. A Messages document's title is its name (and
// is then no longer named dropped); without one the name comes from the type.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("chat-file-filename");
const MODEL = "openai/gpt-4o-mini";
const PDF = Buffer.from("%PDF-1.4\n%%EOF\n").toString("base64");
let openai: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  gw = await startTestGateway({
    providers: { up: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" } },
    models: { [MODEL]: { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
});

/** The file parts of the user content the upstream got, from the one call `send` made. */
async function sentFiles(send: () => Promise<{ status: number; text: string; headers: Headers }>) {
  const from = openai.requests.length;
  const r = await send();
  expect(r.status, r.text).toBe(200);
  const calls = openai.requests.slice(from);
  expect(calls).toHaveLength(1);
  const parts = calls[0]!.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
  return { files: parts.filter((p: any) => p.type === "file").map((p: any) => p.file), dropped: r.headers.get("x-mg-dropped-params") };
}

const messages = (doc: Record<string, unknown>) => () => postJson(`${gw.baseURL}/messages`, {
  model: MODEL, max_tokens: 50, messages: [{ role: "user", content: [doc, { type: "text", text: "Summarise" }] }],
}, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });

describe("a PDF sent to an OpenAI chat model carries a filename", () => {
  it("Messages client, a document with a title: named by it, and the title is not named dropped", async () => {
    const { files, dropped } = await sentFiles(messages({ type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "Q3 Report/final" }));
    expect(files).toEqual([{ file_data: `data:application/pdf;base64,${PDF}`, filename: "Q3 Report final.pdf" }]);
    expect(dropped ?? "").not.toContain("title");
  });

  it("Messages client, a document without a title, and one in a tool result (Claude Code's Read of a PDF)", async () => {
    const { files } = await sentFiles(() => postJson(`${gw.baseURL}/messages`, {
      model: MODEL, max_tokens: 50, messages: [
        { role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF } }, { type: "text", text: "Read it" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/tmp/a.pdf" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "a.pdf" }] }] },
      ],
    }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" }));
    expect(files).toEqual([
      { file_data: `data:application/pdf;base64,${PDF}`, filename: "document.pdf" },
      { file_data: `data:application/pdf;base64,${PDF}`, filename: "a.pdf" },
    ]);
  });

  it("Gemini client, inlineData application/pdf", async () => {
    const { files } = await sentFiles(() => postJson(`${gw.url}/api/v1beta/models/${MODEL}:generateContent`, {
      contents: [{ role: "user", parts: [{ inlineData: { mimeType: "application/pdf", data: PDF } }, { text: "Summarise" }] }],
    }, { "x-goog-api-key": KEY }));
    expect(files).toEqual([{ file_data: `data:application/pdf;base64,${PDF}`, filename: "document.pdf" }]);
  });

  it("Responses client, input_file as a data: URL without a filename", async () => {
    const { files } = await sentFiles(() => postJson(`${gw.baseURL}/responses`, {
      model: MODEL, input: [{ role: "user", content: [{ type: "input_file", file_data: `data:application/pdf;base64,${PDF}` }, { type: "input_text", text: "Summarise" }] }],
    }, { authorization: `Bearer ${KEY}` }));
    expect(files).toEqual([{ file_data: `data:application/pdf;base64,${PDF}`, filename: "document.pdf" }]);
  });
});
