// The gateway under test, as its own process: `--config FILE` (a gateway.yaml). Prints `READY {"port":N}`.
// Runs exactly what `model-gateway start` runs (startGateway), minus file watching and the banner.
import { parseArgs } from "node:util";
import { startGateway } from "../../core/server.ts";
import { createLogger } from "../../core/log.ts";

const { values } = parseArgs({ options: { config: { type: "string" } } });
if (!values.config) throw new Error("--config FILE is required");
const gw = await startGateway({
  configFile: values.config,
  port: 0,
  host: "127.0.0.1",
  watch: false,
  // MG_BENCH_LOG=config: the gateway.yaml's own `log:` section (access-log cost runs); otherwise warn, no access lines.
  logger: process.env.MG_BENCH_LOG === "config" ? undefined : createLogger((process.env.LOG_LEVEL as never) || "warn"),
});
process.stdout.write(`READY ${JSON.stringify({ port: gw.port })}\n`);
// Exit through close() so --cpu-prof (passed with --node-args) gets written.
const stop = () => {
  setTimeout(() => process.exit(0), 3000).unref();
  void gw.close().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
