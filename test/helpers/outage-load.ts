// Closed-loop load for the store-outage tests and bench/store/outage.ts: N clients each send one request after
// another (chat, JSON and streamed in turn) to one or more gateways, every request with its own x-request-id, and
// keep what happened to each: status, error code, time to answer, whether the whole answer arrived. Meanwhile
// /readyz of the first gateway is polled, so a test can say when readiness went 503 and came back.
import { performance } from "node:perf_hooks";
import { ulid } from "ulid";
import { auth, chat } from "./policy-config.ts";

export interface Sent {
  requestId: string;
  gateway: number;
  stream: boolean;
  status: number;
  /** x-mg-worker: which worker of a `--workers N` gateway answered. */
  worker?: string;
  code?: string;
  retryAfter?: string;
  /** ms from sending to the last byte (or the failure). */
  ms: number;
  /** performance.now() when it was sent and when it ended. */
  at: number;
  end: number;
  /** A 200 whose whole body arrived (JSON completion, or a stream ending with [DONE]). */
  answered: boolean;
}

export interface Readiness {
  at: number;
  status: number;
}

export interface Load {
  sent: Sent[];
  ready: Readiness[];
  /** Stop the clients (each finishes its request in flight) and the readiness poll. */
  stop(): Promise<void>;
  /** Resolves when the clients have sent `max` requests in all (and every answer is in). */
  done: Promise<void>;
}

/**
 * `keys`: client i sends with keys[i % keys.length] (or, with `rotate`, each request with the next key); `models`:
 * request n of client c asks for models[(c + n) % models.length] (default openai/gpt-4o-mini); `max`: stop after
 * this many requests in all.
 */
export function startLoad(bases: string[], o: { clients: number; keys: string[]; readyUrl?: string; pauseMs?: number; models?: string[]; rotate?: boolean; max?: number }): Load {
  const sent: Sent[] = [];
  const ready: Readiness[] = [];
  let stopping = false;
  let issued = 0;
  const one = async (c: number, n: number): Promise<Sent> => {
    const i = issued++;
    const key = o.rotate ? o.keys[i % o.keys.length] : o.keys[c % o.keys.length];
    // Rotating: every key in turn, and each key through every model.
    const model = !o.models ? "openai/gpt-4o-mini" : o.rotate ? o.models[Math.floor(i / o.keys.length) % o.models.length]! : o.models[(c + n) % o.models.length]!;
    const gateway = (c + n) % bases.length;
    const stream = n % 2 === 1;
    const requestId = `req_${ulid()}`;
    const at = performance.now();
    const done = (s: Omit<Sent, "requestId" | "gateway" | "stream" | "at" | "end" | "ms">): Sent => {
      const end = performance.now();
      return { requestId, gateway, stream, at, end, ms: end - at, ...s };
    };
    try {
      const res = await fetch(`${bases[gateway]}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": requestId, ...auth(key) },
        body: JSON.stringify(chat(model, stream ? { stream: true, stream_options: { include_usage: true } } : {})),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      let code: string | undefined;
      if (res.status !== 200) {
        try {
          code = JSON.parse(text).error?.code;
        } catch {
          code = undefined;
        }
      }
      const answered = res.status === 200 && (stream ? text.trimEnd().endsWith("data: [DONE]") : JSON.parse(text).object === "chat.completion");
      return done({ status: res.status, code, retryAfter: res.headers.get("retry-after") ?? undefined, worker: res.headers.get("x-mg-worker") ?? undefined, answered });
    } catch (err) {
      return done({ status: 0, code: (err as Error).name, answered: false });
    }
  };
  const clients = Array.from({ length: o.clients }, async (_, c) => {
    for (let n = 0; !stopping && (o.max === undefined || issued < o.max); n++) {
      sent.push(await one(c, n));
      if (o.pauseMs) await new Promise((r) => setTimeout(r, o.pauseMs));
    }
  });
  const poll = (async () => {
    if (!o.readyUrl) return;
    while (!stopping) {
      const at = performance.now();
      try {
        ready.push({ at, status: (await fetch(o.readyUrl, { signal: AbortSignal.timeout(5000) })).status });
      } catch {
        ready.push({ at, status: 0 });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    sent,
    ready,
    done: Promise.all(clients).then(() => {}),
    async stop() {
      stopping = true;
      await Promise.all([...clients, poll]);
    },
  };
}

/** Requests whose answer arrived but whose record is not in the ledger (request ids), and ids recorded twice. */
export function ledgerGaps(sent: Sent[], ledgerRequestIds: string[]): { lost: string[]; twice: string[] } {
  const count = new Map<string, number>();
  for (const id of ledgerRequestIds) count.set(id, (count.get(id) ?? 0) + 1);
  return {
    lost: sent.filter((s) => s.answered && !count.has(s.requestId)).map((s) => s.requestId),
    twice: [...count].filter(([, n]) => n > 1).map(([id]) => id),
  };
}

/** A short summary of an outage run: what failed, how, how long each took, when readiness and answers came back. */
export function outageReport(load: Load, outage: { from: number; to: number }) {
  const failed = load.sent.filter((s) => s.status !== 200);
  const byStatus: Record<string, number> = {};
  for (const s of failed) byStatus[`${s.status} ${s.code ?? ""}`.trim()] = (byStatus[`${s.status} ${s.code ?? ""}`.trim()] ?? 0) + 1;
  const ms = failed.map((s) => s.ms).sort((a, b) => a - b);
  const q = (p: number) => (ms.length ? Math.round(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!) : 0);
  const during = load.sent.filter((s) => s.end >= outage.from && s.at <= outage.to);
  const firstOkAfter = load.sent.filter((s) => s.status === 200 && s.at >= outage.to).sort((a, b) => a.end - b.end)[0];
  const notReady = load.ready.filter((r) => r.status !== 200 && r.at >= outage.from);
  const readyAgain = load.ready.find((r) => r.status === 200 && r.at >= outage.to && (!notReady.length || r.at > notReady[notReady.length - 1]!.at));
  return {
    requests: load.sent.length,
    duringOutage: during.length,
    answeredDuringOutage: during.filter((s) => s.answered).length,
    failed: failed.length,
    failedByStatus: byStatus,
    failedMs: { p50: q(0.5), p99: q(0.99), max: ms.length ? Math.round(ms[ms.length - 1]!) : 0 },
    slowestMs: Math.round(Math.max(0, ...during.map((s) => s.ms))),
    readinessWent503: notReady.length > 0,
    recoverMs: firstOkAfter ? Math.round(firstOkAfter.end - outage.to) : undefined,
    readyAgainMs: readyAgain ? Math.round(readyAgain.at - outage.to) : undefined,
  };
}
