// GET /api/v1/responses/{id}?stream=true of a large stored response: the replay is made and written as the client
// reads it, so a client that leaves after its first bytes ends it (the access line says aborted, and little was
// written), where the whole stream — each text five times over — was built in memory and written out anyway.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get } from "node:http";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import type { RunningGateway } from "../core/server.ts";

const SANDBOX = testKey("rsp-replay-large", true);
const TEXT_CHARS = 4 * 1024 * 1024;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

beforeAll(async () => {
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { real: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-real" } },
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "real", model: "gpt-4o-mini", pricing: { input: "1", output: "1" } }] } },
    projects: { p: { keys: [keyEntry("sandbox", SANDBOX)] } },
  }, {}, "info"));
  const now = Date.now();
  const text = "gateway ".repeat(TEXT_CHARS / 8);
  const response = {
    id: "resp_large", object: "response", created_at: Math.floor(now / 1000), model: "openai/gpt-4o-mini", status: "completed", error: null, incomplete_details: null,
    output: [{ id: "msg_large", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] }],
    usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
  };
  await gw.gateway.store.responses.put({ id: "resp_large", project: "p", createdAt: now, expiresAt: now + 86_400_000, response, input: [], provider: "sim", model: "openai/gpt-4o-mini", native: false, sandbox: true, previousResponseId: null });
}, 30_000);

afterAll(async () => {
  await gw?.close();
});

/** Reads the replay until `stopAfter` bytes have come, then closes the connection; the bytes read. */
function readThenLeave(requestId: string, stopAfter: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = get(`${baseURL}/responses/resp_large?stream=true`, { headers: { authorization: `Bearer ${SANDBOX}`, "x-request-id": requestId } }, (res) => {
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read >= stopAfter) {
          req.destroy();
          resolve(read);
        }
      });
      res.on("end", () => resolve(read));
    });
    req.on("error", (e) => (req.destroyed ? undefined : reject(e)));
  });
}

describe("replaying a large stored response", () => {
  it("a client that leaves after its first bytes ends the replay: logged aborted, a fraction of the stream written", async () => {
    await readThenLeave("req-replay-left", 128 * 1024);
    const [line] = await log.accessOnce((r) => r.requestId === "req-replay-left", 1);
    expect(line).toMatchObject({ status: 200, aborted: true, outcome: "aborted" });
    // The whole replay is five copies of the text (over 20 MB); the delta holds the first whole, and little after it
    // went out before the replay saw the client had gone.
    expect(line!.bytesOut).toBeLessThan(2.5 * TEXT_CHARS);
  }, 30_000);

  it("a client that reads it all gets every event, the text whole in its delta", async () => {
    const res = await fetch(`${baseURL}/responses/resp_large?stream=true`, { headers: { authorization: `Bearer ${SANDBOX}` } });
    const events = (await res.text()).split("\n\n").filter(Boolean).map((f) => JSON.parse(/^data: (.*)$/m.exec(f)![1]!));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.find((e) => e.type === "response.output_text.delta").delta).toHaveLength(TEXT_CHARS);
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: { id: "resp_large" } });
  }, 30_000);
});
