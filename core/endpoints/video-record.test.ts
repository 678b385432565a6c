import { describe, expect, it } from "vitest";
import type { GatewayHandle } from "../contracts/gateway.ts";
import { recordJob } from "./video-record.ts";

const log = { warn() {}, info() {}, error() {} };
const gateway = { log } as unknown as GatewayHandle;

describe("recordJob", () => {
  it("writes again in the background until the store takes the record (a single try lost it in an outage)", async () => {
    let calls = 0;
    let saved = false;
    const write = async () => {
      calls++;
      if (calls < 3) throw new Error("store unavailable");
      saved = true;
    };
    await recordJob(gateway, "vid_1", write, { giveUpAt: Date.now() + 60_000, stop: new AbortController().signal });
    expect(calls).toBe(1); // the answer does not wait for the retries
    for (const end = Date.now() + 3000; !saved && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    expect(saved).toBe(true);
    expect(calls).toBe(3); // 250 ms, then 500 ms later
  });

  it("stops retrying when the gateway closes", async () => {
    let calls = 0;
    const stop = new AbortController();
    await recordJob(gateway, "vid_2", async () => {
      calls++;
      throw new Error("store unavailable");
    }, { giveUpAt: Date.now() + 60_000, stop: stop.signal });
    stop.abort();
    await new Promise((r) => setTimeout(r, 600));
    expect(calls).toBe(1);
  });
});
