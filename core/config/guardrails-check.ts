// What the schema cannot say about projects' `guardrails:` (docs/guardrails.md): each rule detects something, its
// expressions compile, allow rules do not redact, names are unique; the moderation names exactly one of a provider
// (an openai-protocol one, which has /moderations) or a judge (a language model of the catalog); and a pipeline that
// is given explicitly runs the guardrails plugin when a project has guardrails (else they would silently do nothing).
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";
import { aModelOfType } from "../endpoints/model-type-words.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

function regexProblem(source: string, flags: string): string | undefined {
  try {
    new RegExp(source, flags);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

export function checkGuardrails(config: GatewayConfig, at: At, problems: ConfigProblem[]): void {
  for (const [pid, project] of Object.entries(config.projects ?? {})) {
    const g = project.guardrails;
    if (!g) continue;
    const base = ["projects", pid, "guardrails"];
    const names = new Set<string>();
    (g.rules ?? []).forEach((r, i) => {
      const here = [...base, "rules", i];
      const where = `project ${pid}: guardrail rule "${r.name}"`;
      if (names.has(r.name)) problems.push(at([...here, "name"], `${where}: another rule has this name`));
      names.add(r.name);
      if (!r.detect && !r.patterns && !r.keywords) problems.push(at(here, `${where}: give detect, patterns or keywords (what the rule looks for)`));
      if (r.type === "allow" && r.action === "redact") problems.push(at([...here, "action"], `${where}: an allow rule blocks or flags; it has nothing to redact`));
      (r.patterns ?? []).forEach((p, j) => {
        const bad = regexProblem(p, r.ignore_case ? "iu" : "u");
        if (bad) problems.push(at([...here, "patterns", j], `${where}: patterns[${j}] is not a valid regular expression: ${bad}`));
      });
      (r.except ?? []).forEach((p, j) => {
        const bad = regexProblem(p, "u");
        if (bad) problems.push(at([...here, "except", j], `${where}: except[${j}] is not a valid regular expression: ${bad}`));
      });
    });
    const m = g.moderation;
    if (!m) continue;
    const mpath = [...base, "moderation"];
    if ((m.provider === undefined) === (m.judge === undefined)) {
      problems.push(at(mpath, `project ${pid}: guardrails.moderation names either provider (a /moderations endpoint) or judge (a catalog model), not ${m.provider ? "both" : "neither"}`));
      continue;
    }
    if (m.provider !== undefined) {
      const p = config.providers?.[m.provider];
      if (!p) problems.push(at([...mpath, "provider"], `project ${pid}: guardrails.moderation.provider: unknown provider "${m.provider}"`));
      else if (p.protocol !== "openai" || p.flavor === "azure") {
        problems.push(at([...mpath, "provider"], `project ${pid}: guardrails.moderation.provider "${m.provider}" must speak the openai protocol (not Azure), which has /moderations`));
      }
    }
    if (m.judge !== undefined) {
      const model = config.models?.[m.judge];
      if (!model) problems.push(at([...mpath, "judge"], `project ${pid}: guardrails.moderation.judge: unknown model "${m.judge}"`));
      else if ((model.type ?? "language") !== "language") problems.push(at([...mpath, "judge"], `project ${pid}: guardrails.moderation.judge "${m.judge}" is ${aModelOfType(model.type ?? "language")}, not a language model`));
    }
  }
}

/** A pipeline given in the config must run `guardrails` when a project configures them. */
export function checkGuardrailsInPipeline(config: GatewayConfig, names: readonly string[], at: At, problems: ConfigProblem[]): void {
  if (!config.pipeline || names.includes("guardrails")) return;
  const guarded = Object.entries(config.projects ?? {}).filter(([, p]) => p.guardrails).map(([id]) => id);
  if (guarded.length) problems.push(at(["pipeline"], `projects ${guarded.join(", ")} have guardrails, but pipeline: does not run the guardrails plugin (add it, last)`));
}
