// A project's allow_models entries are compared with model ids only at request time (plugins/allowlist), so a typo
// there was never told: the project's requests got 403 MODEL_NOT_ALLOWED and nothing at load said why. An entry no
// model id could ever match (a space, a character ids never hold, an exact entry that is no provider/name id) is
// refused at load, like any other malformed value. An exact id that is well formed but names no model of this
// gateway is only a notice: configs pre-authorise models added later, and a catalog retiring a model must not stop
// a gateway from starting.
import gatewaySchema from "../../schemas/gateway.schema.json" with { type: "json" };
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";
import { closest } from "./field-suggest.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

/** What a model id is (the schema's pattern for the names under models:), so the two never drift apart. */
const MODEL_ID = new RegExp(gatewaySchema.properties.models.propertyNames.pattern);
/** A character no model id holds: an entry with one matches nothing, glob or not (`*` and `?` are the glob's). */
const NOT_IN_IDS = /[^A-Za-z0-9._:/*?-]/;

const isGlob = (entry: string) => /[*?]/.test(entry);

/** Why an allow_models entry can never match a model id, or undefined when it can. */
function neverMatches(entry: string): string | undefined {
  const bad = NOT_IN_IDS.exec(entry)?.[0];
  if (bad !== undefined) {
    const what = /\s/.test(bad) ? "a space" : `the character ${JSON.stringify(bad)}`;
    const trimmed = entry.trim();
    const instead = trimmed !== entry && !NOT_IN_IDS.test(trimmed) ? `: write ${JSON.stringify(trimmed)}` : " (ids are provider/name: letters, digits, . _ : -; globs add * and ?)";
    return `${JSON.stringify(entry)} holds ${what}, which no model id has, so it never matches${instead}`;
  }
  if (!isGlob(entry) && !MODEL_ID.test(entry)) {
    return `${JSON.stringify(entry)} is not a model id (provider/name, as under models:), so it never matches: write the whole id (such as "openai/${entry.split("/").pop()}") or a glob ("*/${entry.split("/").pop()}")`;
  }
  return undefined;
}

/** Refuses the allow_models entries that can never match any model. */
export function checkAllowModels(config: GatewayConfig, at: At, problems: ConfigProblem[]): void {
  for (const [pid, project] of Object.entries(config.projects ?? {})) {
    (project.allow_models ?? []).forEach((entry, i) => {
      const why = neverMatches(entry);
      if (why) problems.push(at(["projects", pid, "allow_models", i], `projects.${pid}.allow_models[${i}]: ${why}`));
    });
  }
}

/** A notice for each exact allow_models id that no model of this gateway (its file or includes) has. */
export function unknownAllowedModelNotices(config: GatewayConfig): string[] {
  const ids = Object.keys(config.models ?? {});
  const known = new Set(ids);
  const notices: string[] = [];
  for (const [pid, project] of Object.entries(config.projects ?? {})) {
    (project.allow_models ?? []).forEach((entry, i) => {
      if (isGlob(entry) || known.has(entry) || neverMatches(entry)) return;
      const typo = closest(entry, ids);
      notices.push(`project ${pid}: allow_models[${i}] ${JSON.stringify(entry)} names no model of this gateway` +
        `${typo ? ` (did you mean ${JSON.stringify(typo)}?)` : ""}: it allows nothing until a model of that id is added`);
    });
  }
  return notices;
}
