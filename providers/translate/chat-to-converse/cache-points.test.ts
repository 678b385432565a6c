import { describe, expect, it } from "vitest";
import { chatToConverse } from "./index.ts";
import { chatToConverseRequest } from "./request.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const claude: Target = { modelId: "anthropic/claude-sonnet-4.5", provider: "bedrock", upstreamModel: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { output: "0.000015" } };
const nova: Target = { modelId: "amazon/nova-pro", provider: "bedrock", upstreamModel: "us.amazon.nova-pro-v1:0", pricing: { output: "0.0000032" } };
const llama: Target = { modelId: "meta/llama-3.3-70b", provider: "bedrock", upstreamModel: "us.meta.llama3-3-70b-instruct-v1:0", pricing: { output: "0.00000072" } };
const H1 = { type: "ephemeral", ttl: "1h" };
const E = { type: "ephemeral" };
const P = { cachePoint: { type: "default" } };
const P1h = { cachePoint: { type: "default", ttl: "1h" } };
const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object" } } });
const points = (body: unknown) => (JSON.stringify(body).match(/"cachePoint"/g) ?? []).length;

describe("chat cache_control -> Converse cachePoints", () => {
  it("a marker on a whole message (system, user, assistant; string content too) or an assistant's part: a point after its last block", () => {
    const { body, dropped } = chatToConverseRequest({
      messages: [
        { role: "system", content: "s", cache_control: E },
        { role: "user", content: "u1", cache_control: H1 },
        { role: "assistant", content: [{ type: "text", text: "a1", cache_control: E }] },
        { role: "user", content: "u2" },
        { role: "assistant", content: "a2", cache_control: E, tool_calls: [{ id: "c1", type: "function", function: { name: "a", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "res" },
      ],
      tools: [fn("a")],
    }, claude) as any;
    expect(body.system).toEqual([{ text: "s" }, P]);
    expect(body.messages[0].content).toEqual([{ text: "u1" }, P1h]);
    expect(body.messages[1].content).toEqual([{ text: "a1" }, P]);
    expect(body.messages[3].content).toEqual([{ text: "a2" }, { toolUse: { toolUseId: "c1", name: "a", input: {} } }, P]);
    expect(points(body)).toBe(4);
    expect(dropped).toEqual([]);
  });

  it("a message marker with nowhere to go (a turn of only reasoning, a blank message) is left out and named, as on Anthropic", () => {
    const thinking = [{ type: "reasoning.text", text: "hmm", signature: "sig1", format: "anthropic-claude-v1", index: 0 }];
    for (const m of [
      { role: "assistant", content: "", reasoning_details: thinking, cache_control: E },
      { role: "user", content: " ", cache_control: E },
    ]) {
      const { body, dropped } = chatToConverseRequest({ messages: [{ role: "user", content: "u1" }, m, { role: "user", content: "u2" }] }, claude) as any;
      expect(points(body), m.role).toBe(0);
      expect(dropped, m.role).toEqual(["cache_control"]);
    }
  });

  it("1h markers on a tool, the system prompt and a user part keep their ttl; a marked tool result gets a point after it", () => {
    const { body, dropped } = chatToConverseRequest({
      tools: [{ ...fn("a"), cache_control: H1 }],
      messages: [
        { role: "system", content: [{ type: "text", text: "s", cache_control: H1 }] },
        { role: "user", content: [{ type: "text", text: "u1", cache_control: H1 }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "a", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "res", cache_control: E }] },
        { role: "user", content: "u2" },
      ],
    }, claude) as any;
    expect(body.toolConfig.tools).toEqual([{ toolSpec: { name: "a", inputSchema: { json: { type: "object" } } } }, P1h]);
    expect(body.system).toEqual([{ text: "s" }, P1h]);
    expect(body.messages[0].content).toEqual([{ text: "u1" }, P1h]);
    expect(body.messages[2].content).toEqual([{ toolResult: { toolUseId: "c1", content: [{ text: "res" }] } }, P, { text: "u2" }]);
    expect(dropped).toEqual([]);
    // A marker on the tool message itself counts the same; an explicit 5m ttl is sent as given.
    const msg = chatToConverseRequest({ messages: [
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "a", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "res", cache_control: { type: "ephemeral", ttl: "5m" } },
    ] }, claude) as any;
    expect(msg.body.messages[1].content[1]).toEqual({ cachePoint: { type: "default", ttl: "5m" } });
  });

  it("caching auto: the Anthropic placement (last tool, system, end of the stable prefix, newest turn) as cache points", () => {
    const req = { tools: [fn("a"), fn("b")], messages: [{ role: "system", content: "s" }, { role: "user", content: "u1" }, { role: "assistant", content: "a1" }, { role: "user", content: "u2" }] };
    const { body, dropped } = chatToConverseRequest(req, claude, true) as any;
    expect(body.toolConfig.tools.map((t: any) => t.toolSpec?.name ?? "point")).toEqual(["a", "b", "point"]);
    expect(body.system).toEqual([{ text: "s" }, P]);
    expect(body.messages).toEqual([
      { role: "user", content: [{ text: "u1" }] },
      { role: "assistant", content: [{ text: "a1" }, P] },
      { role: "user", content: [{ text: "u2" }, P] },
    ]);
    expect(dropped).toEqual([]);
    // Without auto nothing is placed; the translator takes auto from the cache-marker plugin's option.
    expect(points(chatToConverseRequest(req, claude).body)).toBe(0);
    const t = chatToConverse.request(req, claude, { cacheMarkers: false, cacheAuto: true, driverProtocol: "bedrock", provider: "bedrock" });
    expect(points(t.body)).toBe(4);
  });

  it("auto keeps the client's markers, stays within 4 and puts 1h points before 5m ones", () => {
    const { body } = chatToConverseRequest({
      tools: [fn("a")],
      messages: [{ role: "system", content: [{ type: "text", text: "s", cache_control: H1 }] }, { role: "user", content: "u1" }, { role: "assistant", content: "a1" }, { role: "user", content: "u2" }],
    }, claude, true) as any;
    expect(points(body)).toBe(4);
    expect(body.toolConfig.tools[1]).toEqual(P1h); // before the client's 1h system point
    expect(body.system[1]).toEqual(P1h);
    expect(body.messages[2].content[1]).toEqual(P);
  });

  it("never more than Bedrock's 4: the earliest client markers are left out and cache_control is named", () => {
    const u = (text: string) => ({ role: "user", content: [{ type: "text", text, cache_control: E }] });
    const { body, dropped } = chatToConverseRequest({
      tools: [{ ...fn("a"), cache_control: E }],
      messages: [{ role: "system", content: [{ type: "text", text: "s", cache_control: E }] }, u("1"), { role: "assistant", content: "x" }, u("2"), { role: "assistant", content: "y" }, u("3")],
    }, claude) as any;
    expect(points(body)).toBe(4);
    expect(body.toolConfig.tools).toHaveLength(1); // the earliest marker (the tool) is the one left out
    expect(body.messages.filter((m: any) => m.role === "user").map((m: any) => m.content.at(-1))).toEqual([P, P, P]);
    expect(dropped).toEqual(["cache_control"]);
  });

  it("Nova caches no tools: a tool marker is left out and named, auto places only system and messages; Llama gets no auto points", () => {
    const req = { tools: [{ ...fn("a"), cache_control: E }], messages: [{ role: "system", content: "s" }, { role: "user", content: "u1" }] };
    const n = chatToConverseRequest(req, nova, true) as any;
    expect(n.body.toolConfig.tools).toHaveLength(1);
    expect(n.body.system).toEqual([{ text: "s" }, P]);
    expect(n.body.messages[0].content).toEqual([{ text: "u1" }, P]);
    expect(n.dropped).toEqual(["cache_control"]);
    const plain = { messages: [{ role: "system", content: "s" }, { role: "user", content: "u1" }] };
    expect(points(chatToConverseRequest(plain, llama, true).body)).toBe(0);
  });
});
