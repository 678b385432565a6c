import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { keepingLegacyReasoning, legacyCallHash, legacyCallKey, legacyContinuingTurn, legacyConversationHash } from "./legacy-replay.ts";

const fc = (args: string) => ({ name: "get_weather", arguments: args });
const history = (args: string, prompt = "q") => [
  { role: "user", content: prompt },
  { role: "assistant", content: null, function_call: fc(args) },
  { role: "function", name: "get_weather", content: "sunny" },
];
const keyOf = (args: string, prompt = "q") => legacyCallKey(1, legacyCallHash(legacyConversationHash([{ role: "user", content: prompt }]), "get_weather").update(args));

describe("a legacy function call's key for its kept reasoning", () => {
  it("is found from the call the next turn sends back: its conversation, name and arguments", () => {
    expect(legacyContinuingTurn(history('{"city":"Paris"}'))?.key).toBe(keyOf('{"city":"Paris"}'));
    // Another conversation calling the same function at the same place with other arguments does not share it.
    expect(legacyContinuingTurn(history('{"city":"Tokyo"}'))?.key).not.toBe(keyOf('{"city":"Paris"}'));
    // Nor does one with the same call after another prompt (another user's chat).
    expect(legacyContinuingTurn(history('{"city":"Paris"}', "other"))?.key).toBe(keyOf('{"city":"Paris"}', "other"));
    expect(keyOf('{"city":"Paris"}', "other")).not.toBe(keyOf('{"city":"Paris"}'));
    expect(legacyContinuingTurn(history("{}").slice(0, 2))).toBeUndefined(); // no result yet: not continuing
  });

  it("a streamed answer keeps it under the same key, before [DONE] goes out", async () => {
    const kept: [string, string][] = [];
    const chunk = (function_call: object): SseEvent => ({ data: JSON.stringify({ choices: [{ index: 0, delta: { function_call } }] }) });
    async function* answer(): AsyncIterable<SseEvent> {
      yield chunk({ name: "get_weather", arguments: "" });
      yield chunk({ arguments: '{"city":' });
      yield chunk({ arguments: '"Paris"}' });
      yield { data: "[DONE]" };
    }
    const conversation = legacyConversationHash([{ role: "user", content: "q" }]);
    for await (const ev of keepingLegacyReasoning(answer(), 1, conversation, () => "R", (id, v) => { kept.push([id, v]); })) {
      expect(kept).toEqual(ev.data === "[DONE]" ? [[keyOf('{"city":"Paris"}'), "R"]] : []);
    }
  });
});
