// gateway.yaml -> a loaded config, against the built-in plugins and drivers it is given (core/builtins.ts wires
// the shipped ones; config/load.ts is the entries' loadConfig): parse with positions, merge includes, interpolate
// ${ENV}, validate against the generated schema validator, check what a schema cannot (references, plugins,
// order), then freeze.
import { dirname, resolve, isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv, type ErrorObject } from "../ajv.ts";
import { validateGateway } from "../generated/validators.js";
import type { GatewayConfig, ModelConfig, ModelEndpointConfig, ProviderConfig } from "../generated/types/gateway.ts";
import { interpolate, hasReference, expandsAt, firstReference, malformedReference, unsetPhrase, EXPANDED_IN } from "./env.ts";
import { ConfigError, locate, readYaml, type ConfigProblem, type YamlSource } from "./source.ts";
import { withRotationMarks } from "../keys/rotation-marks.ts";
import type { AdminKeyRuntime, KeyRuntime, ModelRuntime, ProjectRuntime, RuntimeConfig } from "./runtime.ts";
import type { JoinedState, LoadedConfig, PipelineEntry } from "./loaded.ts";
import type { Builtins } from "../contracts/builtins.ts";
import { untranslatedNotice } from "./translation-notice.ts";
import { retirementInstant, retirementInstants, retirementNotices } from "./retirement.ts";
import { unenforcedPolicyNotices, unusedPluginNotices } from "./policy-notice.ts";
import { checkOrder } from "../pipeline/order.ts";
import type { PluginDefinition } from "../pipeline/define.ts";
import { importPluginModule } from "./plugin-import.ts";
import { resolvePackageImport } from "./package-resolve.ts";
import { rememberConfigSecrets } from "../secrets/registry.ts";
import { configSecrets } from "../secrets/config-secrets.ts";
import { trustedProxies } from "../net/trusted-proxies.ts";
import { allowHostsProblems } from "../net/allow-hosts.ts";
import { resolveEgressProxy, type EgressProxy } from "../net/egress-proxy.ts";
import { corsPolicy } from "../http/cors-policy.ts";
import { defaultMaxConnections } from "../net/connection-cap.ts";
import { checkGuardrails, checkGuardrailsInPipeline } from "./guardrails-check.ts";
import { checkAuthInPipeline } from "./auth-check.ts";
import { allowedFields, closest } from "./field-suggest.ts";
import { checkConsole } from "../console/settings.ts";
import { checkMcpCwds } from "../mcp/cwd.ts";
import { checkHeaders } from "./header-check.ts";
import { checkBaseUrls } from "./url-check.ts";
import { checkSigningSecret, configuredSigningSecret, emptySigningSecretNotice } from "./signing-secret-check.ts";
import { checkProviderFields } from "./provider-fields-check.ts";
import { checkAllowModels, unknownAllowedModelNotices } from "./allow-models-check.ts";
import { checkRelativeIncludes, checkRelativePaths } from "./relative-paths-check.ts";
import { checkStoreFields, storeFieldNotices, type WrittenStore } from "./store-fields-check.ts";
import { DEFAULT_MAX_BYTES_IN_FLIGHT } from "../net/download-pool.ts";
import { textReader, type ConfigTexts } from "./config-texts.ts";
import { RESTART_ONLY_SECTIONS, withStartedSettings } from "./restart-only.ts";

export interface LoadOptions {
  env?: Record<string, string | undefined>;
  /**
   * Told, at each load, what the config allows but an operator should hear of: each provider or MCP server disabled
   * for an unset variable, each endpoint that has no pricing, a pipeline that cannot translate between protocols.
   * `check` prints them as notes, a running gateway logs them.
   */
  onNotice?: (message: string) => void;
  /**
   * A variable left unset with no default is no problem: its field is left empty and unchecked. For `keys list`,
   * which reads a production file's keys in a shell that has none of its secrets (server.signing_secret: "${...}").
   */
  allowUnset?: boolean;
  /** The files' texts to load (by absolute path) instead of reading them: what a running gateway accepted. */
  texts?: ConfigTexts;
  /**
   * The texts the gateway started with: the settings read only at start are taken from its gateway.yaml instead
   * (a worker that replaces one that died joins the running gateway as it started; ./restart-only.ts).
   */
  startedWith?: ConfigTexts;
  /** With startedWith: what the cluster's running workers report of their config (kept on the loaded config). */
  joined?: JoinedState;
  /**
   * The providers and MCP servers the serving config has disabled, with why: a reload names only those whose state
   * changed, not every disabled one again.
   */
  disabledBefore?: ReadonlyMap<string, string>;
}

type Path = (string | number)[];

