import { describe, expect, it } from "vitest";
import { MemoryResponseStore } from "../store/responses-memory.ts";
import type { ResponseRecord } from "../store/responses-types.ts";
import { GatewayError } from "../errors.ts";
import { buildConversation, inputItems } from "./conversation.ts";

/** A live key's view of a project's stored responses. */
const live = (project: string) => ({ project, sandbox: false });

const now = Date.now();
const prev: ResponseRecord = {
  id: "resp_prev", project: "acme", createdAt: now, expiresAt: now + 60_000, provider: "up", model: "m", native: false, previousResponseId: null,
  input: [{ id: "msg_u1", type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] }],
  response: {
    id: "resp_prev", object: "response", status: "completed",
    output: [{ type: "function_call", id: "fc_1", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: "completed" }],
  },
};

const fc1 = (prev.response.output as unknown[])[0];

async function storeWithPrev() {
  const s = new MemoryResponseStore();
  await s.put(prev);
  return s;
}

const errorOf = (p: Promise<unknown>) => p.then(() => { throw new Error("resolved"); }, (e: GatewayError) => e);

describe("buildConversation", () => {
  it("without state the body is untouched; stored items get ids", async () => {
    const body = { model: "m", input: "Hi" };
    const c = await buildConversation(new MemoryResponseStore(), live("acme"), body, now);
    expect(c.rebuilt).toBe(body);
    expect(c.passthrough).toBe(body);
    expect(c.items).toEqual([{ id: expect.stringMatching(/^msg_[0-9a-f]{24}$/), type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] }]);
  });

  it("previous_response_id: previous input + previous output + this input, no previous_response_id, no inherited instructions", async () => {
    const body = { model: "m", previous_response_id: "resp_prev", instructions: "New", input: [{ type: "function_call_output", call_id: "call_1", output: "21C" }] };
    const c = await buildConversation(await storeWithPrev(), live("acme"), body, now);
    expect(c.rebuilt).toEqual({
      model: "m", instructions: "New",
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] },
        fc1,
        { type: "function_call_output", call_id: "call_1", output: "21C" },
      ],
    });
    expect(c.passthrough).toBe(body);
    expect(c.items.map((i) => i.id)).toEqual(["msg_u1", "fc_1", expect.stringMatching(/^fco_/)]);
    expect(c.previous?.id).toBe("resp_prev");
  });

  it("an unknown or another project's previous_response_id is a 404 naming the field", async () => {
    for (const [project, id] of [["acme", "resp_nope"], ["other", "resp_prev"]]) {
      const e = await errorOf(buildConversation(await storeWithPrev(), live(project!), { model: "m", input: "x", previous_response_id: id }, now));
      expect(e).toBeInstanceOf(GatewayError);
      expect(e.status).toBe(404);
      expect(e.code).toBe("NOT_FOUND");
      expect(e.details?.field).toBe("previous_response_id");
    }
  });

  it("an expired previous response is a 404", async () => {
    const e = await errorOf(buildConversation(await storeWithPrev(), live("acme"), { model: "m", input: "x", previous_response_id: "resp_prev" }, now + 60_001));
    expect(e.status).toBe(404);
  });

  it("item_reference is replaced by the stored item; an unknown one is a 400 naming input[i].id", async () => {
    const s = await storeWithPrev();
    const body = { model: "m", input: [{ role: "user", content: "Weather?" }, { type: "item_reference", id: "fc_1" }, { type: "function_call_output", call_id: "call_1", output: "21C" }] };
    const c = await buildConversation(s, live("acme"), body, now);
    expect(c.rebuilt.input).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] }, fc1, { type: "function_call_output", call_id: "call_1", output: "21C" }]);
    expect(c.passthrough.input).toEqual(c.rebuilt.input);
    const bad = await errorOf(buildConversation(s, live("acme"), { model: "m", input: [{ role: "user", content: "x" }, { type: "item_reference", id: "fc_zzz" }] }, now));
    expect(bad.status).toBe(400);
    expect(bad.details?.field).toBe("input[1].id");
    const other = await errorOf(buildConversation(s, live("other"), { model: "m", input: [{ type: "item_reference", id: "fc_1" }] }, now));
    expect(other.details?.field).toBe("input[0].id");
  });

  it("a reasoning item sent back by id alone gets its stored encrypted_content; an unknown one stays as sent", async () => {
    const s = new MemoryResponseStore();
    const rs = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hm" }] };
    await s.put({ ...prev, id: "resp_r", response: { ...prev.response, id: "resp_r", output: [rs, fc1] }, fullOutput: [{ ...rs, encrypted_content: "mgr1.blob" }, fc1 as any] });
    const input = [{ role: "user", content: "Weather?" }, rs, { type: "reasoning", id: "rs_openai", summary: [] }, fc1, { type: "function_call_output", call_id: "call_1", output: "21C" }];
    const c = await buildConversation(s, live("acme"), { model: "m", input }, now);
    expect(c.rebuilt.input[1]).toEqual({ ...rs, encrypted_content: "mgr1.blob" });
    expect(c.rebuilt.input[2]).toEqual({ type: "reasoning", id: "rs_openai", summary: [] });
    expect(c.rebuilt.input[3]).toEqual(fc1);
    expect((await buildConversation(s, live("other"), { model: "m", input }, now)).rebuilt.input[1]).toEqual(rs);
  });

  it("a long input (several slices): each item gets an id of its own, the body sent is untouched; continued, the upstream gets none of the minted ids", async () => {
    const input = [...Array.from({ length: 2500 }, (_, i) => ({ role: "user", content: `q${i}` })), { type: "message", id: "", role: "user", content: "empty id" }];
    const sent = structuredClone(input);
    const c = await buildConversation(new MemoryResponseStore(), live("acme"), { model: "m", input }, now);
    expect(c.items).toHaveLength(2501);
    expect(new Set(c.items.map((i) => i.id)).size).toBe(2501);
    for (const i of c.items) expect(i.id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(c.items[2499]).toMatchObject({ type: "message", role: "user", content: [{ type: "input_text", text: "q2499" }] });
    expect(input).toEqual(sent);
    const next = await buildConversation(await storeWithPrev(), live("acme"), { model: "m", previous_response_id: "resp_prev", input }, now);
    const own = next.rebuilt.input.slice(2);
    expect(own).toHaveLength(2501);
    expect(own.filter((i: any) => "id" in i)).toEqual([]);
    expect(own[2500]).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: "empty id" }] });
    expect(next.items.slice(2).every((i) => /^msg_/.test(String(i.id)))).toBe(true);
  });

  it("inputItems: a string is a user message, shorthand messages get a type", () => {
    expect(inputItems("Hi")).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] }]);
    expect(inputItems([{ role: "assistant", content: "ok" }])).toEqual([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }]);
    expect(inputItems([{ role: "user", content: "hi" }])).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }]);
  });
});
