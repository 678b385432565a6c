// One upstream MCP server as the gateway's client sees it: an SDK Client over Streamable HTTP, HTTP+SSE or stdio
// (a child process). The connection is made on first use and made again after it drops; a local server that dies
// is restarted with backoff (0.5 s doubling to 30 s; the count starts over once a process has lived 10 s). Lists
// (tools, prompts, resources) are cached until the server says they changed or the connection drops; after a minute
// the list had is still served at once while one refresh runs (stale-while-revalidate) — only while that refresh has
// run no longer than a request waits for a list (a frozen server shows no life past it: callers wait for the refresh
// as for a cold list) — and dropped if that refresh fails. The tool list is fetched as soon as a connection is made. Every wait is bounded by the server's timeout_ms; a
// connection attempt's too, as a whole (after a backoff's wait, at most that long), so a list waiting on it ends with
// the attempt's own outcome.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import type { UpstreamSpec } from "./spec.ts";
import { cwdProblem } from "./cwd.ts";
import { proxiedFetch, type ProxiedFetch } from "./proxied-fetch.ts";
import { ErrorAnswers } from "./error-answers.ts";
import { boundedFetch, DEFAULT_MAX_ANSWER_BYTES } from "./bounded-fetch.ts";
import { PendingRequests } from "./pending-requests.ts";
import { listWaitMs } from "./list-wait-bound.ts";
import { canonicalJson } from "../http/canonical-json.ts";
import { withinDepth } from "./list-depth.ts";
import { clientCallError, clientConnectError, connectCause } from "./client-error.ts";

export type ListKind = "tools" | "prompts" | "resources";

type ClientSdk = typeof import("./sdk-client.ts");
let clientSdk: Promise<ClientSdk> | undefined;
/** The SDK, loaded by the first connection (core/mcp/sdk-client.ts says why). */
const loadSdk = (): Promise<ClientSdk> => (clientSdk ??= import("./sdk-client.ts"));

/** How long a list is fresh (from its fetch's start); past it, it is served while one refresh runs. A test seam. */
export const listTiming = { ttlMs: 60_000 };
const MAX_PAGES = 50;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const HEALTHY_AFTER_MS = 10_000;

/** The server could not be reached (down, starting, backing off, closed): a call that throws this never reached it. */
export class NotConnectedError extends Error {}

/**
 * A connection attempt failed: one error object per attempt, thrown to everything that waited on it, so the
 * attempt's failure is counted once however many lists (of each kind) shared it.
 */
export class ConnectFailedError extends NotConnectedError {}

/** One list kind's cache: the fetch (and when it began), its items once it landed, and the refresh under way past the TTL. */
interface CachedList { at: number; value: Promise<unknown[]>; items?: unknown[]; refreshing?: { value: Promise<unknown[]>; at: number } }

/** What a list fetch is: its kind, its order, and whether a request gave up waiting on it (`leftOut`: a list answer went without it). */
interface FetchInfo { kind: string; seq: number; late?: { leftOut: boolean }; background?: boolean }

/** The stale list served at once, to the refresh whose outcome is the server's (core/mcp/list-wait.ts counts that). */
const refreshes = new WeakMap<Promise<unknown>, Promise<unknown>>();

/** The fetch whose outcome a list promise stands for: itself, or for a stale list served, the refresh behind it. */
export function fetchBehind<T>(served: Promise<T>): Promise<unknown> {
  return refreshes.get(served) ?? served;
}

/**
 * A list as a set: its items' canonical JSON in one order, so the same items in another order, or an item whose
 * objects name their members in another order (a tool's schema rebuilt by its server), are the same list (no
 * list_changed). Arrays keep their order: in a schema it can mean something (enum, prefixItems).
 */
function unordered(items: unknown[]): string {
  return JSON.stringify(items.map((i) => canonicalJson(i)).sort());
}

export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
}

