// The plugin API. Built-in and third-party plugins use exactly this interface.
import type { GatewayContext } from "./context.ts";
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { RuntimeConfig } from "../config/runtime.ts";

export type Next = () => Promise<void>;

export interface PluginInstance<Options = unknown, State = unknown> {
  readonly name: string;
  readonly options: Options;
  /** Whatever setup() returned. */
  readonly state: State;
}

export interface PluginDefinition<Options = unknown, State = unknown> {
  name: string;
  /** Plugins that must run before this one (checked at boot: "budget needs auth before it"). */
  dependsOn?: string[];
  /** JSON Schema for this plugin's options; checked when the config loads, never during a request. */
  optionsSchema?: Record<string, unknown>;
  /**
   * Once per config load, before the config serves: register metrics (through gateway.metrics.counter(), .gauge(),
   * .histogram(), which return the one an earlier setup registered: this runs again at every reload), open handles,
   * compile what can be compiled.
   * `config` is the config being loaded (gateway.config is still the one serving until the swap).
   */
  setup?(gateway: GatewayHandle, options: Options, config: RuntimeConfig): State | Promise<State>;
  /** The onion step. Return without calling next() to short-circuit (set ctx.response or throw a GatewayError). */
  handle(ctx: GatewayContext, next: Next, instance: PluginInstance<Options, State>): Promise<void> | void;
  /**
   * Called when the config that set this instance up is replaced or the gateway stops, alongside the other plugins'
   * teardowns. Given 5 s for all of them (PLUGIN_TEARDOWN_TIMEOUT_MS): past that the gateway logs it and goes on
   * without it.
   */
  teardown?(state: State): void | Promise<void>;
}

export function definePlugin<Options = unknown, State = undefined>(
  def: PluginDefinition<Options, State>,
): PluginDefinition<Options, State> {
  if (!def || typeof def.name !== "string" || !/^[a-z0-9][a-z0-9_-]*$/i.test(def.name)) {
    throw new TypeError("definePlugin: `name` must be a simple identifier");
  }
  if (typeof def.handle !== "function") throw new TypeError(`definePlugin(${def.name}): handle(ctx, next) is required`);
  // Plain JavaScript has no types to catch these: `dependsOn: "auth"` was read letter by letter ("needs a before it").
  const wrong = dependsOnProblem(def.dependsOn)
    ?? (def.optionsSchema !== undefined && !isObject(def.optionsSchema) ? "optionsSchema must be a JSON Schema object" : undefined)
    ?? (def.setup !== undefined && typeof def.setup !== "function" ? "setup must be a function" : undefined)
    ?? (def.teardown !== undefined && typeof def.teardown !== "function" ? "teardown must be a function" : undefined);
  if (wrong) throw new TypeError(`definePlugin(${def.name}): ${wrong}`);
  return def;
}

/** What is wrong with a plugin's `dependsOn` (given: an array of plugin names); undefined when nothing is. */
export function dependsOnProblem(dependsOn: unknown): string | undefined {
  if (dependsOn === undefined) return undefined;
  if (Array.isArray(dependsOn) && dependsOn.every((n) => typeof n === "string" && n !== "")) return undefined;
  return `dependsOn must be an array of plugin names (["auth"]), not ${JSON.stringify(dependsOn) ?? typeof dependsOn}`;
}

const isObject = (v: unknown): boolean => typeof v === "object" && v !== null && !Array.isArray(v);
