// A media file an upstream hands back is downloaded within server.upstream_limits.download_bytes, on the provider's
// own origin or off it (through the client-URL guard): past it, the same 502 as any answer past its bound.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { UpstreamClient } from "./http.ts";
import { download } from "./upstream-json.ts";

let server: Server;
let origin: string;
const client = new UpstreamClient("media", { timeoutMs: 5000, limits: { download_bytes: 2048 } });

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "image/png" });
    res.end(Buffer.alloc(req.url === "/small.png" ? 1024 : 4096, 1));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const tooLarge = {
  status: 502, code: "UPSTREAM_ERROR", retryable: false, headers: { "x-should-retry": "false" },
  details: { provider: "media", reason: "answer_too_large", limit_bytes: 2048, setting: "server.upstream_limits.download_bytes" },
};

describe("download: within server.upstream_limits.download_bytes", () => {
  it("on the provider's origin: a file within the bound is read, one past it is a 502 naming the bound and the setting", async () => {
    const signal = new AbortController().signal;
    expect((await download(client, "media", `${origin}/small.png`, { origin, signal })).bytes).toHaveLength(1024);
    const err = await download(client, "media", `${origin}/big.png`, { origin, signal }).catch((e) => e);
    expect(err).toMatchObject(tooLarge);
    expect(err.message).toBe("Provider media sent a file to download larger than 2048 bytes, the gateway's bound (server.upstream_limits.download_bytes raises it); the answer was dropped");
  });

  it("off it, through the client-URL guard: the same bound and the same 502", async () => {
    const urlFetch = { allowHosts: ["127.0.0.1"], maxBytes: 1024 * 1024, timeoutMs: 5000 };
    const o = { origin: "https://api.example.invalid", urlFetch, signal: new AbortController().signal };
    expect((await download(client, "media", `${origin}/small.png`, o)).bytes).toHaveLength(1024);
    expect(await download(client, "media", `${origin}/big.png`, o).catch((e) => e)).toMatchObject(tooLarge);
  });
});