/** Where a config path came from: included files own the models they define. */
class Sources {
  readonly modelSource = new Map<string, YamlSource>();
  constructor(readonly main: YamlSource) {}
  at(path: Path, message: string, atKey = false): ConfigProblem {
    const src = path[0] === "models" && typeof path[1] === "string" ? this.modelSource.get(path[1]) ?? this.main : this.main;
    return { ...locate(src, path, atKey), message };
  }
}

export async function resolveConfig(builtins: Builtins, file: string, opts: LoadOptions = {}): Promise<LoadedConfig> {
  const env = opts.env ?? process.env;
  const problems: ConfigProblem[] = [];
  const path = resolve(file);
  const reader = textReader(opts.texts);
  const main = readYaml(path, problems, undefined, reader.read);
  if (!main) throw new ConfigError(problems);
  // A file cut short to nothing (truncated while being rewritten) would otherwise load as a config with no projects:
  // every key refused. Nothing but whitespace and comments is never a gateway's intended config.
  if (main.empty) {
    throw new ConfigError([{ file: path, line: 1, column: 1, message: "the file is empty (nothing but whitespace, comments or null): refused, as it would drop every project and key" }]);
  }
  if (typeof main.value !== "object" || main.value === null || Array.isArray(main.value)) {
    throw new ConfigError([{ ...locate(main, []), message: "the config must be a mapping (providers:, models:, projects:, ...)" }]);
  }
  const sources = new Sources(main);
  const raw = structuredClone(main.value) as Record<string, any>;
  // Relative paths in a config read from a pipe would be resolved under /dev/fd: refused first, alone, as what else
  // is said of those places (cannot read, not a directory) would only confuse.
  checkRelativeIncludes(raw.include, path, dirname(path), (p, m, k) => sources.at(p, m, k), problems);
  if (problems.length) throw new ConfigError(problems);
  const replaced = mergeIncludes(raw, sources, dirname(path), problems, reader.read);
  // What the other workers serve of the sections the started settings go into: their reload diffs start from it.
  const asAccepted = opts.startedWith ? Object.fromEntries(RESTART_ONLY_SECTIONS.map((s) => [s, structuredClone(raw[s])])) : undefined;
  if (opts.startedWith) withStartedSettings(raw, startedSettings(opts.startedWith, path));

  // Whether store.kind or a store setting was written as a ${...} decides if a setting of another kind is a refusal.
  const writtenStore = structuredClone(raw.store) as WrittenStore;
  const unset = new Unset(env, opts.allowUnset === true);
  interpolateTree(raw, [], env, sources, unset, problems);
  // The others accepted these texts with this environment: nothing to report here that the load above does not.
  if (asAccepted) interpolateTree(asAccepted, [], env, sources, new Unset(env, true), []);
  const disabled = unset.reasons();

  if (!validateGateway(raw)) {
    for (const e of validateGateway.errors ?? []) {
      const problem = unset.explain(schemaProblem(e, sources, raw), e);
      if (problem) problems.push(problem);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  unset.dropDisabledFields(raw);

  const config = raw as GatewayConfig;
  checkRelativePaths(config, path, dirname(path), (name) => !disabled.has(name), (p, m, k) => sources.at(p, m, k), problems);
  if (problems.length) throw new ConfigError(problems);
  // `model-gateway keys rotate` records a key's successor in comments, which an earlier release's schema ignores.
  withRotationMarks(main.doc, (pid) => config.projects?.[pid]?.keys);
  checkReferences(config, sources, problems);
  const egress = resolveEgressProxy(config.server?.egress_proxy, env);
  for (const p of egress.problems) problems.push(sources.at("path" in p.at ? p.at.path : ["server"], p.message));
  checkMcpCwds(config, dirname(path), (name) => !disabled.has(`mcp_servers.${name}`), (p, m, k) => sources.at(p, m, k), problems);
  checkHeaders(config, (p, m, k) => sources.at(p, m, k), problems);
  checkBaseUrls(config, (p, m, k) => sources.at(p, m, k), problems);
  checkSigningSecret(config, (p, m, k) => sources.at(p, m, k), problems);
  checkProviderFields(config, dirname(path), (name) => !disabled.has(name), (p, m, k) => sources.at(p, m, k), problems);
  checkAllowModels(config, (p, m, k) => sources.at(p, m, k), problems);
  checkStoreFields(config, writtenStore, (p, m, k) => sources.at(p, m, k), problems);
  const pipeline = await resolvePipeline(builtins, config, sources, dirname(path), problems);
  checkAuthInPipeline(config, pipeline.map((p) => p.name), (p, m, k) => sources.at(p, m, k), problems);
  checkGuardrailsInPipeline(config, pipeline.map((p) => p.name), (p, m, k) => sources.at(p, m, k), problems);
  if (problems.length) throw new ConfigError(problems);

  for (const [name, why] of disabled) {
    if (opts.disabledBefore?.get(name) === why) continue;
    opts.onNotice?.(name.startsWith("mcp_servers.") ? `MCP server "${name.slice(12)}" disabled: ${why}` : `provider "${name}" disabled: ${why}`);
  }
  for (const m of unpricedNotices(config)) opts.onNotice?.(m);
  for (const m of unknownAllowedModelNotices(config)) opts.onNotice?.(m);
  for (const m of storeFieldNotices(config, writtenStore)) opts.onNotice?.(m);
  const enabled = (p: string) => p === "sim" || (p in (config.providers ?? {}) && !disabled.has(p));
  for (const m of retirementNotices(config, enabled, Date.now(), replaced)) opts.onNotice?.(m);
  const names = pipeline.map((p) => p.name);
  const untranslated = untranslatedNotice(config, names);
  if (untranslated) opts.onNotice?.(untranslated);
  for (const m of unenforcedPolicyNotices(config, names)) opts.onNotice?.(m);
  for (const m of unusedPluginNotices(config, names)) opts.onNotice?.(m);
  const emptySecret = emptySigningSecretNotice(config);
  if (emptySecret) opts.onNotice?.(emptySecret);
  const loaded: LoadedConfig = { ...freeze(path, config, disabled, egress.proxy), pipeline, builtins, texts: reader.texts, ...(asAccepted ? { sectionsAsAccepted: asAccepted } : {}), ...(opts.joined ? { joined: opts.joined } : {}) };
  rememberConfigSecrets(loaded, configSecrets(config, env));
  return loaded;
}

/**
 * Included models under the file's own: an own entry replaces an included one of the same id whole. Returns the
 * included entries so replaced (the catalog's `retires` in them is still worth an operator's notice).
 */
function mergeIncludes(raw: Record<string, any>, sources: Sources, dir: string, problems: ConfigProblem[], read: (file: string) => string): Record<string, ModelConfig> {
  const own = (raw.models ?? {}) as Record<string, unknown>;
  for (const id of Object.keys(own)) sources.modelSource.set(id, sources.main);
  const replaced: Record<string, ModelConfig> = {};
  if (!Array.isArray(raw.include)) return replaced;
  const merged: Record<string, unknown> = {};
  raw.include.forEach((inc: unknown, i: number) => {
    if (typeof inc !== "string") return; // the schema reports it
    const src = readYaml(isAbsolute(inc) ? inc : resolve(dir, inc), problems, (error) => sources.at(["include", i], `include.${i}: cannot read ${inc}: ${error}`), read);
    if (!src) return;
    const value = src.value as Record<string, unknown> | null;
    if (typeof value !== "object" || value === null) {
      problems.push({ ...locate(src, []), message: "an included file must be a mapping with `models:`" });
      return;
    }
    for (const key of Object.keys(value)) {
      if (key !== "models") problems.push({ ...locate(src, [key], true), message: `an included file may only hold models:, not ${key}:` });
    }
    for (const [id, entry] of Object.entries((value.models ?? {}) as Record<string, unknown>)) {
      merged[id] = entry;
      if (!(id in own)) sources.modelSource.set(id, src);
      else if (Array.isArray((entry as ModelConfig | null)?.endpoints)) replaced[id] = entry as ModelConfig;
    }
  });
  raw.models = { ...merged, ...own };
  return replaced;
}

/** The start's gateway.yaml, parsed: a gateway accepted it, so it parses (else there is no start to join: thrown). */
function startedSettings(started: ConfigTexts, file: string): Record<string, unknown> {
  const problems: ConfigProblem[] = [];
  const text = started[file];
  const src = text === undefined ? undefined : readYaml(file, problems, undefined, () => text);
  if (!src || typeof src.value !== "object") {
    throw new ConfigError([{ file, line: 1, column: 1, message: `the settings the gateway started with could not be read from its copy of this file${problems.length ? `: ${problems[0]!.message}` : ""}` }]);
  }
  return src.value as Record<string, unknown>;
}

const pathKey = (path: readonly (string | number)[]) => path.map(String).join("\u0000");

/** What unset variables left behind: the providers and MCP servers they switch off, and the fields they emptied. */
class Unset {
  /** Provider name, or mcp_servers.<name> -> every unset variable of its fields, in the order they appear. */
  private readonly owners = new Map<string, string[]>();
  /** A field whose value lost an unset variable: whose it is (when that switched it off), or whether it is reported. */
  private readonly fields = new Map<string, { at: Path; missing: string[]; owner?: string; reported: boolean }>();
  constructor(private readonly env: Record<string, string | undefined>, readonly allowed = false) {}

  field(at: Path, missing: string[], how: { owner: string } | { reported: boolean }): void {
    const owner = "owner" in how ? how.owner : undefined;
    this.fields.set(pathKey(at), { at, missing, owner, reported: "reported" in how && how.reported });
    if (owner) {
      const vars = this.owners.get(owner) ?? [];
      for (const m of missing) if (!vars.includes(m)) vars.push(m);
      this.owners.set(owner, vars);
    }
  }

  /** Name -> why it is disabled: all its unset variables at once, so one restart fixes them all. */
  reasons(): Map<string, string> {
    return new Map([...this.owners].map(([name, vars]) => [name, unsetPhrase(vars, this.env)]));
  }

  /**
   * A schema problem with a value an unset variable emptied (base_url "" fails its pattern, timeout_ms "" is no
   * integer): not reported when its provider or MCP server is off (the notice names the variables) or the variable
   * is reported already; otherwise it names the variable.
   */
  explain(problem: ConfigProblem, e: ErrorObject): ConfigProblem | undefined {
    const f = this.fields.get(pathKey(e.instancePath.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))));
    if (!f) return problem;
    if (f.owner || f.reported) return undefined;
    return { ...problem, message: `${problem.message} (because ${unsetPhrase(f.missing, this.env)})` };
  }

  /**
   * A disabled provider's declaration still serves bring-your-own-key requests (with the project's credentials):
   * what an unset variable emptied there is left out, as if never written, rather than kept as "" (a base_url of ""
   * or a timeout of "").
   */
  dropDisabledFields(raw: Record<string, any>): void {
    for (const f of this.fields.values()) {
      if (!f.owner || f.at[0] !== "providers") continue;
      const parent = f.at.slice(0, -1).reduce<any>((node, seg) => node?.[seg], raw);
      const last = f.at[f.at.length - 1]!;
      if (parent && typeof parent === "object" && !Array.isArray(parent)) delete parent[last];
    }
  }
}

