// Property-based fuzzing of every POST endpoint (issue 10) against the gateway as a separate process in the shipped
// shape (SQLite, full default pipeline, live key): bodies invalid by construction (test/helpers/fuzz-bodies.ts) are
// sent in concurrent batches over keep-alive connections. Every answer is a 4xx — never a 5xx — in the endpoint's
// error envelope with an X-Request-Id, no invalid body reaches an upstream, and afterwards the same process answers
// a valid request. FUZZ_RUNS sets the bodies per endpoint (default 2000; `FUZZ_RUNS=10000` for a long run).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { Agent, request } from "undici";
import {
  validateChatCompletions, validateEmbeddings, validateImages, validateMessages, validateRerank, validateVideos,
} from "../core/generated/validators.js";
import { ABUSE_KEY, alive, startAbuseGateway, validChat, type AbuseGateway } from "./helpers/abuse-gateway.ts";
import { invalidBodies, PATHS, VALID, type Endpoint, type FuzzBody } from "./helpers/fuzz-bodies.ts";
import { exchange, head } from "./helpers/raw-http.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const BATCH = 16;
const VALIDATORS = {
  chat: validateChatCompletions, messages: validateMessages, embeddings: validateEmbeddings,
  rerank: validateRerank, images: validateImages, videos: validateVideos,
} as const;

let gw: AbuseGateway;
let agent: Agent;
beforeAll(async () => {
  gw = await startAbuseGateway();
  agent = new Agent({ connections: BATCH, keepAliveTimeout: 4000 });
}, 30_000);
afterAll(async () => {
  await agent?.close();
  await gw?.close();
});

interface Answer {
  status: number;
  requestId: string | undefined;
  contentType: string | undefined;
  text: string;
}

async function send(endpoint: Endpoint, body: FuzzBody): Promise<Answer> {
  const payload = "json" in body ? JSON.stringify(body.json) : Buffer.from(body.raw);
  const res = await request(`${gw.baseURL}${PATHS[endpoint]}`, {
    method: "POST",
    dispatcher: agent,
    headers: { authorization: `Bearer ${ABUSE_KEY}`, "content-type": "application/json" },
    body: payload,
  });
  const header = (name: string) => {
    const v = res.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  return { status: res.statusCode, requestId: header("x-request-id"), contentType: header("content-type"), text: await res.body.text() };
}

/** The spec's envelope; Anthropic's `{type:"error", error:{type, ...}}` on /messages. */
function envelopeProblem(endpoint: Endpoint, a: Answer): string | undefined {
  if (a.status < 400 || a.status >= 500) return `status ${a.status}`;
  if (!a.requestId) return "no x-request-id";
  if (!/^application\/json/.test(a.contentType ?? "")) return `content-type ${a.contentType}`;
  let json: any;
  try {
    json = JSON.parse(a.text);
  } catch {
    return "body is not JSON";
  }
  const e = json?.error;
  if (typeof e?.code !== "string" || typeof e?.message !== "string" || !e.message) return "no error.code / error.message";
  if (endpoint === "messages" && (json.type !== "error" || typeof e.type !== "string")) return "not Anthropic's error shape";
  return undefined;
}

describe("fuzz: invalid bodies on every POST endpoint", () => {
  let sent = 0;
  let upstreamBefore = 0;
  beforeAll(() => {
    upstreamBefore = gw.upstreamCalls();
  });

  // Issue 10's sequence on one process: a 50 MiB chunked body (which used to kill it after its 413), then the fuzz.
  it("first, a 50 MiB chunked body gets its 413", async () => {
    const x = await exchange(gw.port, async (w) => {
      await w.write(head("POST", `/api/v1${PATHS.chat}`, { host: "gw", authorization: `Bearer ${ABUSE_KEY}`, "content-type": "application/json", "transfer-encoding": "chunked" }));
      const chunk = Buffer.alloc(64 * 1024, "a");
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
      for (let n = 0; n < 50 * 1024 * 1024; n += chunk.length) if (!(await w.write(frame))) return;
      await w.write("0\r\n\r\n");
    }, { waitMs: 1000 });
    expect(x.responses[0]?.status).toBe(413);
    expect(alive(gw)).toBe(true);
  });

  // The generators break a rule of the spec each; the schemas must agree (a hole in a schema fails here too).
  it.each(Object.keys(PATHS) as Endpoint[])("%s: the base body passes the schema, every generated JSON body fails it", (endpoint) => {
    expect(VALIDATORS[endpoint](VALID[endpoint])).toBe(true);
    fc.assert(fc.property(invalidBodies(endpoint), (b) => !("json" in b) || VALIDATORS[endpoint](b.json) === false), { numRuns: RUNS });
  });

  it.each(Object.keys(PATHS) as Endpoint[])("%s: a 4xx in the envelope with X-Request-Id, never a 5xx, never an upstream call", async (endpoint) => {
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(fc.array(invalidBodies(endpoint), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const answers = await Promise.all(batch.map((b) => send(endpoint, b)));
        for (const a of answers) {
          sent++;
          const problem = envelopeProblem(endpoint, a);
          if (problem) throw new Error(`${problem}: ${a.status} ${a.text.slice(0, 300)}`);
        }
      }),
      { numRuns: Math.ceil(RUNS / BATCH), endOnFailure: false },
    );
    // Visible in the CI log: how many bodies and how long, per endpoint.
    console.log(`fuzz ${endpoint}: ${Math.ceil(RUNS / BATCH) * BATCH} bodies in ${Math.round(performance.now() - started)} ms`);
    expect(alive(gw)).toBe(true);
  }, 120_000);

  it("no invalid body reached an upstream, and the same process answers a valid request afterwards", async () => {
    expect(sent).toBeGreaterThanOrEqual(6 * RUNS);
    expect(gw.upstreamCalls() - upstreamBefore).toBe(0);
    expect(alive(gw)).toBe(true);
    const res = await validChat(gw);
    expect(res.status).toBe(200);
    expect(res.upstreamDelta).toBe(1);
    expect(gw.output()).not.toMatch(/uncaught|unhandled|TypeError|RangeError|request failed/i);
  });
});
