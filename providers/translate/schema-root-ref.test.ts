import { describe, expect, it } from "vitest";
import { rootRefResolved } from "./schema-root-ref.ts";

const node = { type: "object", properties: { child: { $ref: "#/$defs/Node" } } };

describe("rootRefResolved: a root that is only a $ref reads as what it points at", () => {
  it("Pydantic v2's recursive model: the definition at the root, $defs kept for the references inside", () => {
    expect(rootRefResolved({ $defs: { Node: node }, $ref: "#/$defs/Node" })).toEqual({ ...node, $defs: { Node: node } });
  });

  it("the root's own title and description win over the definition's; definitions (draft-07) and ~1 escapes resolve", () => {
    const defs = { "a/b": { type: "object", title: "Def", description: "def" } };
    expect(rootRefResolved({ definitions: defs, $ref: "#/definitions/a~1b", description: "Mine" })).toEqual({ type: "object", title: "Def", description: "Mine", definitions: defs });
  });

  it("a reference to a reference is followed; a cycle, a remote or dangling one, or a root with constraints beside the $ref stays as sent", () => {
    const chain = { $defs: { A: { $ref: "#/$defs/B" }, B: node }, $ref: "#/$defs/A" };
    expect(rootRefResolved(chain)).toMatchObject({ type: "object", $defs: chain.$defs });
    const cycle = { $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }, $ref: "#/$defs/A" };
    expect(rootRefResolved(cycle).$ref).toMatch(/^#\/\$defs\/[AB]$/);
    for (const s of [{ $ref: "https://example.com/s.json" }, { $defs: {}, $ref: "#/$defs/gone" }, { $defs: { Node: node }, $ref: "#/$defs/Node", required: ["x"] }]) {
      expect(rootRefResolved(s)).toBe(s);
    }
  });

  it("a schema inside another (a branch of a root anyOf) resolves its $ref in the document given", () => {
    const doc = { $defs: { Node: node }, anyOf: [{ $ref: "#/$defs/Node" }] };
    expect(rootRefResolved(doc.anyOf[0], doc)).toEqual(node);
    expect(rootRefResolved(doc.anyOf[0])).toBe(doc.anyOf[0]);
  });

  it("a schema with no root $ref is returned as it is", () => {
    expect(rootRefResolved(node)).toBe(node);
  });
});