function interpolateTree(
  node: any, path: Path, env: Record<string, string | undefined>, sources: Sources,
  unset: Unset, problems: ConfigProblem[],
): void {
  if (Array.isArray(node)) {
    node.forEach((v, i) => {
      if (typeof v === "string" && v.includes("$")) node[i] = fill(v, [...path, i]);
      else interpolateTree(v, [...path, i], env, sources, unset, problems);
    });
  } else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (typeof v === "string" && v.includes("$")) node[k] = fill(v, [...path, k]);
      else interpolateTree(v, [...path, k], env, sources, unset, problems);
    }
  }
  function fill(s: string, at: Path): string | number | boolean {
    if (!expandsAt(at)) {
      // Refused rather than kept literally: a catalog entry (perhaps from an included file) reading the
      // environment is either a mistake or an attempt to publish a secret through GET /v1/models.
      const ref = firstReference(s);
      if (ref) problems.push(sources.at(at, `${at.join(".")}: ${ref} is not expanded here; environment variables are read only in ${EXPANDED_IN}`));
      return s;
    }
    // `${VAR-x}`, `$VAR`, `${VAR`: meant as a reference, but used as written it would be the value (an api_key).
    const malformed = malformedReference(s);
    if (malformed) {
      problems.push(sources.at(at, `${at.join(".")}: ${malformed}${isPathField(at) ? writtenAsIs(s) : ""}`));
      return s;
    }
    if (!hasReference(s)) return s;
    const { value, missing } = interpolate(s, env);
    if (!missing.length) return coerce(s, value);
    // A provider with a variable of its own unset (its key, its AWS credentials, its base_url...) is simply switched
    // off, with one log line naming all of them, not an error.
    if (at[0] === "providers" && typeof at[1] === "string" && at.length >= 3) {
      unset.field(at, missing, { owner: at[1] });
      return value;
    }
    if (at[0] === "projects" && at[2] === "providers" && at.length === 5) { // BYOK unset: not used
      unset.field(at, missing, { reported: false });
      return value;
    }
    // An MCP server whose credentials are unset is switched off like a provider; a project's own ones unset are not used.
    if (at[0] === "mcp_servers" && typeof at[1] === "string") {
      unset.field(at, missing, { owner: `mcp_servers.${at[1]}` });
      return value;
    }
    if (at[0] === "projects" && at[2] === "mcp" && at[3] === "servers") {
      unset.field(at, missing, { reported: false });
      return "";
    }
    // The field path as every other problem has it: on a flow mapping's one line only the column would tell which.
    if (!unset.allowed) problems.push(sources.at(at, `${at.join(".")}: environment variable ${unsetPhrase(missing, env, "")} and has no default (write \${${missing[0]}:-default})`));
    unset.field(at, missing, { reported: true });
    return value;
  }
}

