// Onion composition: requests go down the plugins in order, responses come back up in reverse.
import type { GatewayContext } from "./context.ts";
import type { PluginDefinition, PluginInstance } from "./define.ts";
import { GatewayError } from "../errors.ts";
import { abortRequest } from "../net/request-abort.ts";
import { gatewayCut } from "../shutdown.ts";
import { untilAbandoned } from "./abandon.ts";
import { invalidHeaders } from "./header-validity.ts";

export interface ResolvedPlugin {
  def: PluginDefinition<any, any>;
  instance: PluginInstance<any, any>;
  /**
   * A step this gateway ships (a built-in plugin, body validation): it awaits next() and bounds its own waits, so
   * the pipeline does not watch it. A pipeline of such steps only pays nothing for the watch below.
   */
  trusted?: boolean;
}

export type Handler = (ctx: GatewayContext) => Promise<void>;

const done: Promise<void> = Promise.resolve();

/** A third-party layer (plugin index) whose next() is still running, and that run. */
interface Open { layer: number; below: Promise<void> }
/**
 * This request's open third-party layers and the deepest third-party layer it entered; for its response stream, the
 * stream each third-party layer's next() gave it and the layers whose plugin returned another (it wrapped or made it).
 */
interface Watch {
  plugins: ResolvedPlugin[]; open: Open[]; deepest: number; got?: unknown[]; wrapped?: number[];
  /** Work that waits for the whole pipeline (whenSettled). */
  settled?: Settled[];
  /** What came up out of a third-party layer's next(): a plugin that passes it on did not throw it. */
  passed?: unknown[];
  /** What a third-party plugin threw (or rejected with) itself, and its layer: the log names it (pluginThatThrew). */
  thrown?: Map<unknown, number>;
  /** The answer (ctx.response) each third-party layer's next() left it, and the layer that last made another one. */
  gotAnswer?: unknown[];
  answeredBy?: number;
  /** A response header Node would refuse, and the third-party layer that set it (-1: a step of the gateway's). */
  badHeaders?: Map<string, number>;
  /**
   * The third-party layer whose code runs now (its handle's synchronous part, or its resumption once next() settled),
   * so a callback it registers (ctx.onFinish) can be named; -1 when it is none or not known.
   */
  active: number;
}
/** How the pipeline ended: undefined when it answered, else the error it failed with. */
export type PipelineFailure = { error: unknown } | undefined;
type Settled = (ctx: GatewayContext, failure: PipelineFailure) => void | Promise<void>;
const WATCH = Symbol("pipeline watch");
type Tracked = GatewayContext & { [WATCH]?: Watch };

/**
 * Build the request handler once per config: a closure chain, no per-request array walking. Each layer hands on
 * the plugin's own promise (no async wrapper). With a third-party plugin in the pipeline, the extras per request are
 * one handler on each such plugin's next() promise and on its own, and one on the whole chain, which see to a plugin
 * that does not await next(), never returns, or leaves a stream that never ends; the built-in pipeline has none
 * (measured: they cost 2 % CPU per request).
 */
export function compose(plugins: ResolvedPlugin[], terminal: Handler): Handler {
  let chain: Handler = terminal;
  // Only a pipeline with a third-party plugin tracks whose code runs (Watch.active); the built-in one pays nothing.
  const watching = !plugins.every((p) => p.trusted);
  for (let i = plugins.length - 1; i >= 0; i--) {
    const { def, instance, trusted } = plugins[i]!;
    const downstream = chain;
    const layer = i;
    chain = (ctx) => {
      let called = false;
      const watch = watching ? (ctx as Tracked)[WATCH] : undefined;
      const before = watch?.active ?? -1;
      if (watch) watch.active = trusted ? -1 : layer;
      if (!trusted) {
        entered(ctx as Tracked, layer);
        if (watch) noteBadHeaders(ctx, watch, -1); // set before it ran: not its own
      }
      try {
        const r = def.handle(ctx, () => {
          if (called) return Promise.reject(new Error(`plugin "${def.name}" called next() twice`));
          called = true;
          if (trusted) return downstream(ctx);
          if (watch) noteBadHeaders(ctx, watch, layer); // set before its next(): its own
          return watched(ctx as Tracked, layer, downstream(ctx));
        }, instance);
        if (!trusted) returned(ctx as Tracked, layer, r);
        // A synchronous handle() that returned nothing is done; a thrown error becomes a rejection, as before.
        return r === undefined ? done : (r as Promise<void>);
      } catch (err) {
        if (!trusted && watch) threw(watch, layer, err);
        return Promise.reject(err);
      } finally {
        if (watch) watch.active = before;
      }
    };
  }
  const top = chain;
  if (plugins.every((p) => p.trusted)) return top;
  return (ctx) => {
    const watch: Watch = { plugins, open: [], deepest: -1, active: -1 };
    (ctx as Tracked)[WATCH] = watch;
    const { open } = watch;
    const run = top(ctx).then(
      () => (open.length ? cancelOpen(ctx, plugins, watch) : watch.settled && settle(ctx, watch.settled)),
      (err) => (open.length ? cancelOpen(ctx, plugins, watch, err) : watch.settled ? settle(ctx, watch.settled, { error: err }) : Promise.reject(err)),
    );
    return ctx.signal ? untilAbandoned(run, ctx.signal, () => abandoned(ctx, plugins, watch)) : run;
  };
}

