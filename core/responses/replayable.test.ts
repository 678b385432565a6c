import { describe, expect, it } from "vitest";
import { MemoryResponseStore } from "../store/responses-memory.ts";
import type { ResponseRecord } from "../store/responses-types.ts";
import type { StoredResponse } from "../store/types.ts";
import { answerIdOf, changesUnderIt, replayable } from "./replayable.ts";

/** A live key's view of a project's stored responses. */
const live = (project: string) => ({ project, sandbox: false });

const T0 = 1_000_000;
const DAY = 86_400_000;

function record(id: string, project = "p"): ResponseRecord {
  return {
    id, project, createdAt: T0, expiresAt: T0 + DAY, input: [], provider: "up", model: "m", native: false, previousResponseId: null,
    response: { id, object: "response", status: "completed", output: [{ type: "message", id: `msg_${id}` }] },
  };
}

const json = (id: string): StoredResponse => ({ kind: "json", status: 200, headers: {}, body: { id, object: "response", status: "completed" } });
const stream = (id: string): StoredResponse => ({
  kind: "stream", status: 200, headers: {},
  events: [
    { event: "response.created", data: JSON.stringify({ type: "response.created", response: { id, status: "in_progress" } }) },
    { event: "response.completed", data: JSON.stringify({ type: "response.completed", response: { id, status: "completed" } }) },
  ],
});

async function storeWith(...ids: string[]) {
  const s = new MemoryResponseStore();
  for (const id of ids) await s.put(record(id));
  return s;
}

describe("answerIdOf", () => {
  it("reads a JSON answer's id and a stream's from its first event carrying the response", () => {
    expect(answerIdOf(json("resp_a"))).toBe("resp_a");
    expect(answerIdOf(stream("resp_b"))).toBe("resp_b");
  });
});

describe("replayable", () => {
  it("a stored answer replays while its response is stored, not once it is deleted", async () => {
    const s = await storeWith("resp_a");
    expect(await replayable(s, live("p"), { input: "hi" }, json("resp_a"), T0 + 1)).toBe(true);
    expect(await replayable(s, live("p"), { input: "hi" }, stream("resp_a"), T0 + 1)).toBe(true);
    await s.delete(live("p"), "resp_a", T0 + 1);
    expect(await replayable(s, live("p"), { input: "hi" }, json("resp_a"), T0 + 1)).toBe(false);
    expect(await replayable(s, live("p"), { input: "hi" }, stream("resp_a"), T0 + 1)).toBe(false);
  });

  it("not once its response has expired", async () => {
    const s = await storeWith("resp_a");
    expect(await replayable(s, live("p"), { input: "hi" }, json("resp_a"), T0 + DAY)).toBe(false);
  });

  it("not once the response it continued, or an item it referenced, is gone", async () => {
    const s = await storeWith("resp_prev", "resp_next", "resp_ref");
    const cont = { input: "more", previous_response_id: "resp_prev" };
    expect(await replayable(s, live("p"), cont, json("resp_next"), T0 + 1)).toBe(true);
    const ref = { input: [{ type: "item_reference", id: "msg_resp_ref" }] };
    expect(await replayable(s, live("p"), ref, json("resp_next"), T0 + 1)).toBe(true);
    await s.delete(live("p"), "resp_prev", T0 + 1);
    await s.delete(live("p"), "resp_ref", T0 + 1);
    expect(await replayable(s, live("p"), cont, json("resp_next"), T0 + 1)).toBe(false);
    expect(await replayable(s, live("p"), ref, json("resp_next"), T0 + 1)).toBe(false);
  });

  it("another project's record does not vouch for an answer", async () => {
    const s = await storeWith("resp_a");
    expect(await replayable(s, live("q"), { input: "hi" }, json("resp_a"), T0 + 1)).toBe(false);
  });

  it("store: false kept nothing, so nothing is asked (the answer's id was never retrievable)", async () => {
    const s = new MemoryResponseStore();
    expect(await replayable(s, live("p"), { input: "hi", store: false }, json("resp_x"), T0 + 1)).toBe(true);
  });
});

describe("changesUnderIt", () => {
  it("a conversation, or a stored prompt without a version: the provider's state answers, not the body", () => {
    expect(changesUnderIt({ input: "continue", conversation: "conv_X" })).toBe(true);
    expect(changesUnderIt({ input: "continue", conversation: { id: "conv_X" }, store: false })).toBe(true);
    expect(changesUnderIt({ input: "x", prompt: { id: "pmpt_1" } })).toBe(true);
    expect(changesUnderIt({ input: "x", prompt: { id: "pmpt_1", version: null } })).toBe(true);
  });

  it("a tool run in a container named by id: its files are the provider's and change as code runs", () => {
    expect(changesUnderIt({ input: "x", tools: [{ type: "code_interpreter", container: "cntr_abc" }] })).toBe(true);
    expect(changesUnderIt({ input: "x", tools: [{ type: "web_search" }, { type: "code_interpreter", container: "cntr_abc" }] })).toBe(true);
  });

  it("a fresh container ({type: auto}) is made from the body: not provider state", () => {
    expect(changesUnderIt({ input: "x", tools: [{ type: "code_interpreter", container: { type: "auto", file_ids: ["file_1"] } }] })).toBe(false);
  });

  it("a pinned prompt version, a previous_response_id (checked by replayable) and a plain request do not", () => {
    expect(changesUnderIt({ input: "x", prompt: { id: "pmpt_1", version: "3" } })).toBe(false);
    expect(changesUnderIt({ input: "x", previous_response_id: "resp_a" })).toBe(false);
    expect(changesUnderIt({ input: "x", conversation: null })).toBe(false);
  });
});
