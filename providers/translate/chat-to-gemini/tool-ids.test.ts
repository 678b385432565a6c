import { describe, expect, it } from "vitest";
import { signatureOf, toolCallId, unsignedToolId } from "./response.ts";

describe("unsignedToolId", () => {
  it("takes off the signature suffix Gemini's ids carry, whatever the signature's characters; other ids unchanged", () => {
    for (const sig of ["c2ln", "ab+/cd==", "x".repeat(300) + "+/="]) {
      const id = toolCallId({ functionCall: { id: "call_0123abcd" }, thoughtSignature: sig });
      expect(signatureOf(id)).toBeDefined();
      expect(unsignedToolId(id)).toBe("call_0123abcd");
    }
    for (const id of ["toolu_01AbC", "call_abc", "", "__sig__abc"]) expect(unsignedToolId(id)).toBe(id);
    expect(unsignedToolId(undefined)).toBeUndefined();
  });
});