/**
 * An endpoint without pricing is billed $0, so its traffic escapes every budget without a word (an entry in
 * gateway.yaml that overrides a catalog model replaces it whole, its prices too). An explicit price of "0" is a free
 * model and says nothing; the simulator never bills.
 */
function unpricedNotices(config: GatewayConfig): string[] {
  const out: string[] = [];
  for (const [id, model] of Object.entries(config.models ?? {})) {
    for (const ep of model.endpoints) {
      if (ep.provider === "sim" || config.providers?.[ep.provider]?.protocol === "sim") continue;
      if (ep.pricing && Object.keys(ep.pricing).length) continue;
      out.push(`model ${id}: endpoint ${ep.provider}/${ep.model} has no pricing, so its requests cost $0 and no budget limits them` +
        ` (give pricing, or pricing: { input: "0", output: "0" } for a free model)`);
    }
  }
  return out;
}

/** A scalar that is one whole ${VAR} takes the type of what it expands to (port: "${PORT:-8787}" is a number). */
function coerce(template: string, value: string): string | number | boolean {
  if (!/^\$\{[^}]+\}$/.test(template)) return value;
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (value === "true" || value === "false") return value === "true";
  return value;
}

function schemaProblem(e: ErrorObject, sources: Sources, raw: unknown): ConfigProblem {
  const path: Path = e.instancePath.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const where = path.length ? path.join(".") : "(top level)";
  const value = path.reduce<any>((node, seg) => node?.[seg], raw);
  switch (e.keyword) {
    case "required":
      return sources.at(path, `${where}: missing required field "${(e.params as any).missingProperty}"`);
    case "additionalProperties": {
      const field = String((e.params as any).additionalProperty);
      const typo = closest(field, allowedFields(path.map((seg) => (/^\d+$/.test(String(seg)) ? Number(seg) : seg))));
      return sources.at([...path, field], `${where}: unknown field "${field}"${typo ? ` (did you mean "${typo}"?)` : ""}`, true);
    }
    case "enum":
      return sources.at(path, `${where}: must be one of ${(e.params as any).allowedValues.map((v: unknown) => JSON.stringify(v)).join(", ")}`);
    case "type":
      // A price or budget as a YAML number: money is a decimal string, so no float ever rounds it.
      if (e.schemaPath.includes("Decimal") && typeof value === "number" && value >= 0 && Number.isFinite(value)) {
        return sources.at(path, `${where}: must be a decimal string: quote it: "${value.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 })}"`);
      }
      return sources.at(path, `${where}: ${e.message}`);
    case "pattern":
      if (e.schemaPath.includes("Decimal")) return sources.at(path, `${where}: must be a decimal string such as "0.0000025" (quoted, no exponent)`);
      if (path[path.length - 1] === "sha256") return sources.at(path, `${where}: ${keyHashProblem(value)}`);
      return sources.at(path, `${where}: ${e.message}`);
    case "propertyNames":
      return sources.at(path, `${where}: invalid name ${JSON.stringify((e.params as any).propertyName)}`);
    default:
      if (e.keyword === "pattern" || e.instancePath.includes("propertyName")) return sources.at(path, `${where}: ${e.message}`);
      return sources.at(path, `${where}: ${e.message}`);
  }
}

