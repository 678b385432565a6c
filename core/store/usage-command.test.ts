import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonLines, nameToolCalls, parseRange, parseSince, printable, queriedDimensions, table, usageCommand } from "./usage-command.ts";
import { SqliteStore } from "./sqlite.ts";
import type { LedgerEntry } from "./ledger-entry.ts";
import type { UsageRow } from "../contracts/ledger-reader.ts";

afterEach(() => { vi.restoreAllMocks(); });

/** The command run in this process: its exit code and what it wrote on stdout and stderr. */
async function runUsage(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "", err = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => { out += String(chunk); return true; });
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => { err += String(chunk); return true; });
  const code = await usageCommand(argv);
  vi.restoreAllMocks();
  return { code, out, err };
}

/** A gateway.yaml whose SQLite ledger holds key "ci" of project tenant-a (3 requests, $3) and of tenant-b (2, $2). */
async function twoProjectsOneKeyId(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "mg-usage-cmd-"));
  const store = new SqliteStore(join(dir, "ledger.db"));
  const ts = Date.UTC(2026, 10, 20, 9);
  const entry = (i: number, project: string): LedgerEntry => ({
    generationId: `gen_${i}`, requestId: `req_${i}`, ts: ts + i * 60_000, keyId: "ci", project, endpoint: "chat", model: "m/a", provider: "p1",
    attempts: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0,
    searchUnits: 0, costUsd: "1", costPico: 1_000_000_000_000n, latencyMs: 5, ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
  });
  for (const [i, project] of ["tenant-a", "tenant-a", "tenant-a", "tenant-b", "tenant-b"].entries()) await store.record(entry(i, project));
  await store.close();
  const file = join(dir, "gateway.yaml");
  writeFileSync(file, "store: { kind: sqlite, path: ./ledger.db }\n");
  return file;
}

const row = (group: UsageRow["group"], costUsd: string, requests: number, bucketStart?: number): UsageRow => ({
  ...(bucketStart === undefined ? {} : { bucketStart }), group, requests, errors: 1, inputTokens: requests * 10, outputTokens: requests * 20,
  cacheReadTokens: 1, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd, costPico: 0n,
});

