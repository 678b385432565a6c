import { describe, expect, it } from "vitest";
import { pageOf } from "./input-items.ts";
import { GatewayError } from "../errors.ts";

const items = Array.from({ length: 5 }, (_, i) => ({ id: `msg_${i}`, type: "message", status: "completed" }));
const q = (s: string) => new URLSearchParams(s);

describe("input_items pages", () => {
  it("default: most recent first, 20 per page", () => {
    expect(pageOf(items, q(""))).toEqual({ object: "list", data: [...items].reverse(), first_id: "msg_4", last_id: "msg_0", has_more: false });
  });

  it("items are listed as the API lists them: a type and, on messages, calls and call outputs, a status", () => {
    const stored = [
      { id: "msg_a", role: "user", content: "Hi" },
      { id: "fc_a", type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { id: "fco_a", type: "function_call_output", call_id: "c1", output: "ok" },
      { id: "rs_a", type: "reasoning", summary: [] },
      { id: "msg_b", type: "message", role: "assistant", status: "incomplete", content: [] },
    ];
    expect(pageOf(stored, q("order=asc")).data).toEqual([
      { id: "msg_a", type: "message", role: "user", content: "Hi", status: "completed" },
      { id: "fc_a", type: "function_call", call_id: "c1", name: "f", arguments: "{}", status: "completed" },
      { id: "fco_a", type: "function_call_output", call_id: "c1", output: "ok", status: "completed" },
      { id: "rs_a", type: "reasoning", summary: [] },
      { id: "msg_b", type: "message", role: "assistant", status: "incomplete", content: [] },
    ]);
  });

  it("walks every item once with limit and after, in both orders", () => {
    for (const order of ["asc", "desc"]) {
      const seen: string[] = [];
      let after = "";
      for (let page = 0; page < 10; page++) {
        const p = pageOf(items, q(`limit=2&order=${order}${after ? `&after=${after}` : ""}`));
        seen.push(...p.data.map((i) => i.id as string));
        if (!p.has_more) break;
        after = p.last_id as string;
      }
      const ids = items.map((i) => i.id);
      expect(seen).toEqual(order === "asc" ? ids : ids.reverse());
    }
  });

  it("bad limit, order or after: a 400 naming the parameter", () => {
    for (const [query, field] of [["limit=0", "limit"], ["limit=101", "limit"], ["limit=x", "limit"], ["order=up", "order"], ["after=msg_9", "after"]]) {
      let err: unknown;
      try { pageOf(items, q(query!)); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).details?.field).toBe(field);
    }
  });

  it("an empty page has null ids", () => {
    expect(pageOf([], q(""))).toEqual({ object: "list", data: [], first_id: null, last_id: null, has_more: false });
  });
});
