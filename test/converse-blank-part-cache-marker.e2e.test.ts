// A cache marker a chat client puts on a blank text part (a client that marks the end of its prompt with an empty
// part), sent to Claude on Bedrock Converse (bedrock_claude_api: converse): Converse refuses blank text, so the part
// is left out, and its marker — the end of the same prefix — goes to the block kept before it as a cachePoint; with
// nothing before it in the message, it is named in x-mg-dropped-params. Before, it was lost silently.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeBedrock } from "./upstreams/bedrock.ts";
import { CONVERSE_CLAUDE as CLAUDE, startConverseClaudeGateway } from "./helpers/converse-claude-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("converse-blank-marker");
const mark = { type: "ephemeral" };
let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ bedrock, gw, close } = await startConverseClaudeGateway(KEY));
});
afterAll(() => close?.());

const chat = (content: unknown[]) => postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, max_tokens: 50, messages: [{ role: "user", content }] }, { authorization: `Bearer ${KEY}` });

describe("a cache marker on a blank user part, to Claude on Converse", () => {
  it("after a kept part: the cache point follows that part, nothing named dropped", async () => {
    const r = await chat([{ type: "text", text: "hello" }, { type: "text", text: "", cache_control: mark }]);
    expect(r.status, r.text).toBe(200);
    expect(bedrock.requests.at(-1)!.body.messages[0].content).toEqual([{ text: "hello" }, { cachePoint: { type: "default" } }]);
    expect(r.headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("with nothing kept before it: no cache point, and cache_control is named dropped", async () => {
    const r = await chat([{ type: "text", text: " ", cache_control: mark }, { type: "text", text: "hello" }]);
    expect(r.status, r.text).toBe(200);
    expect(bedrock.requests.at(-1)!.body.messages[0].content).toEqual([{ text: "hello" }]);
    expect(r.headers.get("x-mg-dropped-params")).toBe("cache_control");
  });
});
