import { createServer, type Server, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { answerAfterHalfClose } from "./half-close.ts";

let server: Server | undefined;
afterEach(() => server?.close());

/** A server that answers only when told; `cancelled` resolves when a response closes unanswered. */
async function holdingServer() {
  let pending: ServerResponse | undefined;
  let onCancel: () => void = () => {};
  const cancelled = new Promise<void>((resolve) => (onCancel = resolve));
  const arrived = new Promise<void>((resolve) => {
    server = createServer((req, res) => {
      answerAfterHalfClose(req, res);
      res.once("close", () => !res.writableFinished && onCancel());
      req.resume();
      req.once("end", () => {
        pending = res;
        resolve();
      });
    });
  });
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const port = (server!.address() as { port: number }).port;
  return { port, arrived, cancelled, answer: () => pending!.end("done") };
}

const request = (version = "1.1") => `POST / HTTP/${version}\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi`;

describe("answerAfterHalfClose", () => {
  it("a client that half-closed after its request gets the answer, after at most two 100 Continue", async () => {
    const s = await holdingServer();
    const socket = connect(s.port, "127.0.0.1");
    let got = "";
    socket.on("data", (d) => (got += d));
    const ended = new Promise((resolve) => socket.once("end", resolve));
    socket.end(request());
    await s.arrived;
    await new Promise((r) => setTimeout(r, 400)); // both interim responses have gone out
    s.answer();
    await ended;
    expect(got).toMatch(/^(HTTP\/1\.1 100 Continue\r\n\r\n){1,2}HTTP\/1\.1 200 OK\r\n/);
    expect(got).toMatch(/\r\n\r\n(4\r\n)?done/);
  });

  it("a client that closed its socket is found gone and its request cancelled before any answer", async () => {
    const s = await holdingServer();
    const socket = connect(s.port, "127.0.0.1");
    socket.write(request());
    await s.arrived;
    socket.destroy(); // a FIN, as a fetch that is aborted sends
    await s.cancelled; // the test times out without it
  });

  it("HTTP/1.0 (no interim responses): a FIN cancels at once", async () => {
    const s = await holdingServer();
    const socket = connect(s.port, "127.0.0.1");
    let got = "";
    socket.on("data", (d) => (got += d));
    socket.end(request("1.0"));
    await s.cancelled;
    expect(got).toBe("");
  });
});
