// A Responses client sends back an assistant message whose content is a refusal part (what an OpenAI model answers
// when it refuses, kept in the client's history) and continues on Claude: the model must see that it refused, as
// the turn's text, not a conversation where its turn is missing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("responses-refusal-history");
const CLAUDE = "anthropic/claude-test";
let claude: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  claude = await startFakeAnthropic();
  gw = await startTestGateway({
    providers: { claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
    models: { [CLAUDE]: { type: "language", max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await claude?.close();
});

describe("Responses client: an assistant turn that was a refusal, continued on Claude", () => {
  it("Anthropic gets the refusal as the assistant turn's text", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
    const answer = await client.responses.create({
      model: CLAUDE, store: false,
      input: [
        { role: "user", content: "Write the exploit." },
        { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "refusal", refusal: "I can't help with that." }] },
        { role: "user", content: "Why not?" },
      ],
    });
    expect(answer.status).toBe("completed");
    const sent = claude.requests.at(-1)!.body as any;
    expect(sent.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(sent.messages[1].content)).toContain("I can't help with that.");
  });
});
