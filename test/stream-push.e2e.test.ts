// The pushed stream path end to end (issue 11: no promise chain parked per slow stream): an OpenAI upstream
// through the full default pipeline to an OpenAI client. A client that stops reading must hold back the upstream
// itself (client socket -> writer -> relay -> undici body -> upstream socket), then get every byte once it reads,
// billed once; slow streams side by side all end with [DONE].
import { beforeAll, describe, expect, it } from "vitest";
import { request, type IncomingMessage } from "node:http";
import { fastAndSlowGateways } from "./helpers/fast-and-slow.ts";
import { auth, chat } from "./helpers/policy-config.ts";

const CHUNKS = 600;
/** The output the upstream reports: within the request's max_tokens (20), as a provider's is; more would be billed
 * only up to that limit (core/metering/usage-ceiling.ts), and this test is about billing once, not about a cap. */
const REPORTED = 20;
const piece = "x".repeat(16 * 1024);
const frame = (d: unknown) => `data: ${JSON.stringify(d)}\n\n`;
const chunk = (content: string | undefined, finish: string | null = null) =>
  ({ id: "chatcmpl-big", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish }], usage: null });

describe("pushed streams, end to end", () => {
  const env = fastAndSlowGateways({ words: 20, chunkDelayMs: 20 });
  let written = 0;
  beforeAll(() => {
    // A big stream written as fast as the connection takes it: each write waits for 'drain' when the socket is full.
    env.fake.hook = (req, res) => {
      if (req.body?.messages?.[0]?.content !== "big") return false;
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const more = () => {
        while (i < CHUNKS) {
          i++;
          written = i;
          if (!res.write(frame(chunk(piece)))) return void res.once("drain", more);
        }
        res.end(frame(chunk(undefined, "stop")) + frame({ ...chunk(undefined), choices: [], usage: { prompt_tokens: 3, completion_tokens: REPORTED, total_tokens: REPORTED + 3 } }) + "data: [DONE]\n\n");
      };
      more();
      return true;
    };
  });

  it("a client that stops reading holds back the upstream; once it reads it gets everything, and one ledger record", async () => {
    const url = new URL(`${env.gw.baseURL}/chat/completions`);
    const body = JSON.stringify({ ...chat("openai/gpt-4o-mini", { stream: true }), messages: [{ role: "user", content: "big" }] });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(url, { method: "POST", headers: { "content-type": "application/json", ...auth(undefined, { "x-request-id": "req-push-big" }) } }, resolve);
      req.on("error", reject);
      req.end(body);
    });
    expect(res.statusCode).toBe(200);
    res.pause();
    // Until the upstream stops getting its writes taken (every buffer on the way is full).
    let last = -1;
    while (written !== last) {
      last = written;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(written).toBeLessThan(CHUNKS);
    let contentBytes = 0;
    let rest = "";
    let tail = "";
    res.setEncoding("utf8");
    res.on("data", (d: string) => {
      tail = (tail + d).slice(-32);
      const events = (rest + d).split("\n\n");
      rest = events.pop()!;
      for (const ev of events) {
        if (!ev.startsWith("data: {")) continue;
        const c = JSON.parse(ev.slice(6));
        contentBytes += c.choices[0]?.delta?.content?.length ?? 0;
      }
    });
    res.resume();
    await new Promise((r) => res.on("end", r));
    expect(written).toBe(CHUNKS);
    expect(contentBytes).toBe(CHUNKS * piece.length);
    expect(tail.endsWith("data: [DONE]\n\n")).toBe(true);
    const records = (await env.gw.gateway.store.ledger({})).filter((e) => e.requestId === "req-push-big");
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: "ok", status: 200, outputTokens: REPORTED, estimated: false });
  });

  it("slow streams side by side all end with [DONE], each billed once", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `req-push-slow-${i}`);
    const texts = await Promise.all(ids.map(async (id) => {
      const res = await fetch(`${env.slowGw.baseURL}/chat/completions`, {
        method: "POST", headers: { "content-type": "application/json", ...auth(undefined, { "x-request-id": id }) },
        body: JSON.stringify(chat("openai/gpt-4o-mini", { stream: true, stream_options: { include_usage: true } })),
      });
      return res.text();
    }));
    for (const t of texts) {
      expect(t.endsWith("data: [DONE]\n\n")).toBe(true);
      expect(t).toContain('"usage":{');
      // The words as content (the chunks' ids are random letters and digits, and may hold "w4" too).
      expect(t.match(/"content":" ?w\d+"/g)).toHaveLength(20);
    }
    const ledger = await env.slowGw.gateway.store.ledger({});
    for (const id of ids) expect(ledger.filter((e) => e.requestId === id)).toHaveLength(1);
  });
});
