// A loaded config: the runtime settings plus the resolved pipeline and the built-ins it was resolved against
// (kept so that a reload, and bring-your-own-key drivers, use the same ones). Separate from runtime.ts because a
// plugin definition's handler takes a context that holds a RuntimeConfig (no type cycle).
import type { RuntimeConfig } from "./runtime.ts";
import type { PluginDefinition } from "../pipeline/define.ts";
import type { Builtins } from "../contracts/builtins.ts";
import type { ConfigTexts } from "./config-texts.ts";

export interface PipelineEntry {
  name: string;
  def: PluginDefinition<any, any>;
  options: unknown;
}

export interface LoadedConfig extends RuntimeConfig {
  pipeline: PipelineEntry[];
  builtins: Builtins;
  /** The texts of the files it was loaded from (gateway.yaml first, then its includes). */
  texts?: ConfigTexts;
  /**
   * Loaded for a worker that joins a running cluster (LoadOptions.startedWith): the top-level sections that hold
   * settings read only at start, as the accepted texts have them, before the started values were put in. The other
   * workers serve those, so a reload's "what changed" is measured from them here too (./diff.ts).
   */
  sectionsAsAccepted?: Record<string, unknown>;
  /** Loaded for a worker that joins a running cluster: what the other workers report of their config. */
  joined?: JoinedState;
}

/** What the running workers of a cluster report of their config, carried to a worker started in place of one that died. */
export interface JoinedState {
  /** The settings the others' config changes that wait for a restart (their restart_pending). */
  restartPending: string[];
  /** Their last reload, when it was refused (no reload accepted since): the replacement reports it as they do. */
  refused?: { at: string; trigger: "file" | "sighup" | "call"; problems: string[] };
  /** The file changed since the others' accepted config and this worker reloads it once listening: that says the outcome. */
  reloadFollows?: boolean;
}
