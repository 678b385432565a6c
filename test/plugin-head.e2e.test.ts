// A response head Node refuses (a plugin's header carrying a client's emoji, a GatewayError with a status that is
// no error status): the response still goes out, without what was refused, and the request finishes (its onFinish
// runs, the gateway stops at once). Before, writeHead threw inside the error path: a "500 OK" at best, the request's
// cleanup skipped, in-flight stuck, and shutdown waiting out its grace period.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolve } from "node:path";
import { startTestGateway, type TestGateway } from "../core/public/testing.ts";

const PLUGIN = resolve("test/fixtures/plugins/head-echo.ts");

describe("a plugin's response head that Node refuses", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ plugins: { "head-echo": { module: PLUGIN } } });
  });
  afterAll(async () => {
    await gw?.close();
  });
  const chat = (user: string) => gw.post("/chat/completions", { model: gw.model, user, messages: [{ role: "user", content: "hi" }] });

  it("a header value Node refuses is left out; the answer and the request's end are as usual", async () => {
    const ok = await chat("zoe");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-end-user")).toBe("zoe");
    const refused = await chat("user—42 🙂");
    expect(refused.status).toBe(200);
    expect(refused.body.choices[0].message.content).toContain("hi");
    expect(refused.headers.get("x-end-user")).toBeNull();
    expect(refused.headers.get("x-request-id")).toMatch(/.+/);
    // The refused request finished: its onFinish ran before the next request began.
    const after = await chat("zoe");
    expect(Number(after.headers.get("x-finished-before"))).toBe(Number(ok.headers.get("x-finished-before")) + 2);
  });

  it("a GatewayError with a status that is no error status is a 500 in the envelope", async () => {
    for (const status of [99, 200, 999]) {
      const r = await chat(`status:${status}`);
      expect(r.status, `status ${status}`).toBe(500);
      expect(r.body.error.message).toBe("a plugin's own refusal");
    }
  });

  it("stops at once: nothing is left in flight", async () => {
    const t0 = Date.now();
    await gw.close();
    expect(Date.now() - t0).toBeLessThan(2_000);
  });
});