/** What a `sha256:` that is not a key's hash is, and what to write; a key pasted there is never repeated back. */
function keyHashProblem(value: unknown): string {
  if (typeof value === "string" && /^mg_[a-z]+_/.test(value)) {
    return "this is a key itself, not its SHA-256: a key never goes in gateway.yaml (anyone who reads the file could use it); " +
      "write its SHA-256 instead (model-gateway keys new prints it, or: printf %s \"$KEY\" | sha256sum), and since it was written down, consider it exposed and make a new one";
  }
  return "sha256 must be 64 lowercase hex characters: the SHA-256 of the key (model-gateway keys new prints it)";
}

function checkReferences(config: GatewayConfig, sources: Sources, problems: ConfigProblem[]): void {
  for (const p of trustedProxies(config.server?.trusted_proxies ?? []).problems) {
    problems.push(sources.at(["server", "trusted_proxies", p.index], `server.trusted_proxies: ${p.message}`));
  }
  for (const p of allowHostsProblems(config.server?.url_fetch?.allow_hosts ?? [])) {
    problems.push(sources.at(["server", "url_fetch", "allow_hosts", p.index], `server.url_fetch.allow_hosts[${p.index}]: ${p.message}`));
  }
  for (const p of corsPolicy(config.server?.cors).problems) {
    problems.push(sources.at(["server", "cors", "allow_origins", p.index], `server.cors.allow_origins[${p.index}]: ${p.message}`));
  }
  const providers = new Set([...Object.keys(config.providers ?? {}), "sim"]);
  for (const [id, model] of Object.entries(config.models ?? {})) {
    model.endpoints.forEach((ep, i) => {
      if (!providers.has(ep.provider)) {
        problems.push(sources.at(["models", id, "endpoints", i, "provider"],
          `model ${id}: endpoint names unknown provider "${ep.provider}" (declared: ${[...providers].join(", ")})`));
      }
      if (ep.retires !== undefined && Number.isNaN(retirementInstant(ep.retires))) {
        problems.push(sources.at(["models", id, "endpoints", i, "retires"], `model ${id}: retires "${ep.retires}" is not a day of the calendar (YYYY-MM-DD)`));
      }
      if (ep.replacement !== undefined && !(ep.replacement in (config.models ?? {}))) {
        problems.push(sources.at(["models", id, "endpoints", i, "replacement"], `model ${id}: replacement "${ep.replacement}" is not a model of this gateway`));
      }
      const tier = ep.pricing?.long_context;
      const window = ep.context_window ?? model.context_window;
      if (tier?.context_window !== undefined && window !== undefined && tier.context_window <= window) {
        // A long window no wider than the endpoint's would shrink the budget hold and the billed usage cap of the
        // very requests that ask for more room.
        problems.push(sources.at(["models", id, "endpoints", i, "pricing", "long_context", "context_window"],
          `model ${id}: pricing.long_context.context_window ${tier.context_window} must be wider than the endpoint's context_window ${window}`));
      }
    });
  }
  const seen = new Map<string, string>();
  for (const [pid, project] of Object.entries(config.projects ?? {})) {
    // Revocation, per-key rate limits and budgets go by id: two keys of one id would share them, and revoking the id
    // would leave one of them live.
    const ids = new Map<string, number>();
    project.keys.forEach((k, i) => {
      const other = seen.get(k.sha256);
      if (other) problems.push(sources.at(["projects", pid, "keys", i, "sha256"], `key ${k.id}: the same key is already declared by ${other}`));
      seen.set(k.sha256, `${pid}/${k.id}`);
      const first = ids.get(k.id);
      if (first !== undefined) {
        const at = sources.at(["projects", pid, "keys", first, "id"], "");
        problems.push(sources.at(["projects", pid, "keys", i, "id"],
          `project ${pid}: key id ${k.id} is already declared at ${at.file}:${at.line}:${at.column} (revocation, rate limits and budgets go by id: give each key its own)`));
      } else ids.set(k.id, i);
    });
    for (const name of Object.keys(project.mcp?.servers ?? {})) {
      if (!config.mcp_servers?.[name]) problems.push(sources.at(["projects", pid, "mcp", "servers", name], `project ${pid}: unknown MCP server "${name}" (declare it under mcp_servers:)`, true));
    }
    for (const name of Object.keys(project.providers ?? {})) {
      if (!providers.has(name)) problems.push(sources.at(["projects", pid, "providers", name], `project ${pid}: unknown provider "${name}"`, true));
    }
  }
  checkGuardrails(config, (p, m, k) => sources.at(p, m, k), problems);
  checkConsole(config, (p, m, k) => sources.at(p, m, k), problems);
  // An admin key is never also a project key: each is refused where the other is accepted.
  const adminIds = new Set<string>();
  (config.admin_keys ?? []).forEach((k, i) => {
    const other = seen.get(k.sha256);
    if (other) problems.push(sources.at(["admin_keys", i, "sha256"], `admin key ${k.id}: the same key is already declared by ${other}`));
    seen.set(k.sha256, `admin_keys/${k.id}`);
    if (adminIds.has(k.id)) problems.push(sources.at(["admin_keys", i, "id"], `admin key id ${k.id} is declared twice`));
    adminIds.add(k.id);
  });
}

