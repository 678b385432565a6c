// A third-party plugin declared under plugins: runs only where pipeline: lists it (the default pipeline has only
// built-ins): one left out is loaded and never run, so each load says so — a note from `model-gateway check`, a log
// line at start and at each reload — naming it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commands } from "../core/cli.ts";
import { startGateway, type RunningGateway } from "../core/server.ts";
import { captureLogger } from "./helpers/log-capture.ts";
import { writePluginConfig } from "./helpers/plugin-config.ts";

const TAGGER = resolve(fileURLToPath(new URL("../docs/examples/request-tagger.ts", import.meta.url)));
const LEFT_OUT = 'plugin "request-tagger" is declared under plugins: but never runs: pipeline: does not list it (add it to pipeline:)';
const NO_PIPELINE = 'plugin "request-tagger" is declared under plugins: but never runs: there is no pipeline: and the default one runs only built-in plugins (add it to pipeline:)';

const write = (file: string, pipeline?: string[]) =>
  writePluginConfig(file, { "request-tagger": { module: TAGGER, options: { header: "x-team", value: "search" } } }, pipeline);
const fresh = () => join(mkdtempSync(join(tmpdir(), "mg-unused-plugin-")), "gateway.yaml");

let running: RunningGateway | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await running?.close();
  running = undefined;
});

describe("a declared plugin the pipeline leaves out", () => {
  it("is a note of model-gateway check (which still passes)", async () => {
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((s) => (err.push(String(s)), true));
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(await commands.check!([write(fresh(), ["auth", "router", "stream-transcoder", "usage-metering"])])).toBe(0);
    expect(err).toEqual([`note: ${LEFT_OUT}\n`]);
  });

  it("is logged at start and at each reload, also without pipeline:, and no more once the pipeline lists it", async () => {
    const file = write(fresh(), ["auth", "router", "stream-transcoder", "usage-metering"]);
    const { logger, log } = captureLogger("info");
    running = await startGateway({ configFile: file, port: 0, host: "127.0.0.1", logger });
    const said = (m: string) => log.records().filter((r) => r.msg === m).length;
    expect(said(LEFT_OUT)).toBe(1);
    expect((await running.gateway.reload(write(file))).ok).toBe(true);
    expect(said(NO_PIPELINE)).toBe(1);
    expect((await running.gateway.reload(write(file, ["auth", "request-tagger", "router", "stream-transcoder", "usage-metering"]))).ok).toBe(true);
    expect([said(LEFT_OUT), said(NO_PIPELINE)]).toEqual([1, 1]);
    expect(log.records().filter((r) => String(r.msg).includes("request-tagger"))).toHaveLength(2);
  });
});