/** A third-party layer was entered: the deepest one is where an abandoned request is looked for. */
function entered(ctx: Tracked, layer: number): void {
  const watch = ctx[WATCH];
  if (watch && layer > watch.deepest) watch.deepest = layer;
}

/**
 * The rest of the pipeline below `layer`, always with a handler: a plugin that fires next() and forgets it must not
 * leave a rejection nobody handles (which ends the process). Its handler is attached before the plugin's own await,
 * so a plugin that awaits next() always finds its layer closed again when it resumes.
 */
function watched(ctx: Tracked, layer: number, below: Promise<void>): Promise<void> {
  const watch = ctx[WATCH];
  if (!watch) return below;
  const { open } = watch;
  const entry = { layer, below };
  open.push(entry);
  const close = () => {
    open.splice(open.indexOf(entry), 1);
    (watch.got ??= [])[layer] = streamOf(ctx);
    (watch.gotAnswer ??= [])[layer] = ctx.response;
    noteBadHeaders(ctx, watch, -1); // set below this plugin: not its own
    // The plugin resumes next (its await was attached after this handler): what it registers then is its own.
    watch.active = layer;
    queueMicrotask(() => {
      if (watch.active === layer) watch.active = -1;
    });
  };
  below.then(close, (err) => {
    close();
    (watch.passed ??= []).push(err);
  });
  return below;
}

/** A third-party plugin at `layer` failed with `err`: its own error, unless it came up out of its next(). */
function threw(watch: Watch, layer: number, err: unknown): void {
  if (watch.passed?.includes(err) || watch.thrown?.has(err)) return;
  (watch.thrown ??= new Map()).set(err, layer);
}

/** Response headers Node would refuse that no layer was named for yet: `layer` set them. */
function noteBadHeaders(ctx: GatewayContext, watch: Watch, layer: number): void {
  const bad = invalidHeaders(ctx.responseHeaders);
  if (!bad) return;
  const seen = (watch.badHeaders ??= new Map());
  for (const name of bad) if (!seen.has(name)) seen.set(name, layer);
}

const NONE: Settled[] = [];
const streamOf = (ctx: GatewayContext) => (ctx.response?.kind === "stream" ? ctx.response.events : undefined);

/**
 * A third-party plugin's handle returned `r`: once it has settled, whether the plugin left a response stream other
 * than the one its next() gave it. Such a plugin is named should that stream not end once the request is aborted.
 */
function returned(ctx: Tracked, layer: number, r: void | Promise<void>): void {
  const watch = ctx[WATCH];
  if (!watch) return;
  const check = () => {
    const stream = streamOf(ctx);
    if (stream !== undefined && stream !== watch.got?.[layer]) (watch.wrapped ??= []).push(layer);
    if (ctx.response !== undefined && ctx.response !== watch.gotAnswer?.[layer]) watch.answeredBy = layer;
    noteBadHeaders(ctx, watch, layer);
  };
  if (r === undefined) check();
  else if (typeof (r as Promise<void>).then === "function") (r as Promise<void>).then(check, (err) => threw(watch, layer, err));
}

/**
 * The pipeline settled while a plugin's next() was still running: that plugin (the outermost one still open)
 * returned without awaiting it. Its downstream is cancelled — the upstream call it made would otherwise be answered
 * and billed for a request the client was told failed — and waited for (bounded: untilAbandoned), so the ledger
 * records the cancelled attempt; then the request fails with a 500 (an error the plugin threw as well is logged).
 */
async function cancelOpen(ctx: GatewayContext, plugins: ResolvedPlugin[], watch: Watch, thrown?: unknown): Promise<void> {
  const { open } = watch;
  const name = plugins[Math.min(...open.map((o) => o.layer))]!.def.name;
  const msg = `plugin "${name}" returned without awaiting next(); the rest of the pipeline was cancelled`;
  const err = gatewayCut(new GatewayError(500, "INTERNAL", "Internal gateway error", { cause: new Error(msg) }));
  ctx.gateway?.log.error(msg, { requestId: ctx.requestId, plugin: name, ...(thrown === undefined ? {} : { error: String(thrown) }) });
  abortRequest(ctx.signal, err);
  await Promise.allSettled(open.map((o) => o.below));
  return settle(ctx, watch.settled ?? NONE, { error: err });
}

/**
 * The work waiting for the pipeline, in the order it was asked for; then the pipeline's own end (its error). Usually
 * one piece (usage-metering's), which for a stream has nothing to do: then no promise is made at all.
 */
