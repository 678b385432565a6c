// What the operator console costs the gateway apart from the load run (bench:load --console): the CPU of one minute
// of its two tabs' polling (overview and request tail: 39 admin API calls) against a ledger of N records, and of one
// reading of the live-traffic sampler on a gateway with many series. In-process, on the sources (through tsx), the
// client's CPU counted too: an upper bound. Run: npx tsx bench/console/polling.ts [memory|sqlite] [records]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, postJson } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, KEY, policyConfig } from "../../test/helpers/policy-config.ts";
import { sha256Hex } from "../../core/keys/keys.ts";
import { Metrics } from "../../core/metrics.ts";
import { TrafficSampler } from "../../core/admin/traffic-sampler.ts";

const ADMIN = "mg_admin_bench_console_polling_01";
const kind = process.argv[2] ?? "memory";
const records = Number(process.argv[3] ?? 5000);

/** One minute of the two tabs: traffic and the request tail every 5 s, three usage tiles every 15 s, ledger charts every 30 s. */
const MINUTE = [
  ...Array(12).fill("/traffic?after=1"),
  ...Array(4).fill(["/usage?since=1h", "/usage?since=24h", "/usage?since=30d"]).flat(),
  ...Array(2).fill("/usage?since=24h&bucket=hour"),
  ...Array(12).fill("/requests?since=24h&limit=100"),
  "/config/loaded",
] as string[];

async function polling(): Promise<void> {
  const fake = await startFakeOpenAI();
  const store = kind === "sqlite" ? { kind, path: join(mkdtempSync(join(tmpdir(), "mg-console-bench-")), "gw.db") } : { kind: "memory" };
  const gw = await startTestGateway({ ...policyConfig(fake.baseUrl, { store }), admin_keys: [{ id: "bench", sha256: sha256Hex(ADMIN), scope: "read" }] });
  try {
    for (let i = 0; i < records; i += 50) await Promise.all(Array.from({ length: 50 }, () => postJson(`${gw.url}/api/v1/chat/completions`, chat(), auth(KEY))));
    const get = async (p: string) => {
      const r = await fetch(`${gw.url}/admin/v1${p}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      if (r.status !== 200) throw new Error(`${p}: HTTP ${r.status}`);
      await r.arrayBuffer();
    };
    for (const p of MINUTE) await get(p); // warm up
    const rounds = 10;
    const c0 = process.cpuUsage();
    for (let r = 0; r < rounds; r++) for (const p of MINUTE) await get(p);
    const c = process.cpuUsage(c0);
    const perMinute = (c.user + c.system) / 1000 / rounds;
    process.stdout.write(`${kind} store, ${records} records: one minute of polling (${MINUTE.length} calls) = ${perMinute.toFixed(1)} ms CPU ` +
      `(${(perMinute / 600).toFixed(3)} % of one core), ${(perMinute / MINUTE.length).toFixed(2)} ms per call\n`);
  } finally {
    await gw.close();
    await fake.close();
  }
}

async function sampler(): Promise<void> {
  // 40 models x 3 providers x 4 endpoints x 5 status codes: 2 400 request series, 480 histogram label sets.
  const m = new Metrics();
  for (let a = 0; a < 40; a++) for (const p of ["p1", "p2", "p3"]) for (const e of ["chat", "messages", "responses", "embeddings"]) {
    for (const code of ["200", "400", "429", "500", "502"]) m.requests.add(5, e, `m${a}`, p, code);
    m.duration.observe({ endpoint: e, model: `m${a}`, provider: p }, 0.1);
    m.ttfb.observe({ endpoint: e, model: `m${a}`, provider: p }, 0.05);
    m.tokens.add(10, "input", `m${a}`, p);
  }
  const s = new TrafficSampler(m);
  await s.sample();
  const c0 = process.cpuUsage();
  for (let i = 0; i < 100; i++) await s.sample();
  const c = process.cpuUsage(c0);
  process.stdout.write(`sampler, 2 400 series: one reading (every 10 s) = ${((c.user + c.system) / 1000 / 100).toFixed(2)} ms CPU\n`);
}

await polling();
await sampler();
