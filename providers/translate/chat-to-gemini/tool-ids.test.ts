import { describe, expect, it } from "vitest";
import { signatureOf, toolCallId, unsignedToolId, withoutToolIdSignatures } from "./response.ts";

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

  it("withoutToolIdSignatures: calls and results of a chat body lose the suffix alike; an unsigned body is the same object", () => {
    const id = toolCallId({ functionCall: { id: "call_0123abcd" }, thoughtSignature: "x".repeat(200) });
    const body = {
      model: "m",
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }, { id: "call_plain", type: "function", function: { name: "g", arguments: "{}" } }] },
        { role: "tool", tool_call_id: id, content: "sunny" },
        { role: "tool", tool_call_id: "call_plain", content: "ok" },
      ],
    };
    const out = withoutToolIdSignatures(body);
    expect(out.messages[1].tool_calls.map((c: any) => c.id)).toEqual(["call_0123abcd", "call_plain"]);
    expect(out.messages[2].tool_call_id).toBe("call_0123abcd");
    expect(out.messages[3]).toBe(body.messages[3]);
    expect(body.messages[2].tool_call_id).toBe(id); // the client's body is not changed
    const plain = { messages: [body.messages[0], body.messages[3]] };
    expect(withoutToolIdSignatures(plain)).toBe(plain);
  });
});
