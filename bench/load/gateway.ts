// The gateway under test, as its own process: `--config FILE` (a gateway.yaml). Prints `READY {"port":N,"metricsPort":M}`
// (the metrics listener on any free port).
// Runs exactly what `model-gateway start` runs (startGateway), minus file watching and the banner.
// `--workers N` (N > 1): a node:cluster primary with N such gateways behind one port, as `start --workers N` runs
// (core/cluster.ts); READY then also lists every process id (`pids`: primary first) so CPU time covers them all.
import cluster from "node:cluster";
import { parseArgs } from "node:util";
import { createLogger } from "../../core/log.ts";
import { isWorker, parseWorkers, runPrimary, serveAsWorker } from "../../core/cluster.ts";

const { values } = parseArgs({ options: { config: { type: "string" }, workers: { type: "string" } } });
if (!values.config) throw new Error("--config FILE is required");
const workers = parseWorkers(values.workers);
// MG_BENCH_LOG=config: the gateway.yaml's own `log:` section (access-log cost runs); otherwise warn, no access lines.
const logger = () => (process.env.MG_BENCH_LOG === "config" ? undefined : createLogger((process.env.LOG_LEVEL as never) || "warn"));

if (workers > 1 && cluster.isPrimary) {
  const code = await runPrimary({
    workers,
    log: createLogger((process.env.LOG_LEVEL as never) || "warn"),
    onReady: ({ port, metricsUrl, pids }) => process.stdout.write(`READY ${JSON.stringify({ port, metricsPort: metricsUrl ? Number(new URL(metricsUrl).port) : undefined, pids: [process.pid, ...pids] })}\n`),
  });
  process.exit(code);
} else {
  // Imported here, not above: the primary only forks (as `start --workers N`'s does), so it stays small when bundled.
  const { startGateway } = await import("../../core/server.ts");
  const gw = await startGateway({ configFile: values.config, port: 0, host: "127.0.0.1", metricsPort: 0, watch: false, logger: logger() });
  // Exit through close() so --cpu-prof (passed with --node-args) gets written.
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 3000).unref();
    void gw.close().finally(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  if (isWorker()) serveAsWorker(gw, stop);
  else process.stdout.write(`READY ${JSON.stringify({ port: gw.port, metricsPort: gw.metricsUrl ? Number(new URL(gw.metricsUrl).port) : undefined })}\n`);
}
