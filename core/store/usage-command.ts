// `model-gateway usage [--config F] [--project P] [--since 2026-11-01 | 7d | 24h] [--json]`: spend and tokens per
// project and model, summed from the ledger of the configured store (SQLite file or Redis).
import { parseArgs } from "node:util";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import Big from "big.js";
import { loadConfig } from "../config/load.ts";
import { ConfigError, formatProblem } from "../config/source.ts";
import { createStore } from "./index.ts";
import { packageRoot } from "../package-root.ts";
import type { LedgerEntry } from "./types.ts";

export interface UsageRow {
  project: string;
  model: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: string;
}

/** "2026-11-01", an ISO timestamp, or a relative "30m", "24h", "7d" -> ms since the epoch. */
export function parseSince(s: string, now = Date.now()): number {
  const rel = /^(\d+)([mhdw])$/.exec(s.trim());
  if (rel) return now - Number(rel[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as "m" | "h" | "d" | "w"];
  const t = Date.parse(s);
  if (!Number.isFinite(t)) throw new Error(`--since ${s}: expected a date (2026-11-01), a timestamp, or 30m / 24h / 7d`);
  return t;
}

/** MCP tool calls (core/mcp/tool-call.ts) are rows of their own, named `mcp:server/tool`; bytes are their size. */
const TOOL_CALLS = new Set(["mcp_tool", "responses_mcp_tool"]);

export function summarize(entries: LedgerEntry[]): UsageRow[] {
  const rows = new Map<string, UsageRow & { cost: Big }>();
  for (const e of entries) {
    const model = TOOL_CALLS.has(e.endpoint) ? `mcp:${e.provider}/${e.model}` : e.model;
    const k = `${e.project}\n${model}`;
    let r = rows.get(k);
    if (!r) rows.set(k, (r = { project: e.project, model, requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: "0", cost: new Big(0) }));
    r.requests++;
    r.inputTokens += e.inputTokens;
    r.outputTokens += e.outputTokens;
    r.cacheReadTokens += e.cacheReadTokens;
    r.cacheWriteTokens += e.cacheWriteTokens;
    r.cost = r.cost.plus(e.costUsd);
  }
  return [...rows.values()]
    .sort((a, b) => a.project.localeCompare(b.project) || a.model.localeCompare(b.model))
    .map(({ cost, ...r }) => ({ ...r, costUsd: cost.toFixed() }));
}

function table(rows: UsageRow[]): string {
  const head = ["project", "model", "requests", "input", "output", "cache_read", "cache_write", "cost_usd"];
  const body = rows.map((r) => [r.project, r.model, r.requests, r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWriteTokens, r.costUsd].map(String));
  const total = rows.reduce((s, r) => s.plus(r.costUsd), new Big(0));
  body.push(["total", "", String(rows.reduce((s, r) => s + r.requests, 0)), "", "", "", "", total.toFixed()]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [line(head), ...body.map(line)].join("\n") + "\n";
}

function defaultConfig(): string {
  const local = resolve("gateway.yaml");
  return existsSync(local) ? local : join(packageRoot(), "gateway.yaml");
}

export async function usageCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { config: { type: "string", short: "c" }, project: { type: "string", short: "p" }, since: { type: "string" }, json: { type: "boolean" } },
  });
  let since: number | undefined;
  try {
    since = values.since ? parseSince(values.since) : undefined;
  } catch (err) {
    process.stderr.write(`usage: ${(err as Error).message}\n`);
    return 1;
  }
  const file = values.config ?? defaultConfig();
  let config;
  try {
    config = await loadConfig(file, { onNotice: () => {} });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${file} has problems\n${err.problems.map(formatProblem).join("\n")}\n`);
      return 1;
    }
    throw err;
  }
  if (config.store.kind === "memory") {
    process.stderr.write(`usage: ${file} uses store kind memory; its ledger lives only inside the running gateway\n`);
    return 1;
  }
  const store = await createStore(config.store, config.dir);
  try {
    const rows = summarize(await store.ledger({ project: values.project, since }));
    process.stdout.write(values.json ? JSON.stringify(rows, null, 2) + "\n" : table(rows));
    return 0;
  } finally {
    await store.close();
  }
}
