// paced: the replay gives the event loop a turn every PACE_CHARS of events, so the stream writer's flush (and its
// back-pressure and disconnect checks) run while a large replay is read, not after all of it.
import { describe, expect, it } from "vitest";
import { paced } from "./replay-pace.ts";

const event = (n: number) => ({ event: "e", data: "x".repeat(n) });

describe("paced", () => {
  it("hands on every event in order, and lets other work run between large ones", async () => {
    const source = [event(100), event(100), event(100), event(100)];
    const seen: string[] = [];
    setImmediate(() => seen.push("other work"));
    for await (const e of paced(source, 150)) seen.push(`event ${e.data.length}`);
    expect(seen.filter((s) => s.startsWith("event"))).toHaveLength(4);
    // After the second event 200 characters had gone by: the other work ran before the third.
    expect(seen.indexOf("other work")).toBe(2);
  });

  it("stops making events when its reader stops", async () => {
    let made = 0;
    function* source() {
      for (;;) {
        made++;
        yield event(10);
      }
    }
    for await (const _ of paced(source(), 15)) if (made >= 3) break;
    expect(made).toBe(3);
  });
});