describe("usage command", () => {
  it("prints the reader's rows with their dimensions flattened, buckets as ISO times, and a total line", () => {
    const rows = printable([row({ project: "a", model: "m1" }, "0.0000001", 4), row({ project: "b", model: "m1" }, "0.3", 2)]);
    expect(rows[0]).toEqual({ project: "a", model: "m1", requests: 4, errors: 1, inputTokens: 40, outputTokens: 80, cacheReadTokens: 1, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: "0.0000001" });
    const text = table(rows, ["project", "model"], false).split("\n");
    expect(text[0]).toMatch(/^project\s+model\s+requests\s+errors\s+input\s+output\s+cache_read\s+cache_write\s+cost_usd$/);
    expect(text[3]).toMatch(/^total\s+6\s+2\s+0\.3000001$/);
    const byDay = printable([row({ model: "m1" }, "1", 1, Date.UTC(2026, 10, 20))]);
    expect(byDay[0]!.bucket).toBe("2026-11-20T00:00:00.000Z");
    expect(table(byDay, ["model"], true)).toMatch(/^bucket\s+model\s+requests/);
  });

  it("prints a month of hourly rows by key and model (144,000 rows and more), where the table overflowed the stack", () => {
    const hour = Date.UTC(2026, 9, 29);
    const rows = printable(Array.from({ length: 200_000 }, (_, i) => row({ project: "demo", key: `key${i % 100}`, model: "m1" }, "0.001", 3, hour + Math.floor(i / 100) * 3_600_000)));
    const text = table(rows, ["project", "key", "model"], true).split("\n");
    expect(text.length).toBe(200_003); // head, rows, total, and the last newline
    expect(text[200_001]).toMatch(/^total\s+600000\s+200000\s+200$/);
  });

  it("--json is the rows as JSON, written a row at a time", () => {
    const rows = printable([row({ project: "a", model: "m\n1" }, "0.1", 4), row({ project: "b", model: "m1" }, "0.3", 2, Date.UTC(2026, 10, 20))]);
    expect([...jsonLines(rows)].join("")).toBe(JSON.stringify(rows, null, 2) + "\n");
    expect([...jsonLines([])].join("")).toBe("[]\n");
  });

  it("MCP tool calls are rows of their own, named mcp:server/tool, counted as requests", () => {
    const call = (tool: string, endpoint = "mcp_tool") => row({ project: "a", model: tool, endpoint, provider: "docs" }, "0", 1);
    const q = { since: 0, until: 3_600_000, bucket: "none" as const };
    expect(queriedDimensions(["project", "model"])).toEqual(["project", "model", "endpoint", "provider"]);
    const rows = nameToolCalls([call("search"), call("search", "responses_mcp_tool"), call("fetch"),
      { ...row({ project: "a", model: "search", endpoint: "chat", provider: "openai" }, "0.1", 1), costPico: 100_000_000_000n }], q, ["project", "model"]);
    expect(rows.map((r) => [r.group.model, r.requests, r.inputTokens, r.costUsd])).toEqual([
      ["mcp:docs/fetch", 1, 10, "0"],
      ["mcp:docs/search", 2, 20, "0"],
      ["search", 1, 10, "0.1"],
    ]);
  });

  it("--since takes dates, timestamps and relative spans", () => {
    const now = Date.parse("2026-11-21T12:00:00Z");
    expect(parseSince("2026-11-01", now)).toBe(Date.parse("2026-11-01T00:00:00Z"));
    expect(parseSince("24h", now)).toBe(now - 86_400_000);
    expect(parseSince("7d", now)).toBe(now - 7 * 86_400_000);
    expect(parseSince("30m", now)).toBe(now - 1_800_000);
    expect(() => parseSince("yesterday", now)).toThrow(/--since yesterday/);
    expect(() => parseSince("later", now, "--until")).toThrow(/--until later/);
  });

  it("refuses a reversed or empty --since/--until range, naming both, instead of summing nothing", () => {
    const now = Date.parse("2026-11-21T12:00:00Z");
    expect(() => parseRange("2026-11-01", "2026-10-01", now))
      .toThrow("--since 2026-11-01 (2026-11-01T00:00:00.000Z) is not before --until 2026-10-01 (2026-10-01T00:00:00.000Z): the range is empty");
    expect(() => parseRange("2026-11-01", "2026-11-01", now)).toThrow(/is not before --until 2026-11-01/);
    expect(() => parseRange("2027-01-01", undefined, now)).toThrow("--since 2027-01-01 (2027-01-01T00:00:00.000Z) is not before the default --until, an hour from now (2026-11-21T13:00:00.000Z): the range is empty");
    expect(parseRange("2026-10-01", "2026-11-01", now)).toEqual({ since: Date.parse("2026-10-01"), until: Date.parse("2026-11-01") });
    expect(parseRange(undefined, undefined, now)).toEqual({ since: 0, until: now + 3_600_000 });
  });

  it("--group-by key prints one row per project and key: the same key id in two projects is two rows, each naming its project", async () => {
    const file = await twoProjectsOneKeyId();
    const range = ["--since", "2026-11-20", "--until", "2026-11-21"];
    const json = await runUsage(["--config", file, "--group-by", "key", "--json", ...range]);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.out) as { project?: string; key: string; requests: number; costUsd: string }[]).map((r) => [r.project, r.key, r.requests, r.costUsd]))
      .toEqual([["tenant-a", "ci", 3, "3"], ["tenant-b", "ci", 2, "2"]]);
    const text = (await runUsage(["--config", file, "--group-by", "key", ...range])).out.split("\n");
    expect(text[0]).toMatch(/^project\s+key\s+requests\s/);
    expect(text[1]).toMatch(/^tenant-a\s+ci\s+3\s+0\s+30\s+15\s+0\s+0\s+3$/);
    expect(text[2]).toMatch(/^tenant-b\s+ci\s+2\s+0\s+20\s+10\s+0\s+0\s+2$/);
  });

  it("--since/--until inside an hour sum whole hours, and say so: the range summed on stderr, or with --json last in each row and nothing on stderr", async () => {
    const file = await twoProjectsOneKeyId(); // five records 09:00-09:04 UTC, 2026-11-20
    const json = await runUsage(["--config", file, "--json", "--group-by", "project", "--since", "2026-11-20T09:30:00Z", "--until", "2026-11-20T09:45:00Z"]);
    expect(json.code).toBe(0);
    // The records before 09:30 are summed: the hour 09:00-10:00 is what the rollups hold.
    const rows = JSON.parse(json.out) as { project: string; requests: number; since: string; until: string }[];
    expect(rows.map((r) => [r.project, r.requests, r.since, r.until]))
      .toEqual([["tenant-a", 3, "2026-11-20T09:00:00.000Z", "2026-11-20T10:00:00.000Z"], ["tenant-b", 2, "2026-11-20T09:00:00.000Z", "2026-11-20T10:00:00.000Z"]]);
    // The range comes after the fields the rows had before it (scripts reading values by position keep working), and
    // with --json the rows say it, so stderr stays empty (a `2>&1 | jq` still reads JSON).
    expect(Object.keys(rows[0]!).slice(0, 2)).toEqual(["project", "requests"]);
    expect(Object.keys(rows[0]!).slice(-2)).toEqual(["since", "until"]);
    expect(json.err).toBe("");
    const table = await runUsage(["--config", file, "--group-by", "project", "--since", "2026-11-20T09:30:00Z", "--until", "2026-11-20T09:45:00Z"]);
    expect(table.err).toBe("usage: summing whole hours, 2026-11-20T09:00:00.000Z to 2026-11-20T10:00:00.000Z (the ledger's usage is kept per hour; asked for 2026-11-20T09:30:00.000Z to 2026-11-20T09:45:00.000Z)\n");
    // Whole hours given: nothing widened, nothing said.
    const whole = await runUsage(["--config", file, "--group-by", "project", "--since", "2026-11-20", "--until", "2026-11-21"]);
    expect(whole.code).toBe(0);
    expect(whole.err).toBe("");
  });
});
