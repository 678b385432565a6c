// Per-request cost of a stored Responses request's own state work (tinybench, in-process), on ordinary small
// requests: rebuilding the conversation (ids minted for the input items), the conversation bound, serialising the
// record and saving it, on the SQLite and the memory store. Tasks: a first turn (a string input) and a turn continued
// by previous_response_id (a tool result after a 4-item conversation). `npx tsx bench/responses-state.bench.ts
// [OTHER_CHECKOUT]`: given another checkout of the gateway (e.g. `git worktree add /tmp/before HEAD~1`), its same
// tasks are timed in the same run, and each ratio is against its twin there (below 1: this tree is faster). What each
// task saves is read back and checked once before timing, so the bench never times broken code.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { Bench } from "tinybench";

interface Tree { label: string; work: (kind: "sqlite" | "memory", body: any) => Promise<string>; read: (kind: "sqlite" | "memory", id: string) => Promise<any> }

const PREVIOUS = "resp_prev_bench";
const previousRecord = (now: number) => ({
  id: PREVIOUS, project: "acme", createdAt: now, expiresAt: now + 3_600_000, provider: "up", model: "m", native: false, previousResponseId: null,
  input: [
    { id: "msg_1", type: "message", role: "user", content: [{ type: "input_text", text: "What is the weather in Paris and in Lyon?" }] },
  ],
  response: {
    id: PREVIOUS, object: "response", status: "completed",
    output: [{ type: "function_call", id: "fc_1", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: "completed" }],
  },
});

async function load(root: string, label: string): Promise<Tree> {
  const at = (p: string) => import(pathToFileURL(resolve(root, p)).href);
  const { buildConversation } = await at("core/responses/conversation.ts");
  const { checkConversationSize } = await at("core/responses/conversation-limit.ts");
  const { SqliteResponseStore } = await at("core/store/responses-sqlite.ts");
  const { MemoryResponseStore } = await at("core/store/responses-memory.ts");
  // This tree serialises the input in the endpoint (core/endpoints/responses-state.ts); an older one in the store.
  const slices = existsSync(resolve(root, "core/store/responses-slices.ts")) ? await at("core/store/responses-slices.ts") : undefined;
  // This tree looks records up by project and kind of key (core/responses/owner.ts); an older one by project.
  const owner = existsSync(resolve(root, "core/responses/owner.ts")) ? { project: "acme", sandbox: false } : "acme";
  const db = new Database(join(mkdtempSync(join(tmpdir(), "mg-bench-resp-")), "g.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const stores = { sqlite: new SqliteResponseStore(db), memory: new MemoryResponseStore() };
  const now = Date.now();
  for (const s of Object.values(stores)) await s.put(previousRecord(now));
  let n = 0;
  return {
    label,
    async work(kind, body) {
      const store = stores[kind];
      // The memory store drops its oldest records past 50 000: the previous response is put again before that.
      if (++n % 40_000 === 0) await store.put(previousRecord(Date.now()));
      const conv = await buildConversation(store, owner, body, Date.now());
      const inputBytes = await checkConversationSize(conv, true, 32 * 1024 * 1024);
      const id = `resp_${label}_${kind}_${n}`;
      const at = Date.now();
      await store.put({
        id, project: "acme", createdAt: at, expiresAt: at + 3_600_000, provider: "up", model: "m", native: false, previousResponseId: conv.previous?.id ?? null,
        response: { id, object: "response", status: "completed", output: [{ type: "message", id: `msg_out_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "It is 21C in Paris.", annotations: [] }] }] },
        input: conv.items, inputBytes, ...(slices ? { inputJson: await slices.jsonInSlices(conv.items) } : {}),
      });
      return id;
    },
    read: (kind, id) => stores[kind].get(owner, id, Date.now()),
  };
}

const first = { model: "m", input: "What is the weather in Paris?" };
const continued = { model: "m", previous_response_id: PREVIOUS, input: [{ type: "function_call_output", call_id: "call_1", output: "{\"temp_c\":21}" }] };

const trees = [await load(resolve(import.meta.dirname, ".."), "this tree")];
if (process.argv[2]) trees.push(await load(resolve(process.argv[2]), "other"));

for (const tree of trees) {
  for (const kind of ["sqlite", "memory"] as const) {
    const a = await tree.read(kind, await tree.work(kind, first));
    assert.equal(a.input.length, 1);
    assert.match(a.input[0].id, /^msg_[0-9a-f]{24}$/);
    assert.equal(a.input[0].content[0].text, first.input);
    const b = await tree.read(kind, await tree.work(kind, continued));
    assert.deepEqual(b.input.map((i: any) => i.type), ["message", "function_call", "function_call_output"]);
    assert.match(b.input[2].id, /^fco_[0-9a-f]{24}$/);
  }
}

const bench = new Bench({ time: Number(process.env.BENCH_TIME ?? 700), warmup: true });
for (const kind of ["sqlite", "memory"] as const) {
  for (const [name, body] of [["first turn", first], ["continued", continued]] as const) {
    for (const tree of trees) bench.add(`${kind} ${name} (${tree.label})`, async () => void (await tree.work(kind, body)));
  }
}
await bench.run();
for (const t of bench.tasks) if ((t.result as { error?: unknown } | undefined)?.error) throw (t.result as { error: unknown }).error;
type Latency = { p50?: number; mean?: number; rme?: number };
const latency = (name: string) => ((bench.tasks.find((t) => t.name === name)?.result as { latency?: Latency } | undefined)?.latency ?? {}) as Latency;
console.table(bench.tasks.map((t) => {
  const l = latency(t.name);
  const twin = t.name.replace("(this tree)", "(other)");
  return {
    task: t.name,
    "p50 us": Number(((l.p50 ?? NaN) * 1000).toFixed(1)),
    "mean us": Number(((l.mean ?? NaN) * 1000).toFixed(1)),
    "±mean": `${(l.rme ?? NaN).toFixed(1)} %`,
    ...(trees.length > 1 && t.name.endsWith("(this tree)") ? { "p50 vs other": Number(((l.p50 ?? NaN) / (latency(twin).p50 ?? NaN)).toFixed(3)) } : {}),
  };
}));
