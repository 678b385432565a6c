// A JSON body that starts with a UTF-8 BOM (PowerShell's -InFile of a file Notepad saved) is read as the JSON after
// it (RFC 8259 §8.1 lets a parser ignore it), on every endpoint that reads JSON: it was a 400 "not valid JSON:
// Unexpected token" naming a character the client cannot see.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway } from "./helpers/log-capture.ts";
import { exchange, head, type RawResponse } from "./helpers/raw-http.ts";
import type { RunningGateway } from "../core/server.ts";

const SANDBOX = testKey("json-bom-sb", true);
let gw: RunningGateway;

beforeAll(async () => {
  ({ gw } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { up: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-never-called" } },
    models: {
      "test/m": { type: "language", endpoints: [{ provider: "up", model: "m" }] },
      "test/e": { type: "embedding", endpoints: [{ provider: "up", model: "e" }] },
    },
    projects: { p: { keys: [keyEntry("sb", SANDBOX)] } },
  }));
});
afterAll(async () => {
  await gw?.close();
});

/** Sends `raw` on a fresh connection; the one answer the server gives before it closes. */
async function send(raw: Buffer): Promise<RawResponse> {
  const x = await exchange(gw.port, async (w) => void (await w.write(raw)), { waitMs: 10_000 });
  expect(x.responses, x.data.toString("latin1").slice(0, 300)).toHaveLength(1);
  return x.responses[0]!;
}

describe("a JSON body that starts with a UTF-8 BOM", () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  const post = (path: string, body: unknown, headers: Record<string, string>) => {
    const bytes = Buffer.concat([BOM, Buffer.from(JSON.stringify(body))]);
    return send(Buffer.concat([Buffer.from(head("POST", path, { host: "gw", "content-type": "application/json", "content-length": bytes.length, connection: "close", ...headers })), bytes]));
  };

  it("chat completions: 200", async () => {
    const r = await post("/api/v1/chat/completions", { model: "test/m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${SANDBOX}` });
    expect(r.status, r.body).toBe(200);
    expect(r.json.object).toBe("chat.completion");
  });

  it("messages: 200", async () => {
    const r = await post("/api/v1/messages", { model: "test/m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": SANDBOX });
    expect(r.status, r.body).toBe(200);
    expect(r.json.type).toBe("message");
  });

  it("embeddings: 200", async () => {
    const r = await post("/api/v1/embeddings", { model: "test/e", input: "hi" }, { authorization: `Bearer ${SANDBOX}` });
    expect(r.status, r.body).toBe(200);
    expect(r.json.data).toHaveLength(1);
  });
});
