// The conversation bound's size: exact (the bytes of the conversation as a record stores it), and worked out without
// serialising the previous record's input again, whose size the store knows.
import { describe, expect, it } from "vitest";
import { checkConversationSize, conversationBytes } from "./conversation-limit.ts";
import type { Conversation, Item } from "./conversation.ts";
import type { ResponseRecord } from "../store/responses-types.ts";

const message = (id: string, text: string): Item => ({ id, type: "message", role: "user", content: [{ type: "input_text", text }] });
const jsonBytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x), "utf8");

function continued(input: Item[], output: Item[], own: Item[], known = true): Conversation {
  const previous: ResponseRecord = {
    id: "resp_1", project: "p", createdAt: 0, expiresAt: 1, provider: "up", model: "m", native: false, previousResponseId: null,
    response: { id: "resp_1", object: "response", output }, input, ...(known ? { inputBytes: jsonBytes(input) } : {}),
  };
  return { rebuilt: {}, passthrough: {}, items: [...input, ...output, ...own], previous };
}

describe("conversationBytes", () => {
  const input = [message("msg_1", "héllo wörld ✓"), message("msg_2", "a \"quoted\" line\n")];
  const output = [{ id: "msg_3", type: "message", role: "assistant", content: [{ type: "output_text", text: "日本語" }] }];
  const own = [message("msg_4", "next")];

  it("is the UTF-8 size of the whole conversation as JSON, for every mix of earlier input, output and new items", async () => {
    for (const [i, o, n] of [[input, output, own], [input, [], own], [input, output, []], [[], output, own], [[], [], own], [input, [], []], [[], [], []]] as Item[][][]) {
      for (const known of [true, false]) {
        const conv = continued(i, o, n, known);
        expect(await conversationBytes(conv)).toBe(jsonBytes(conv.items));
      }
    }
    const first: Conversation = { rebuilt: {}, passthrough: {}, items: own };
    expect(await conversationBytes(first)).toBe(jsonBytes(own));
  });

  it("does not serialise the previous record's input when its size is known", async () => {
    let serialised = 0;
    const stored = Array.from({ length: 50 }, (_, i) => ({ ...message(`msg_${i}`, "x".repeat(100)), toJSON() { serialised++; return message(`msg_${i}`, "x".repeat(100)); } }));
    const conv = continued(stored, output, own);
    (conv.previous as ResponseRecord).inputBytes = jsonBytes(stored.map((s) => s.toJSON()));
    serialised = 0;
    const bytes = await checkConversationSize(conv, false, 1 << 20);
    // Before: every stored item was serialised again on each continuation (50 here; a 10 MB conversation took 24 ms).
    expect(serialised).toBe(0);
    expect(bytes).toBe(jsonBytes(conv.items)); // toJSON gives the same items: the size is still exact
  });

  it("refuses past the bound by the same size, naming previous_response_id", async () => {
    const conv = continued(input, output, own);
    const bytes = jsonBytes(conv.items);
    expect(await checkConversationSize(conv, true, bytes)).toBe(bytes);
    await expect(checkConversationSize(conv, true, bytes - 1)).rejects.toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "previous_response_id", bytes }) }));
  });
});
