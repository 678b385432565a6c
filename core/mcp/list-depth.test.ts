import { describe, expect, it } from "vitest";
import { tooDeep, withinDepth } from "./list-depth.ts";

/** An object nested `levels` deep under `inputSchema`. */
function tool(name: string, levels: number): unknown {
  let schema: unknown = {};
  for (let i = 0; i < levels; i++) schema = { items: schema };
  return { name, inputSchema: schema };
}

describe("listed items held to a request body's 128 levels", () => {
  it("names the item and its member; one within the bound passes; 200 000 levels cost no stack", () => {
    expect(tooDeep("tools", tool("ok", 120))).toBeUndefined();
    expect(tooDeep("tools", tool("deep", 200_000))).toBe('tool "deep": its inputSchema nests deeper than 128 levels');
    expect(tooDeep("resources:templates", { uri: "file:///x", _meta: tool("m", 300) })).toBe('resource "file:///x": its _meta nests deeper than 128 levels');
  });

  it("a client's own server fails the list; a configured one's goes on without the item, each reported", () => {
    const items = [tool("a", 1), tool("deep", 500), tool("b", 1)];
    expect(() => withinDepth("tools", items, true, () => {})).toThrow('tool "deep": its inputSchema nests deeper than 128 levels');
    const left: string[] = [];
    expect(withinDepth("tools", items, false, (why) => left.push(why)).map((t: any) => t.name)).toEqual(["a", "b"]);
    expect(left).toEqual(['tool "deep": its inputSchema nests deeper than 128 levels']);
  });

  it("a number JSON cannot hold (1e999, Infinity once parsed) before the deep property does not hide the depth", () => {
    const deep = `${'{"items":'.repeat(5000)}{}${"}".repeat(5000)}`;
    const listed = JSON.parse(`{"name":"t","inputSchema":{"type":"object","properties":{"aa":{"type":"number","default":1e999},"a":${deep}}}}`);
    expect(tooDeep("tools", listed)).toBe('tool "t": its inputSchema nests deeper than 128 levels');
    expect(() => withinDepth("tools", [listed], true, () => {})).toThrow('tool "t": its inputSchema nests deeper than 128 levels');
  });

  it("a wide item within the bound passes, and an item nested deep under an array is named by its member", () => {
    const wide = { name: "w", inputSchema: { properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: "string", enum: [1, 2, Infinity] }])) } };
    expect(tooDeep("tools", wide)).toBeUndefined();
    let nested: unknown = 1;
    for (let i = 0; i < 300; i++) nested = [nested];
    expect(tooDeep("prompts", { name: "p", arguments: nested })).toBe('prompt "p": its arguments nests deeper than 128 levels');
  });
});
