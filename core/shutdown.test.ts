import { describe, expect, it } from "vitest";
import { createServer } from "node:http";
import { drain, InFlight } from "./shutdown.ts";
import { captureLogger } from "../test/helpers/log-capture.ts";

async function drainable(closeGateway: () => Promise<void>) {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { logger, log } = captureLogger("info");
  return { t: { server, sockets: new Set<never>(), inflight: new InFlight(), log: logger, startDraining() {}, closeGateway }, log };
}

describe("drain", () => {
  it("a gateway that closes cleanly: shutdown complete, resolved (exit 0)", async () => {
    const { t, log } = await drainable(async () => {});
    await drain(t, 1000);
    expect(log.records().find((r) => r.msg === "shutdown complete")?.level).toBe(30);
  });

  it("a gateway whose close fails (answered records saved nowhere): said at error, and the shutdown rejects, so the process exits non-zero", async () => {
    const lost = new Error("3 ledger record(s) of answered requests could not be saved");
    const { t, log } = await drainable(async () => { throw lost; });
    await expect(drain(t, 1000)).rejects.toBe(lost);
    const line = log.records().find((r) => /^shutdown complete/.test(r.msg));
    expect(line).toMatchObject({ level: 50, error: lost.message });
  });
});
