// A real Prometheus server (Debian's `prometheus` package; scripts/test-deps.sh installs it) on a free loopback
// port, scraping a gateway's /metrics every second, for tests that run PromQL as a dashboard would.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";

/** Where a test gateway serves its Prometheus metrics: the metrics listener of its own. */
export function metricsUrl(gw: { metricsUrl?: string }): string {
  if (!gw.metricsUrl) throw new Error("this gateway serves no metrics listener");
  return gw.metricsUrl;
}

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface TestPrometheus {
  url: string;
  /** An instant query at the present time; throws with Prometheus's own error for a query it refuses. */
  query(expr: string): Promise<PromSample[]>;
  /** Resolves once a scrape that started after this call has been stored. */
  nextScrape(): Promise<void>;
  stop(): Promise<void>;
}

const JOB = "gateway";

export async function startPrometheus(target: string): Promise<TestPrometheus> {
  const bin = process.env.PROMETHEUS ?? "prometheus";
  const t = new URL(target);
  for (let attempt = 0; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), "mg-prometheus-"));
    const port = await freePort();
    writeFileSync(join(dir, "prometheus.yml"), [
      "global: { scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s }",
      "scrape_configs:",
      `  - job_name: ${JOB}`,
      `    metrics_path: ${t.pathname}`,
      `    static_configs: [{ targets: ["${t.host}"] }]`,
      "",
    ].join("\n"));
    const child: ChildProcess = spawn(bin, [
      `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn",
    ], { stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    child.stdout!.on("data", (d) => (log += d));
    child.stderr!.on("data", (d) => (log += d));
    const spawnError = new Promise<Error>((r) => child.once("error", r));
    const url = `http://127.0.0.1:${port}`;
    const ready = await Promise.race([waitReady(url, child), spawnError]);
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    };
    if (ready === true) {
      const query = async (expr: string): Promise<PromSample[]> => {
        const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr, time: String(Date.now() / 1000) })}`, { signal: AbortSignal.timeout(10_000) });
        const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
        if (body.status !== "success") throw new Error(`Prometheus refused ${expr}: ${body.error}`);
        if (body.data!.resultType !== "vector") return [{ metric: {}, value: Number((body.data!.result as unknown as [number, string])[1]) }];
        return body.data!.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
      };
      const lastScrape = async () => (await query(`timestamp(up{job="${JOB}"})`))[0]?.value ?? 0;
      return {
        url,
        query,
        async nextScrape() {
          const after = Date.now() / 1000;
          for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
            if ((await lastScrape()) > after) return;
          }
          throw new Error(`Prometheus did not scrape ${target} within 15 s:\n${log}`);
        },
        stop,
      };
    }
    await stop();
    if (ready instanceof Error) throw new Error(`cannot start ${bin} (install Debian's prometheus package: bash scripts/test-deps.sh): ${ready.message}`);
    if (attempt >= 2) throw new Error(`prometheus did not start on port ${port}:\n${log}`);
  }
}

async function waitReady(url: string, child: ChildProcess): Promise<boolean> {
  for (let i = 0; i < 150 && child.exitCode === null; i++) {
    try {
      if ((await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) })).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
