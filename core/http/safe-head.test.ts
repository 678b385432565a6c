import { describe, expect, it } from "vitest";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { errorStatus, writeHeadSafely, type HeadReporter } from "./safe-head.ts";

/** A request whose log keeps what it is told. */
function reporter(): HeadReporter & { logged: unknown[] } {
  const logged: unknown[] = [];
  return { requestId: "r1", gateway: { log: { error: (m, f) => void logged.push([m, f]) } }, logged };
}

async function served(write: (res: ServerResponse) => void): Promise<Response> {
  const server = createServer((_req, res) => { write(res); res.end("body"); });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    return await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  } finally {
    server.close();
  }
}

describe("writeHeadSafely", () => {
  it("writes a head Node accepts as given", async () => {
    const by = reporter();
    const r = await served((res) => writeHeadSafely(res, 201, { "x-a": "1", "x-b": ["2", "3"] }, by));
    expect(r.status).toBe(201);
    expect(r.headers.get("x-b")).toBe("2, 3");
    expect(by.logged).toEqual([]);
  });

  it("leaves out the headers Node refuses and names them; a status it refuses becomes 500", async () => {
    const by = reporter();
    const r = await served((res) => writeHeadSafely(res, 42, { "x-ok": "yes", "x-emoji": "🙂", "bad name": "v", "x-ctl": "a\nb" }, by));
    expect(r.status).toBe(500);
    expect(r.headers.get("x-ok")).toBe("yes");
    expect(await r.text()).toBe("body");
    expect(by.logged).toEqual([["response head refused by Node; sent without it", { requestId: "r1", status: 42, headers: ["x-emoji", "bad name", "x-ctl"] }]]);
  });

  it("errorStatus keeps 4xx and 5xx, and makes anything else a 500", () => {
    expect([400, 429, 599, 200, 99, 600, 1.5].map(errorStatus)).toEqual([400, 429, 599, 500, 500, 500, 500]);
  });
});