async function resolvePipeline(builtins: Builtins, config: GatewayConfig, sources: Sources, dir: string, problems: ConfigProblem[]): Promise<PipelineEntry[]> {
  const builtinPlugins = builtins.plugins;
  const defs: Record<string, PluginDefinition<any, any>> = { ...builtinPlugins };
  const options: Record<string, unknown> = {};
  for (const [name, pc] of Object.entries(config.plugins ?? {})) {
    if (name in builtinPlugins) {
      problems.push(sources.at(["plugins", name], `plugin "${name}" has the name of a built-in plugin`, true));
      continue;
    }
    try {
      const def = await importPlugin(pc.module, dir);
      if (def.name !== name) {
        problems.push(sources.at(["plugins", name, "module"], `module ${pc.module} defines plugin "${def.name}", not "${name}"`));
        continue;
      }
      defs[name] = def;
      // What the plugin receives is what was validated: {} when `options:` is absent, with the schema's defaults.
      const opts = pc.options ?? {};
      options[name] = opts;
      if (def.optionsSchema) {
        const validate = new Ajv({ allErrors: true, strict: false, useDefaults: true }).compile(def.optionsSchema);
        if (!validate(opts)) for (const e of validate.errors ?? []) problems.push(optionsProblem(e, name, sources));
      }
    } catch (err) {
      problems.push(sources.at(["plugins", name, "module"], `cannot load plugin "${name}" from ${pc.module}: ${(err as Error).message}`));
    }
  }

  const explicit = Array.isArray(config.pipeline);
  const names = explicit ? config.pipeline! : builtins.defaultPipeline();
  names.forEach((n, i) => {
    // A declared plugin that failed to load has its own problem above; "unknown" would send the reader astray.
    if (!(n in defs) && !Object.hasOwn(config.plugins ?? {}, n)) problems.push(sources.at(["pipeline", i], `unknown plugin "${n}" (built in: ${Object.keys(builtinPlugins).join(", ")}; others must be declared under plugins:)`));
  });
  for (const p of checkOrder(names, (n) => defs[n]?.dependsOn)) problems.push(sources.at(explicit ? ["pipeline", p.index] : [], p.message));
  return names.filter((n) => n in defs).map((name) => ({ name, def: defs[name]!, options: options[name] }));
}