/** A bounded wait: rejects with `what` timing out after ms (and with the signal's reason when it aborts). */
function bounded<T>(p: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      if (signal) {
        onAbort = () => reject(new Error("cancelled"));
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      }
    }),
  ]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  });
}

function headersObject(h: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(h).forEach((v, k) => { out[k] = v; });
  return out;
}

export class Upstream {
  private client?: Client;
  private connecting?: Promise<Client>;
  private failures = 0;
  private nextAttemptAt = 0;
  private restartTimer?: NodeJS.Timeout;
  private connectedAt = 0;
  private closed = false;
  private lists = new Map<string, CachedList>();
  /** The list fetches made, for what lands late (gaveUpOn()), and their count, so an older one never overrides a newer. */
  private readonly fetches = new WeakMap<Promise<unknown>, FetchInfo>();
  private fetchSeq = 0;
  /** Per kind, what the sessions were last told (the items of a list landed in time), to tell a late list's change. */
  private readonly told = new Map<string, string>();
  /** The names of the tools of the last list the server gave (kept while the server is down), and that fetch's order. */
  private toolNames = new Set<string>();
  private namesSeq = -1;
  /** False once a tool list fetch newer than those names failed: a call does not go on them until a list lands again. */
  private namesTrusted = true;
  /** The last connection's failure, said to callers while the server is down. */
  lastError?: string;
  /** A configured server behind the egress proxy: its fetch, made on first connect, closed with the upstream. */
  private proxied?: ProxiedFetch;
  /** JSON-RPC error answers, so a call's error the server answered is told from a failure of the server. */
  private readonly errorAnswers = new ErrorAnswers();

