// startChildGateway picks a free port and starts the gateway on it; a test file running beside this one can take that
// port first, and the start is then tried again on another.
import { afterAll, describe, expect, it, vi } from "vitest";
import { createServer, type Server } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ports = vi.hoisted(() => ({ taken: [] as number[] }));
// freePort hands out the taken ports first, as if another process had got to them before the gateway.
vi.mock("./ports.ts", async (real) => {
  const actual = await real<typeof import("./ports.ts")>();
  return { ...actual, freePort: () => (ports.taken.length ? Promise.resolve(ports.taken.shift()!) : actual.freePort()) };
});
const { startChildGateway } = await import("./child-gateway.ts");

const held: Server[] = [];
afterAll(() => held.forEach((s) => s.close()));
async function takePort(): Promise<number> {
  const s = createServer();
  held.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return (s.address() as { port: number }).port;
}

describe("startChildGateway", () => {
  it("starts on another port when the free port it picked was taken before the gateway listened", async () => {
    const taken = await takePort();
    ports.taken.push(taken);
    const file = join(mkdtempSync(join(tmpdir(), "mg-child-port-")), "gateway.yaml");
    writeFileSync(file, "store: { kind: memory }\n");
    const gw = await startChildGateway(file);
    try {
      expect(new URL(gw.url).port).not.toBe(String(taken));
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    } finally {
      await gw.stop();
    }
  }, 30_000);
});