/**
 * A problem with a third-party plugin's options, at the offending option in gateway.yaml and naming it: ajv's own
 * words leave out which property is unknown or missing ("must NOT have additional properties").
 */
function optionsProblem(e: ErrorObject, name: string, sources: Sources): ConfigProblem {
  const sub = e.instancePath.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const at: Path = ["plugins", name, "options", ...sub];
  const where = `plugin ${name} ${["options", ...sub].join(".")}`;
  const params = e.params as Record<string, any>;
  switch (e.keyword) {
    case "additionalProperties":
      return sources.at([...at, params.additionalProperty], `${where}: unknown option "${params.additionalProperty}"`, true);
    case "required":
      return sources.at(at, `${where}: missing required option "${params.missingProperty}"`, true);
    case "enum":
      return sources.at(at, `${where}: must be one of ${params.allowedValues.map((v: unknown) => JSON.stringify(v)).join(", ")}`);
    default:
      return sources.at(at, `${where}: ${e.message}`);
  }
}

/** The module a plugin entry names: a path (relative to gateway.yaml's folder) or a package (installed near it). */
export function pluginModulePath(spec: string, dir: string): string {
  return spec.startsWith(".") || isAbsolute(spec) ? resolve(dir, spec) : resolvePackageImport(spec, dir);
}

async function importPlugin(spec: string, dir: string): Promise<PluginDefinition<any, any>> {
  const mod = await importPluginModule(pathToFileURL(pluginModulePath(spec, dir)).href);
  const def = mod.default ?? mod.plugin;
  if (!def || typeof def.handle !== "function" || typeof def.name !== "string") {
    throw new Error("its default export is not a definePlugin() result");
  }
  return def;
}

/** A provider's credentials_file is relative to the config file's directory, like the store path. */
function withAbsoluteFiles(pc: ProviderConfig, dir: string): ProviderConfig {
  return pc.credentials_file && !isAbsolute(pc.credentials_file) ? { ...pc, credentials_file: resolve(dir, pc.credentials_file) } : pc;
}

/** A model's retirement instants, parsed once here so a request only compares numbers (core/config/retirement.ts). */
function withRetirements(endpoints: ModelEndpointConfig[]) {
  const retiresAt = retirementInstants(endpoints);
  return retiresAt ? { retiresAt } : {};
}

