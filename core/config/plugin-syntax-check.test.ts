import { describe, expect, it } from "vitest";
import { nodeCheck } from "./plugin-syntax-check.ts";

describe("nodeCheck", () => {
  it("says Node's reason at its line and column, without holding the event loop while the child parses", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const found = await nodeCheck("const a = 1;\nlet b = ( ;\n", "commonjs", "/plugins/x.cjs");
      expect(found).toBe("/plugins/x.cjs:2:11: SyntaxError: Unexpected token ';'");
      expect(ticks).toBeGreaterThan(0); // a serving gateway's requests go on during a failed reload's check
      expect(await nodeCheck("export const a = 1;\n", "module", "/plugins/x.mjs")).toBeUndefined();
    } finally {
      clearInterval(timer);
    }
  });
});
