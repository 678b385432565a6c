// A gateway whose every log line (pino JSON) is captured in memory, for tests that read the logs.
import { Writable } from "node:stream";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { createLogger, type LogLevel } from "../../core/log.ts";
import { startGateway, type RunningGateway } from "../../core/server.ts";

export interface CapturedLog {
  /** Raw lines as written. */
  lines: string[];
  /** Parsed lines. */
  records(): Array<Record<string, any>>;
  /** Access log lines (msg "request"). */
  access(): Array<Record<string, any>>;
  /**
   * The access lines that match, once there are at least `count` of them (up to 5 s). A line is written when its
   * request has finished, after its ledger record is durable, which can be a little after the client has its answer.
   */
  accessOnce(match: (line: Record<string, any>) => boolean, count: number): Promise<Array<Record<string, any>>>;
}

export function captureLogger(level: LogLevel = "debug") {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l) lines.push(l);
      done();
    },
  });
  const logger = createLogger({ level }, sink);
  const access = () => lines.map((l) => JSON.parse(l)).filter((r) => r.msg === "request");
  const log: CapturedLog = {
    lines,
    records: () => lines.map((l) => JSON.parse(l)),
    access,
    async accessOnce(match, count) {
      const until = Date.now() + 5000;
      for (;;) {
        const found = access().filter(match);
        if (found.length >= count || Date.now() > until) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
  return { logger, log };
}

export async function startLoggedGateway(config: Record<string, unknown>, env: Record<string, string> = {}, level: LogLevel = "debug") {
  const dir = mkdtempSync(join(tmpdir(), "mg-log-"));
  const configFile = join(dir, "gateway.yaml");
  writeFileSync(configFile, YAML.stringify(config));
  const { logger, log } = captureLogger(level);
  const gw: RunningGateway = await startGateway({ configFile, port: 0, host: "127.0.0.1", metricsPort: 0, logger, env: { ...process.env, ...env } });
  return { gw, log, baseURL: `${gw.url}/api/v1`, dir };
}