function freeze(file: string, config: GatewayConfig, disabled: Map<string, string>, egressProxy: EgressProxy | undefined): RuntimeConfig {
  const providers = new Map<string, ProviderConfig>();
  for (const [name, pc] of Object.entries(config.providers ?? {})) if (!disabled.has(name)) providers.set(name, withAbsoluteFiles(pc, dirname(file)));
  if (!providers.has("sim")) providers.set("sim", { protocol: "sim" });

  const models = new Map<string, ModelRuntime>();
  for (const [id, m] of Object.entries(config.models ?? {})) {
    models.set(id, {
      id,
      type: m.type ?? "language",
      config: m,
      ...withRetirements(m.endpoints),
      endpoints: m.endpoints.filter((ep) => providers.has(ep.provider)).map((ep) => ({
        provider: ep.provider,
        upstreamModel: ep.model,
        pricing: ep.pricing ?? {},
        contextWindow: ep.context_window ?? m.context_window,
        maxTokens: ep.max_tokens ?? m.max_tokens,
        supportedParameters: ep.supported_parameters,
        reasoningModel: ep.reasoning_model,
        nativeResponses: ep.native_responses,
        acceptsReasoningEffort: ep.reasoning_effort,
      })),
    });
  }

  const projects = new Map<string, ProjectRuntime>();
  const keys = new Map<string, KeyRuntime>();
  for (const [id, p] of Object.entries(config.projects ?? {})) {
    projects.set(id, { id, config: p });
    for (const k of p.keys) {
      keys.set(k.sha256, {
        id: k.id,
        projectId: id,
        hash: Buffer.from(k.sha256, "hex"),
        expiresAt: k.expires_at ? Date.parse(k.expires_at) : null,
        revoked: k.revoked === true,
        source: "yaml",
        ...(k.rate_limits ? { rateLimits: k.rate_limits } : {}),
        ...(k.budget ? { budget: k.budget } : {}),
      });
    }
  }
  const adminKeys = new Map<string, AdminKeyRuntime>();
  for (const k of config.admin_keys ?? []) {
    adminKeys.set(k.sha256, { id: k.id, hash: Buffer.from(k.sha256, "hex"), scope: k.scope, expiresAt: k.expires_at ? Date.parse(k.expires_at) : null, revoked: k.revoked === true });
  }

  const s = config.server ?? {};
  const m = config.metrics ?? {};
  return {
    file,
    dir: dirname(file),
    raw: config,
    server: {
      host: s.host ?? "127.0.0.1",
      port: s.port ?? 8787,
      maxBodyBytes: s.max_body_bytes ?? 10 * 1024 * 1024,
      upstreamTimeoutMs: s.upstream_timeout_ms ?? 120_000,
      upstreamAnswerTimeoutMs: s.upstream_answer_timeout_ms ?? 600_000,
      upstreamLimits: s.upstream_limits,
      publicUrl: s.public_url,
      trustedProxies: trustedProxies(s.trusted_proxies ?? []).list,
      signingSecret: configuredSigningSecret(s.signing_secret),
      headersTimeoutMs: s.headers_timeout_ms ?? 20_000,
      requestTimeoutMs: s.request_timeout_ms ?? 60_000,
      keepAliveTimeoutMs: s.keep_alive_timeout_ms ?? 65_000,
      maxHeaderBytes: s.max_header_bytes ?? 16_384,
      maxConnections: s.max_connections ?? defaultMaxConnections(),
      shutdownGraceMs: s.shutdown_grace_ms ?? 30_000,
      readyRequiresCurrentConfig: s.ready_requires_current_config ?? false,
      urlFetch: {
        allowHosts: s.url_fetch?.allow_hosts ?? [],
        maxBytes: s.url_fetch?.max_bytes ?? 20 * 1024 * 1024,
        timeoutMs: s.url_fetch?.timeout_ms ?? 15_000,
        maxBytesInFlight: s.url_fetch?.max_bytes_in_flight ?? DEFAULT_MAX_BYTES_IN_FLIGHT,
        egress: egressProxy,
      },
      egressProxy,
      cors: corsPolicy(s.cors).policy,
    },
    metrics: {
      listener: m.listener ?? true,
      host: m.host ?? "127.0.0.1",
      port: m.port ?? 9464,
      portConfigured: m.port !== undefined,
      token: m.token,
      apiPort: m.api_port ?? false,
      projectLabels: m.project_labels ?? false,
    },
    // No store: section: the SQLite file ./data/gateway.db beside this config (docs/policies.md), so spend, the ledger
    // and API-created keys survive a restart. Every config is loaded from a file; a gateway built in code with no
    // file (core/public/testing.ts, the tests' runtime configs) names the memory store itself.
    store: config.store ?? { kind: "sqlite" },
    providers,
    disabledProviders: disabled,
    models,
    projects,
    keys,
    adminKeys,
  };
}

/** store.path, store.spool_dir, server.assets_dir, log.file...: a setting that names a place on disk. */
const isPathField = (at: Path) => /(^|_)(path|dir|file)$/.test(String(at[at.length - 1]));

/**
 * Releases before a253ff5 used a malformed reference as written: in a path, their data (a whole store) is under that
 * literal name, and following only "use ${VAR:-x}" would start on a new, empty one.
 */
const writtenAsIs = (s: string) =>
  `; releases before this one used this text as written, so data they kept there is in a file or directory literally named ${s} (relative to this file's directory): move it to where the setting will point, or keep using it`;
