// A provider switched off because its variable is unset is named when the gateway starts, and again on a reload only
// when that changed: every reload used to repeat the line for every such provider (14 with the shipped file, once
// per worker), burying the reload's own lines.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("disablednote");
const config = (providers: Record<string, unknown>) => ({
  providers: { sim: { protocol: "sim" }, ...providers },
  projects: { p: { keys: [keyEntry("k", KEY)] } },
});
const keyed = (variable: string) => ({ protocol: "openai", base_url: "https://api.example.com/v1", api_key: `\${${variable}}` });

let gw: RunningGateway;
let log: CapturedLog;
let file: string;
const disabledLines = () => log.records().filter((r) => /^provider ".*" disabled: /.test(r.msg)).map((r) => r.msg as string);

async function reloadTo(providers: Record<string, unknown>) {
  const before = log.lines.length;
  writeFileSync(file, YAML.stringify(config(providers)));
  expect((await gw.gateway.reload(file)).ok).toBe(true);
  return log.lines.slice(before).map((l) => JSON.parse(l).msg as string).filter((m) => /^provider ".*" disabled: /.test(m));
}

beforeAll(async () => {
  let dir: string;
  ({ gw, log, dir } = await startLoggedGateway(config({ first: keyed("MG_F6_UNSET_A") })));
  file = join(dir, "gateway.yaml");
});
afterAll(async () => {
  await gw?.close();
});

describe("a reload names a disabled provider only when that changed", () => {
  it("the start names it; a reload that leaves it disabled as before does not", async () => {
    expect(disabledLines()).toEqual(['provider "first" disabled: $MG_F6_UNSET_A is not set']);
    expect(await reloadTo({ first: keyed("MG_F6_UNSET_A") })).toEqual([]);
  });

  it("a newly disabled provider, and one disabled for another reason now, are named", async () => {
    expect(await reloadTo({ first: keyed("MG_F6_UNSET_A"), second: keyed("MG_F6_UNSET_B") })).toEqual(['provider "second" disabled: $MG_F6_UNSET_B is not set']);
    expect(await reloadTo({ first: keyed("MG_F6_UNSET_C"), second: keyed("MG_F6_UNSET_B") })).toEqual(['provider "first" disabled: $MG_F6_UNSET_C is not set']);
  });
});
