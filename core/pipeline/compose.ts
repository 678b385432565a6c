// Onion composition: requests go down the plugins in order, responses come back up in reverse.
import type { GatewayContext } from "./context.ts";
import type { PluginDefinition, PluginInstance } from "./define.ts";
import { GatewayError } from "../errors.ts";
import { abortRequest } from "../net/request-abort.ts";
import { gatewayCut } from "../shutdown.ts";
import { untilAbandoned } from "./abandon.ts";

export interface ResolvedPlugin {
  def: PluginDefinition<any, any>;
  instance: PluginInstance<any, any>;
}

export type Handler = (ctx: GatewayContext) => Promise<void>;

const done: Promise<void> = Promise.resolve();

/** A layer (plugin index) whose next() is still running, and that run. */
interface Open { layer: number; below: Promise<void> }
/** This request's open layers. */
const OPEN = Symbol("open layers");
type Tracked = GatewayContext & { [OPEN]?: Open[] };

/**
 * Build the request handler once per config: a closure chain, no per-request array walking. Each layer hands on
 * the plugin's own promise (no async wrapper); the only per-request extras are one handler on each next() promise
 * and one on the whole chain, which see to a plugin that does not await next() or never returns.
 */
export function compose(plugins: ResolvedPlugin[], terminal: Handler): Handler {
  let chain: Handler = terminal;
  for (let i = plugins.length - 1; i >= 0; i--) {
    const { def, instance } = plugins[i]!;
    const downstream = chain;
    const layer = i;
    chain = (ctx) => {
      let called = false;
      try {
        const r = def.handle(ctx, () => {
          if (called) return Promise.reject(new Error(`plugin "${def.name}" called next() twice`));
          called = true;
          return watched(ctx as Tracked, layer, downstream(ctx));
        }, instance);
        // A synchronous handle() that returned nothing is done; a thrown error becomes a rejection, as before.
        return r === undefined ? done : (r as Promise<void>);
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  const top = chain;
  return (ctx) => {
    const open: Open[] = [];
    (ctx as Tracked)[OPEN] = open;
    const run = top(ctx).then(
      () => (open.length ? cancelOpen(ctx, plugins, open) : undefined),
      (err) => (open.length ? cancelOpen(ctx, plugins, open, err) : Promise.reject(err)),
    );
    return ctx.signal ? untilAbandoned(run, ctx.signal, () => abandoned(ctx, plugins, open)) : run;
  };
}

/**
 * The rest of the pipeline below `layer`, always with a handler: a plugin that fires next() and forgets it must not
 * leave a rejection nobody handles (which ends the process). Its handler is attached before the plugin's own await,
 * so a plugin that awaits next() always finds its layer closed again when it resumes.
 */
function watched(ctx: Tracked, layer: number, below: Promise<void>): Promise<void> {
  const open = ctx[OPEN];
  if (!open) return below;
  const entry = { layer, below };
  open.push(entry);
  const close = () => {
    open.splice(open.indexOf(entry), 1);
  };
  below.then(close, close);
  return below;
}

/**
 * The pipeline settled while a plugin's next() was still running: that plugin (the outermost one still open)
 * returned without awaiting it. Its downstream is cancelled — the upstream call it made would otherwise be answered
 * and billed for a request the client was told failed — and waited for (bounded: untilAbandoned), so the ledger
 * records the cancelled attempt; then the request fails with a 500 (an error the plugin threw as well is logged).
 */
async function cancelOpen(ctx: GatewayContext, plugins: ResolvedPlugin[], open: Open[], thrown?: unknown): Promise<never> {
  const name = plugins[Math.min(...open.map((o) => o.layer))]!.def.name;
  const msg = `plugin "${name}" returned without awaiting next(); the rest of the pipeline was cancelled`;
  const err = gatewayCut(new GatewayError(500, "INTERNAL", "Internal gateway error", { cause: new Error(msg) }));
  ctx.gateway?.log.error(msg, { requestId: ctx.requestId, plugin: name, ...(thrown === undefined ? {} : { error: String(thrown) }) });
  abortRequest(ctx.signal, err);
  await Promise.allSettled(open.map((o) => o.below));
  throw err;
}

/** The client left and the pipeline did not unwind: the step under the innermost open layer is the one holding it. */
function abandoned(ctx: GatewayContext, plugins: ResolvedPlugin[], open: Open[]): Error {
  const at = open.length ? Math.max(...open.map((o) => o.layer)) + 1 : 0;
  const step = at < plugins.length ? `plugin "${plugins[at]!.def.name}"` : "the provider step";
  const err = new Error(`${step} had not returned after the request was aborted; the request was abandoned`);
  ctx.gateway?.log.error(err.message, { requestId: ctx.requestId, ...(at < plugins.length ? { plugin: plugins[at]!.def.name } : {}) });
  return err;
}