  constructor(
    readonly spec: UpstreamSpec,
    private readonly log: Logger,
    private readonly onListChanged: (kind: ListKind) => void,
    /** For a client-supplied URL: the SSRF-guarded fetch (core/mcp/guarded-fetch.ts). */
    private readonly fetchImpl?: FetchLike,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** Start a local server now rather than on first use. */
  warm(): void {
    this.ready().catch(() => {});
  }

  /** A connected client, connecting (after the backoff, if one is running) within timeout_ms. */
  async ready(signal?: AbortSignal): Promise<Client> {
    return bounded(this.connection(), this.spec.timeoutMs, `connecting to MCP server "${this.name}"`, signal).catch((err: Error) => {
      throw err instanceof NotConnectedError ? err : new NotConnectedError(err?.message ?? String(err));
    });
  }

  /**
   * The client, or the connection attempt under way (started if none is), waited for to its end: an attempt ends
   * by itself, after the backoff's wait (at most timeout_ms) and its own timeout_ms.
   */
  private async connection(): Promise<Client> {
    if (this.closed) throw new NotConnectedError(`MCP server "${this.name}" is closed`);
    if (this.client) return this.client;
    if (!this.connecting) {
      const wait = this.nextAttemptAt - Date.now();
      if (wait > this.spec.timeoutMs) throw new NotConnectedError(`MCP server "${this.name}" is unavailable (${this.lastError ?? "not connected"}); retrying in ${Math.ceil(wait / 1000)} s`);
      this.connecting = (async () => {
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        return this.connect();
      })().finally(() => { this.connecting = undefined; });
    }
    return this.connecting;
  }

  /** `onStreamCut`: the stream a legacy SSE session's answers come on was cut (core/mcp/bounded-fetch.ts). */
  private transport(sdk: ClientSdk, onStreamCut: (message: string) => void): Transport {
    const s = this.spec;
    if (s.kind === "stdio") {
      const t = new sdk.StdioClientTransport({ command: s.command, args: s.args, env: { ...sdk.getDefaultEnvironment(), ...s.env }, cwd: s.cwd, stderr: "pipe" });
      // Drained (a full pipe would stall the child) and logged at debug, a line at a time.
      t.stderr?.on("data", (chunk: Buffer) => this.log.debug("mcp server stderr", { server: s.name, text: String(chunk).slice(0, 2000) }));
      return t;
    }
    const requestInit: RequestInit = { headers: s.headers };
    const url = new URL(s.url);
    if (s.proxy && !this.fetchImpl) this.proxied ??= proxiedFetch(s.proxy, s.timeoutMs);
    const fetchImpl = boundedFetch(this.fetchImpl ?? this.proxied?.fetch ?? fetch, s.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES, s.name, onStreamCut);
    if (s.transport === "sse") return new sdk.SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: this.sseFetch(s.headers, fetchImpl) } as never, fetch: fetchImpl });
    return new sdk.StreamableHTTPClientTransport(url, { requestInit, fetch: fetchImpl, reconnectionOptions: { maxReconnectionDelay: 30_000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 2, maxRetries: 2 } });
  }

  /** The SSE transport's EventSource sends only what its fetch adds: the configured headers go on that request too. */
  private sseFetch(headers: Record<string, string>, base: FetchLike): FetchLike {
    return (url, init) => base(url, { ...init, headers: { ...headers, ...headersObject(init?.headers) } });
  }

  private async connect(): Promise<Client> {
    const sdk = await loadSdk();
    const client = new sdk.Client({ name: "model-gateway", version: "1" }, { capabilities: {} });
    client.onerror = (err) => this.log.debug("mcp upstream error", { server: this.name, error: String(err) });
    client.onclose = () => this.dropped(client);
    const changed = (kind: ListKind) => () => {
      this.forget(kind);
      this.onListChanged(kind);
    };
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, changed("tools"));
    client.setNotificationHandler(sdk.PromptListChangedNotificationSchema, changed("prompts"));
    client.setNotificationHandler(sdk.ResourceListChangedNotificationSchema, changed("resources"));
    // The requests waiting on a legacy SSE session's stream fail at once when it is cut, and the session (whose
    // stream is gone) is closed: the next call connects anew.
    const pending = new PendingRequests();
    const transport = this.transport(sdk, (message) => {
      pending.failAll(message);
      void client.close().catch(() => {});
    });
    try {
      // Bounded as a whole, not only its initialize request: a legacy SSE server's stream that never opens, or an
      // initialized notification never acknowledged, would otherwise hold the attempt (and every list on it) for ever.
      await bounded(client.connect(transport, { timeout: this.spec.timeoutMs }), this.spec.timeoutMs, "connecting");
    } catch (err) {
      const previous = this.lastError;
      const detail = this.connectError(err);
      // A client's server (server_url) is told no text of what answered: the log keeps it for the operator.
      this.lastError = this.fetchImpl ? clientConnectError(err) : detail;
      await client.close().catch(() => {});
      // Said once per distinct failure: a local server that cannot start is retried with backoff, for ever.
      if (this.lastError !== previous) {
        const cause = connectCause(err); // "fetch failed" alone does not say ECONNREFUSED or a certificate's failure
        this.log.warn("mcp server could not connect", { server: this.name, error: detail, ...(cause ? { cause } : {}) });
      }
      this.failed();
      throw new ConnectFailedError(`could not connect to MCP server "${this.name}": ${this.lastError}`);
    }
    if (this.closed) {
      await client.close().catch(() => {});
      throw new NotConnectedError(`MCP server "${this.name}" is closed`);
    }
    this.errorAnswers.tap(transport);
    pending.tap(transport); // outside the error answers' tap: the answers it makes are counted as the server's
    this.client = client;
    this.connectedAt = Date.now();
    // The lists are not cleared here: the last connection's went when it dropped (dropped()), and any now cached were
    // asked while this one was being made and are fetched on it. Clearing them lost a slow server's first list to
    // the next caller, who fetched it again and gave up waiting again.
    this.lastError = undefined;
    this.log.info("mcp server connected", { server: this.name, transport: this.spec.kind === "stdio" ? "stdio" : this.spec.transport });
    // Warm: the tool list is asked now, so the first call or list after a start or a reload finds it (a slow server's
    // list would otherwise be waited for, and given up on, by that request). Nobody's wait: its outcome is counted by
    // whoever waits on it.
    this.tools().catch(() => {});
    return client;
  }

  /** What went wrong connecting; a working directory that has gone is named (spawn's ENOENT names the command). */
  private connectError(err: unknown): string {
    const message = (err as Error)?.message ?? String(err);
    const s = this.spec;
    if (s.kind !== "stdio" || !s.cwd) return message;
    const why = cwdProblem(s.cwd);
    return why ? `its working directory ${s.cwd} ${why} (mcp_servers.${this.name}.cwd; ${message})` : message;
  }

  private failed(): void {
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.failures);
    this.failures++;
    this.nextAttemptAt = Date.now() + delay;
    // A local server is restarted without waiting for a caller: it is the gateway's to keep running.
    if (this.spec.kind === "stdio" && !this.closed) {
      clearTimeout(this.restartTimer);
      this.restartTimer = setTimeout(() => this.warm(), delay + 10);
      this.restartTimer.unref();
    }
  }

  private dropped(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.lists.clear();
    if (this.closed) return;
    if (Date.now() - this.connectedAt >= HEALTHY_AFTER_MS) this.failures = 0;
    this.lastError = this.spec.kind === "stdio" ? "the server process exited" : "the connection closed";
    this.log.warn("mcp server disconnected", { server: this.name, reason: this.lastError });
    this.failed();
    this.onListChanged("tools");
  }

  /** The server said a list changed: it is fetched anew, and a tool it removed is never called on its last names. */
  private forget(kind: string): void {
    for (const k of [...this.lists.keys()]) if (k === kind || k.startsWith(`${kind}:`)) this.lists.delete(k);
    if (kind !== "tools") return;
    this.toolNames = new Set();
    this.namesSeq = this.fetchSeq - 1; // a list asked before it said so does not bring the old names back
  }

  /** Whether the server is down: its last connection failed or dropped, and no new one is made yet. */
  get down(): boolean {
    return this.closed || (!this.client && this.lastError !== undefined);
  }

  /**
   * A request gave up waiting on this list fetch (`leftOut`: its answer, a list, went without the server's items).
   * When the list lands and is not what the sessions were last told (or they were told without it), they are told
   * the list changed, so their clients list again and see it.
   */
  gaveUpOn(fetch: Promise<unknown>, leftOut: boolean): void {
    const info = this.fetches.get(fetch);
    if (!info) return;
    info.late = { leftOut: leftOut || !!info.late?.leftOut };
  }

  /** A fetch landed: the tool names (when no newer fetch's are had), and list_changed for a late list that differs. */
  private landed(value: Promise<unknown>, items: unknown[]): void {
    const info = this.fetches.get(value);
    if (!info) return;
    if (info.kind === "tools" && info.seq > this.namesSeq) {
      this.namesSeq = info.seq;
      this.toolNames = new Set((items as Tool[]).map((t) => t.name));
      this.namesTrusted = true;
    }
    const now = unordered(items);
    const was = this.told.get(info.kind);
    this.told.set(info.kind, now);
    // A list the requests did not wait for: one they gave up on, or a refresh that served the stale one meanwhile.
    if ((info.late || info.background) && (info.late?.leftOut || now !== was) && !this.closed) {
      this.onListChanged(info.kind.split(":")[0] as ListKind);
    }
  }

  /**
   * A cached list, fetched page by page (at most MAX_PAGES). Empty when the server does not offer the capability.
   * One promise for every caller while it is cached, settled by the fetch itself (its connection attempt and each
   * page bounded by timeout_ms), never by a caller's wait: so its outcome is the server's, to be counted once.
   */
  private list<T>(kind: string, capability: "tools" | "prompts" | "resources", fetchPage: (c: Client, cursor?: string) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> {
    const hit = this.lists.get(kind);
    if (hit && Date.now() - hit.at < listTiming.ttlMs) return hit.value as Promise<T[]>;
    if (hit?.items) {
      // Stale but had: served at once while one refresh runs. The refresh replaces it when it lands; when it fails,
      // the stale list goes too (the server failed), and the next list waits for a fetch as a cold one does.
      // Only while the refresh has run no longer than a request waits for a list: past that the server shows no life
      // (a frozen one never answers), and callers wait for the refresh as for a cold list, bounded as ever.
      if (!hit.refreshing) {
        const at = Date.now();
        const refresh = this.fetchList(kind, capability, fetchPage, true);
        hit.refreshing = { value: refresh, at };
        refresh.then((items) => {
          if (this.lists.get(kind) === hit) this.lists.set(kind, { at, value: refresh, items });
        }, () => {
          if (this.lists.get(kind) === hit) this.lists.delete(kind);
        });
      }
      if (Date.now() - hit.refreshing.at > listWaitMs(this.spec.timeoutMs)) return hit.refreshing.value as Promise<T[]>;
      const served = Promise.resolve(hit.items as T[]);
      refreshes.set(served, hit.refreshing.value);
      return served;
    }
    const at = Date.now();
    const value = this.fetchList(kind, capability, fetchPage, false);
    const entry: CachedList = { at, value };
    this.lists.set(kind, entry);
    value.then((items) => { entry.items = items; }, () => { if (this.lists.get(kind) === entry) this.lists.delete(kind); });
    return value;
  }

  /** One fetch of a list, settled by itself (see list()); `background`: a refresh no request waits on. */
  private fetchList<T>(kind: string, capability: "tools" | "prompts" | "resources", fetchPage: (c: Client, cursor?: string) => Promise<{ items: T[]; nextCursor?: string }>, background: boolean): Promise<T[]> {
    const value = (async () => {
      const client = await this.connection();
      if (!client.getServerCapabilities()?.[capability]) return [];
      const out: T[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const r = await fetchPage(client, cursor).catch((err) => { throw this.toldToClient(err, kind); });
        out.push(...r.items);
        if (!r.nextCursor) break;
        cursor = r.nextCursor;
      }
      // Items nested past a request body's bound: a client's own server fails (the request names its tools[i]);
      // a configured server's list goes on without them.
      return withinDepth(kind, out, this.fetchImpl !== undefined, (why) => this.log.warn("mcp server listed an item the gateway leaves out", { server: this.name, reason: why }));
    })();
    const seq = this.fetchSeq++;
    this.fetches.set(value, { kind, seq, background });
    value.then((items) => {
      // Nothing the server listed may become an unhandled rejection: a throw here is the server's list, logged.
      try {
        this.landed(value, items);
      } catch (err) {
        this.log.warn("mcp server list could not be compared with the last one", { server: this.name, kind, error: String(err) });
      }
    }, () => {
      // The server did not list its tools: the names it last listed are not gone on until a list lands again.
      if (kind === "tools" && seq > this.namesSeq) this.namesTrusted = false;
    });
    return value;
  }

  private get opts() {
    return { timeout: this.spec.timeoutMs };
  }

  tools(): Promise<Tool[]> {
    return this.list<Tool>("tools", "tools", async (c, cursor) => {
      const r = await c.listTools(cursor ? { cursor } : undefined, this.opts);
      return { items: r.tools, nextCursor: r.nextCursor };
    });
  }

  /**
   * Whether a call naming `tool` goes on without waiting for the tool list tools() is fetching: no list is in hand
   * (a slow server's first, after a connect or a reload), the name is of the server's last list, and the server shows
   * life — it is up, no tool list has failed since that one landed, and the fetch under way has run no longer than a
   * request waits for a list (a frozen server's calls are refused within that wait, never sent).
   */
  goesOnLastNames(tool: string): boolean {
    const fetching = this.lists.get("tools");
    if (!fetching || fetching.items || this.down || !this.namesTrusted) return false;
    return Date.now() - fetching.at <= listWaitMs(this.spec.timeoutMs) && this.toolNames.has(tool);
  }

  /** Whether the server's latest tool list (kept while the server is down) names `tool`: no list yet, no. */
  listsTool(tool: string): boolean {
    return this.toolNames.has(tool);
  }

  /**
   * The names of the latest tool list, for the connection that replaces this one on a reload: none once a list of
   * its failed since (a frozen server's names would send the new connection's calls to wait out timeout_ms).
   */
  get knownToolNames(): ReadonlySet<string> {
    return this.namesTrusted ? this.toolNames : new Set();
  }

  /**
   * The names the connection this one replaced (a reload changed the server's settings, not which server it is) last
   * listed: its name check's last known names until this connection's own list lands.
   */
  inheritToolNames(names: ReadonlySet<string>): void {
    if (this.namesSeq < 0) this.toolNames = new Set(names);
  }

  prompts(): Promise<Prompt[]> {
    return this.list("prompts", "prompts", async (c, cursor) => {
      const r = await c.listPrompts(cursor ? { cursor } : undefined, this.opts);
      return { items: r.prompts, nextCursor: r.nextCursor };
    });
  }

  resources(): Promise<Resource[]> {
    return this.list("resources", "resources", async (c, cursor) => {
      const r = await c.listResources(cursor ? { cursor } : undefined, this.opts);
      return { items: r.resources, nextCursor: r.nextCursor };
    });
  }

  resourceTemplates(): Promise<ResourceTemplate[]> {
    return this.list("resources:templates", "resources", async (c, cursor) => {
      const r = await c.listResourceTemplates(cursor ? { cursor } : undefined, this.opts);
      return { items: r.resourceTemplates, nextCursor: r.nextCursor };
    });
  }

  /**
   * Call a tool. The wait restarts with each progress notification, up to max_total_timeout_ms; a cancelled signal
   * sends notifications/cancelled upstream. Throws when the call fails (the caller makes an error result of it): an
   * ErrorAnswer when the server answered it with a JSON-RPC error.
   */
  async call(name: string, args: Record<string, unknown> | undefined, o: CallOptions = {}): Promise<CallToolResult> {
    const client = await this.ready(o.signal);
    const { CallToolResultSchema } = await loadSdk(); // loaded by ready()'s connection: settles at once
    try {
      return (await client.callTool({ name, arguments: args ?? {} }, CallToolResultSchema, {
        signal: o.signal,
        timeout: this.spec.timeoutMs,
        maxTotalTimeout: this.spec.maxTotalMs,
        resetTimeoutOnProgress: true,
        onprogress: o.onprogress ?? (() => {}),
      })) as CallToolResult;
    } catch (err) {
      throw this.toldToClient(this.errorAnswers.classify(err), "call");
    }
  }

  /** A client's server's HTTP failure, as the tenant may see it (core/mcp/client-error.ts); the full text logged. */
  private toldToClient(err: unknown, what: string): unknown {
    if (!this.fetchImpl) return err;
    const told = clientCallError(err);
    if (told !== err) this.log.warn("mcp server answered over HTTP with an error", { server: this.name, what, error: String((err as Error)?.message ?? err) });
    return told;
  }

  async getPrompt(name: string, args: Record<string, string> | undefined, signal?: AbortSignal): Promise<GetPromptResult> {
    const client = await this.ready(signal);
    return client.getPrompt({ name, arguments: args }, { ...this.opts, signal });
  }

  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const client = await this.ready(signal);
    return client.readResource({ uri }, { ...this.opts, signal });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    const c = this.client;
    this.client = undefined;
    if (c) await bounded(c.close(), 5_000, "closing").catch(() => {});
    await this.proxied?.close();
  }
}