function settle(ctx: GatewayContext, work: Settled[], failure?: PipelineFailure): void | Promise<void> {
  const done = work.length === 1 ? work[0]!(ctx, failure) : inTurn(ctx, work, failure);
  if (!failure) return done;
  const rethrow = (): never => {
    throw failure.error;
  };
  return done ? done.then(rethrow) : Promise.reject(failure.error);
}

async function inTurn(ctx: GatewayContext, work: Settled[], failure: PipelineFailure): Promise<void> {
  for (const fn of work) await fn(ctx, failure);
}

/**
 * For a step whose work must see the answer the client gets (usage-metering's ledger record, written before it is
 * sent): in a pipeline with a third-party plugin, which may still fail or replace the answer after the step returned,
 * `fn` runs once the whole pipeline has settled and before the answer is written, told how it ended; should `fn`
 * throw, the request fails with that error. (Handed the request, so a step passes a function made once.) False for a pipeline of the gateway's own steps (nothing then changes
 * the answer on its way back): the step does its work at once.
 */
export function whenSettled(ctx: GatewayContext, fn: Settled): boolean {
  const watch = (ctx as Tracked)[WATCH];
  if (!watch) return false;
  (watch.settled ??= []).push(fn);
  return true;
}

/**
 * The client left and the pipeline did not unwind. The deepest third-party plugin it entered holds it: in its own
 * code when it had not called next(), else in a step below it (its next() is still open).
 */
function abandoned(ctx: GatewayContext, plugins: ResolvedPlugin[], watch: Watch): Error {
  const name = watch.deepest >= 0 ? plugins[watch.deepest]!.def.name : undefined;
  const below = watch.open.some((o) => o.layer === watch.deepest);
  const step = name === undefined ? "the pipeline" : below ? `a step below plugin "${name}"` : `plugin "${name}"`;
  const err = new Error(`${step} had not returned after the request was aborted; the request was abandoned`);
  ctx.gateway?.log.error(err.message, { requestId: ctx.requestId, ...(name === undefined ? {} : { plugin: name }) });
  return err;
}

/**
 * For a request whose pipeline has third-party plugins, what its response stream's writer calls when the stream has
 * not ended 2 s after the request was aborted (untilAbandoned): it logs the plugins that wrapped the stream and
 * returns the error the writer lets the request go with. Undefined for a pipeline of the gateway's own steps only,
 * whose streams end when the request is aborted.
 */
export function streamAbandonment(ctx: GatewayContext): (() => Error) | undefined {
  const watch = (ctx as Tracked)[WATCH];
  return watch && (() => stalledStream(ctx, watch));
}

function stalledStream(ctx: GatewayContext, watch: Watch): Error {
  const names = (watch.wrapped ?? []).map((layer) => watch.plugins[layer]!.def.name);
  const by = names.length ? `, as wrapped by plugin${names.length > 1 ? "s" : ""} ${names.map((n) => `"${n}"`).join(", ")},` : "";
  const err = new Error(`the response stream${by} had not ended after the request was aborted; the request was abandoned`);
  const named = names.length === 1 ? { plugin: names[0] } : names.length ? { plugins: names } : {};
  ctx.gateway?.log.error(err.message, { requestId: ctx.requestId, ...named });
  return err;
}

/** The third-party plugin that threw `err` in its handle (not one that only passed it on); undefined: none did. */
export function pluginThatThrew(ctx: GatewayContext, err: unknown): string | undefined {
  const watch = (ctx as Tracked)[WATCH];
  const layer = watch?.thrown?.get(err);
  return layer === undefined ? undefined : watch!.plugins[layer]!.def.name;
}

/** The third-party plugin that made the request's answer (ctx.response); undefined: a step of the gateway's. */
export function pluginThatAnswered(ctx: GatewayContext): string | undefined {
  const watch = (ctx as Tracked)[WATCH];
  return watch?.answeredBy === undefined ? undefined : watch.plugins[watch.answeredBy]!.def.name;
}

/** The third-party plugin whose code is running now (what it registers, such as an onFinish callback, is its own). */
export function pluginRunning(ctx: GatewayContext): string | undefined {
  const watch = (ctx as Tracked)[WATCH];
  return watch && watch.active >= 0 ? watch.plugins[watch.active]!.def.name : undefined;
}

/** The third-party plugins that wrapped (or made) the response stream, outermost last. */
export function streamWrappers(ctx: GatewayContext): string[] {
  const watch = (ctx as Tracked)[WATCH];
  return (watch?.wrapped ?? []).map((layer) => watch!.plugins[layer]!.def.name);
}

/** The third-party plugins that set the response headers `names` (which Node refused), by header. */
export function pluginsThatSetHeaders(ctx: object, names: string[]): Record<string, string> {
  const watch = (ctx as Tracked)[WATCH];
  const setters: Record<string, string> = {};
  for (const name of names) {
    const layer = watch?.badHeaders?.get(name);
    if (layer !== undefined && layer >= 0) setters[name] = watch!.plugins[layer]!.def.name;
  }
  return setters;
}
