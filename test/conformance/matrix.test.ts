// The conformance matrix (issue 12): every client protocol x every upstream protocol x every scenario, driven by the
// official clients against the fake upstreams, which check what the real APIs check (tool-call pairing, reasoning
// signatures, schemas). The table is generated: a new upstream protocol is one line in UPSTREAMS (and its fake in
// env.ts), a new scenario one entry in SCENARIOS; what a pair cannot support is a scenario asserting its explicit 400.
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { startEnv, UPSTREAMS, type Env } from "./env.ts";
import { SCENARIOS } from "./scenarios.ts";

const CLIENTS = ["chat", "messages", "gemini"] as const;

const TABLE = CLIENTS.flatMap((client) => UPSTREAMS.flatMap((upstream) =>
  Object.entries(SCENARIOS).filter(([, s]) => s[client]).map(([scenario, s]) => ({ client, upstream, scenario, run: s[client]! }))));

let env: Env;
beforeAll(async () => { env = await startEnv(); });
afterEach(() => env.reset());
afterAll(async () => { await env?.close(); });

describe.each(CLIENTS)("%s client", (client) => {
  describe.each(UPSTREAMS)("on a %s upstream", (upstream) => {
    it.each(TABLE.filter((c) => c.client === client && c.upstream === upstream))("$scenario", async ({ run }) => {
      await run(env, upstream);
    });
  });
});
