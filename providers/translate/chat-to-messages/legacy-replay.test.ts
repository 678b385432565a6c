import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { keepingLegacyReasoning, legacyCallHash, legacyCallKey, legacyContinuingTurn } from "./legacy-replay.ts";

const fc = (args: string) => ({ name: "get_weather", arguments: args });
const history = (args: string) => [
  { role: "user", content: "q" },
  { role: "assistant", content: null, function_call: fc(args) },
  { role: "function", name: "get_weather", content: "sunny" },
];
const keyOf = (index: number, args: string) => legacyCallKey(index, legacyCallHash("get_weather").update(args));

describe("a legacy function call's key for its kept reasoning", () => {
  it("is found from the call the next turn sends back: its index, name and arguments", () => {
    expect(legacyContinuingTurn(history('{"city":"Paris"}'))?.key).toBe(keyOf(1, '{"city":"Paris"}'));
    // Another conversation calling the same function at the same place with other arguments does not share it.
    expect(legacyContinuingTurn(history('{"city":"Tokyo"}'))?.key).not.toBe(keyOf(1, '{"city":"Paris"}'));
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
    for await (const ev of keepingLegacyReasoning(answer(), 1, () => "R", (id, v) => { kept.push([id, v]); })) {
      expect(kept).toEqual(ev.data === "[DONE]" ? [[keyOf(1, '{"city":"Paris"}'), "R"]] : []);
    }
  });
});
