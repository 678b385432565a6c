// The Responses API's `mcp` tool for every model. A native OpenAI target with only server_url tools gets the request
// as it is (OpenAI runs the tool); otherwise the gateway runs it: it lists each server's tools (an mcp_list_tools
// item, unless an earlier turn's is in the input), offers them to the model as functions, executes the calls the
// model makes (mcp_call items; mcp_approval_request when require_approval says so, answered by an
// mcp_approval_response in a later request), and continues the model's turn with the results, for at most
// mcp.max_tool_rounds model turns. Streamed, the model's own events pass through renumbered and the mcp items get
// the events OpenAI sends for them (response.mcp_list_tools.*, response.mcp_call.*, response.mcp_call_arguments.*).
import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GatewayError } from "../errors.ts";
import type { GatewayContext, GatewayResponse } from "../pipeline/context.ts";
import type { SseEvent } from "../sse/parse.ts";
import type { Target, Usage } from "../contracts/provider.ts";
import { upstreamProtocolOf } from "../contracts/translator.ts";
import { runToolCall } from "../mcp/tool-call.ts";
import { CircuitOpenError } from "../mcp/list-wait.ts";
import { maxToolRounds } from "../metering/model-turns.ts";
import { servedTarget } from "../metering/usage-ceiling.ts";
import { LiveEvents } from "./live-events.ts";
import { addUsage, addWireUsage } from "./turn-usage.ts";
import { asFunctions, functionName, listFor, mcpCallAsFunction, mcpToolsOf, needsApproval, resolveMcpTools, type FunctionRef, type ListedTool, type McpToolSpec } from "./mcp-tools.ts";

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

function nativePassthrough(ctx: GatewayContext, tools: any[]): boolean {
  if (!tools.every((t) => (typeof t.server_url === "string" && t.server_url) || t.connector_id)) return false;
  const target = ctx.targets[0];
  const driver = target && ctx.drivers.get(target.provider);
  return !!driver && upstreamProtocolOf(driver, "responses", target) === "responses";
}

/**
 * Whether serveMcp will run the mcp tool itself (model turns of its own, each rewriting ctx.body): the response it
 * makes is then not one any upstream holds whole, so it is never continued by the upstream's own id.
 */
export function gatewayRunsMcp(ctx: GatewayContext): boolean {
  const tools = mcpToolsOf(ctx.body);
  return tools.length > 0 && !nativePassthrough(ctx, tools);
}

/** A tool result as the text the model (function_call_output) and the mcp_call item (output / error) carry. */
function resultText(r: CallToolResult): string {
  return (r.content ?? []).map((c: any) => (c.type === "text" ? c.text : JSON.stringify(c))).join("\n");
}

type Emit = (type: string, fields: Record<string, unknown>) => void;

class McpRun {
  private readonly refs = new Map<string, FunctionRef>();
  /** Output items of the response so far, in order. */
  readonly output: any[] = [];
  private input: any[] = [];
  /** Usage of the turns accounted so far; turnOpen: the current turn's (in ctx.usage) is not in it yet. */
  private usage?: Usage;
  /** Each accounted turn's usage (ctx.turnUsages: billing judges a long-prompt tier per turn). */
  private readonly turns: Usage[] = [];
  /** The endpoint that served each of them (ctx.turnTargets: each turn is billed at its own prices). */
  private readonly targets: Array<Target | undefined> = [];
  private turnOpen = false;
  private wireUsage: any;
  private last: any;
  private rounds = 0;
  private incomplete = false;
  /** The tools as the client sent them (the body's become functions): what the response shows. */
  readonly originalTools: any[];
  private readonly max: number;
  /**
   * The request's body, which every turn rewrites (tools, input) and hands to dispatch: kept here, because an attempt
   * may put another body made from it in ctx.body (core/endpoints/responses-state.ts) that a later turn must not edit.
   */
  private readonly body: any;

  constructor(private readonly ctx: GatewayContext, private readonly specs: McpToolSpec[], private readonly dispatch: () => Promise<void>) {
    this.body = ctx.body;
    this.originalTools = ctx.body.tools;
    this.max = maxToolRounds(ctx.config);
  }

  private specFor(label: string): McpToolSpec | undefined {
    return this.specs.find((s) => s.label === label);
  }

  private inputItems(): any[] {
    const raw = this.body.input;
    return typeof raw === "string" ? [{ role: "user", content: raw }] : Array.isArray(raw) ? raw : [];
  }

  private approvalAnswers(items: any[]): Map<string, any> {
    const answers = new Map<string, any>();
    for (const it of items) if (it?.type === "mcp_approval_response" && typeof it.approval_request_id === "string") answers.set(it.approval_request_id, it);
    return answers;
  }

  /** Whether prepare() will run calls (approved in this request's input) before the first model turn. */
  runsApprovedCalls(): boolean {
    const items = this.inputItems();
    const answers = this.approvalAnswers(items);
    return items.some((it) => it?.type === "mcp_approval_request" && answers.get(it.id)?.approve === true && this.specFor(it.server_label));
  }

  /** Input items of earlier turns made into what the model reads; approved calls run now. */
  async prepare(emit: Emit): Promise<void> {
    const items = this.inputItems();
    const answers = this.approvalAnswers(items);
    for (const it of items) if (it?.type === "mcp_list_tools" && Array.isArray(it.tools)) {
      const spec = this.specFor(it.server_label);
      if (spec) spec.known = it.tools;
    }
    const out: any[] = [];
    for (const it of items) {
      switch (it?.type) {
        case "mcp_list_tools":
        case "mcp_approval_response":
          break;
        case "mcp_call":
          out.push(...mcpCallAsFunction(it));
          break;
        case "mcp_approval_request": {
          const answer = answers.get(it.id);
          if (!answer) break; // still unanswered: the model does not see it
          const spec = this.specFor(it.server_label);
          const name = functionName(it.server_label, it.name);
          if (answer.approve === true && spec) {
            const call = await this.execute(spec, it.name, it.arguments, emit, it.id);
            out.push({ type: "function_call", call_id: it.id, name, arguments: it.arguments ?? "{}" }, { type: "function_call_output", call_id: it.id, output: call.modelText });
          } else {
            const why = typeof answer.reason === "string" && answer.reason ? `: ${answer.reason}` : "";
            out.push({ type: "function_call", call_id: it.id, name, arguments: it.arguments ?? "{}" }, { type: "function_call_output", call_id: it.id, output: `The user did not approve this tool call${why}` });
          }
          break;
        }
        default:
          out.push(it);
      }
    }
    this.input = out;
  }

  /** List every server the input holds no listing of (an mcp_list_tools item each) and build the function tools. */
  async list(emit: Emit): Promise<void> {
    const functions: any[] = [];
    for (const spec of this.specs) {
      let tools: ListedTool[] | undefined = spec.known;
      if (!tools) {
        const item: any = { type: "mcp_list_tools", id: id("mcpl"), server_label: spec.label, tools: [] };
        const index = this.output.length;
        this.output.push(item);
        emit("response.output_item.added", { output_index: index, item: { ...item } });
        emit("response.mcp_list_tools.in_progress", { item_id: item.id, output_index: index });
        try {
          tools = await listFor(this.ctx, spec);
        } catch (err) {
          throw new GatewayError(502, "UPSTREAM_ERROR", `tools[${spec.index}]: listing the tools of MCP server "${spec.label}" failed: ${(err as Error).message ?? err}`, {
            details: { field: `tools[${spec.index}]` },
            // An open circuit: when it lets a request try the server again, as a model's open circuit says.
            retryAfter: err instanceof CircuitOpenError ? err.retryAfterMs / 1000 : undefined,
          });
        }
        item.tools = tools;
        emit("response.mcp_list_tools.completed", { item_id: item.id, output_index: index });
        emit("response.output_item.done", { output_index: index, item });
      }
      functions.push(...asFunctions(spec, tools, this.refs));
    }
    const body = this.body;
    body.tools = [...this.originalTools.filter((t: any) => t?.type !== "mcp"), ...functions];
    const choice = body.tool_choice;
    if (choice && typeof choice === "object" && choice.type === "mcp") {
      body.tool_choice = typeof choice.name === "string" ? { type: "function", name: functionName(choice.server_label, choice.name) } : "required";
    }
  }

  /** Run one call, with the mcp_call item and its events. */
  private async execute(spec: McpToolSpec, tool: string, args: string, emit: Emit, approvalId: string | null = null): Promise<{ modelText: string }> {
    const index = this.output.length;
    const item: any = { type: "mcp_call", id: id("mcp"), server_label: spec.label, name: tool, arguments: args, output: null, error: null, status: "in_progress", approval_request_id: approvalId };
    this.output.push(item);
    emit("response.output_item.added", { output_index: index, item: { ...item, arguments: "" } });
    emit("response.mcp_call.in_progress", { item_id: item.id, output_index: index });
    emit("response.mcp_call_arguments.delta", { item_id: item.id, output_index: index, delta: args });
    emit("response.mcp_call_arguments.done", { item_id: item.id, output_index: index, arguments: args });
    let parsed: Record<string, unknown> | undefined;
    let result: CallToolResult;
    try {
      parsed = args ? JSON.parse(args) : {};
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || typeof parsed !== "object" || Array.isArray(parsed)) {
      result = { content: [{ type: "text", text: "The arguments were not a JSON object" }], isError: true };
    } else {
      result = await runToolCall(this.ctx as GatewayContext & { auth: NonNullable<GatewayContext["auth"]> }, spec.upstream, {
        server: spec.label, tool, arguments: parsed, via: "responses", metricServer: spec.clientUrl ? "(client_url)" : undefined,
      }, { signal: this.ctx.signal });
    }
    const text = resultText(result);
    if (result.isError) Object.assign(item, { error: text, status: "failed" });
    else Object.assign(item, { output: text, status: "completed" });
    emit(result.isError ? "response.mcp_call.failed" : "response.mcp_call.completed", { item_id: item.id, output_index: index });
    emit("response.output_item.done", { output_index: index, item });
    return { modelText: result.isError ? `Error: ${text}` : text };
  }

  /** One model turn's body: the client's request with the converted input. */
  async runModel(): Promise<GatewayResponse> {
    const ctx = this.ctx;
    this.body.input = this.input;
    ctx.body = this.body;
    this.settle();
    ctx.usage = undefined;
    this.turnOpen = true;
    ctx.response = undefined;
    this.rounds++;
    ctx.modelTurns = this.rounds; // the meter's ceiling: every turn's usage is summed into one record
    // Each turn is a model request of its own, with its own retries and fallbacks: dispatch() tries while
    // ctx.attempts is shorter than maxAttempts, so earlier turns' attempts are set aside meanwhile (and put back in
    // front, in the same array, for the ledger record and the answer's metadata).
    const earlier = ctx.attempts.splice(0);
    try {
      await this.dispatch();
    } catch (e) {
      // No endpoint served this turn: it adds no usage, and the meter estimates none for it.
      ctx.modelTurns = this.rounds - 1;
      // "All 2 attempts failed" counts this turn's; the record lists every turn's: say which turn.
      if (e instanceof GatewayError && this.rounds > 1) throw new GatewayError(e.status, e.code, `model turn ${this.rounds}: ${e.message}`, { details: e.details, retryAfter: e.retryAfter, retryable: e.retryable, headers: e.headers, cause: e.cause, type: e.type });
      throw e;
    } finally {
      ctx.attempts.unshift(...earlier);
    }
    if (!ctx.response) throw new Error("no response from the model");
    return ctx.response;
  }

  /**
   * Add the current turn's usage to the total, and make ctx.usage (what the ledger bills) the total of every turn
   * that ran so far. Called after each turn and on every way out, a failed later turn included: the turns that
   * completed were billed by their upstream.
   */
  settle(): void {
    if (this.turnOpen) {
      this.usage = addUsage(this.usage, this.ctx.usage);
      if (this.ctx.usage) {
        this.turns.push(this.ctx.usage);
        this.targets.push(servedTarget(this.ctx)); // the turn's last attempt: the one that served it
      }
      this.turnOpen = false;
    }
    this.ctx.usage = this.usage;
    this.ctx.turnUsages = this.turns;
    this.ctx.turnTargets = this.targets;
  }

  /** After a model turn: account it, run its mcp calls. Returns whether another turn follows. */
  async afterTurn(response: any, emit: Emit): Promise<boolean> {
    this.last = response;
    this.settle();
    this.wireUsage = addWireUsage(this.wireUsage, response?.usage);
    const items: any[] = Array.isArray(response?.output) ? response.output : [];
    const calls = items.filter((i) => i?.type === "function_call" && this.refs.has(i.name));
    const clientCalls = items.some((i) => i?.type === "function_call" && !this.refs.has(i.name));
    const followUp: any[] = [];
    let pending = false;
    for (const c of calls) {
      const ref = this.refs.get(c.name)!;
      if (needsApproval(ref.spec, ref.tool)) {
        const req = { type: "mcp_approval_request", id: id("mcpr"), server_label: ref.spec.label, name: ref.tool, arguments: c.arguments ?? "{}" };
        const index = this.output.length;
        this.output.push(req);
        emit("response.output_item.added", { output_index: index, item: req });
        emit("response.output_item.done", { output_index: index, item: req });
        pending = true;
        continue;
      }
      const r = await this.execute(ref.spec, ref.tool, c.arguments ?? "{}", emit);
      followUp.push({ type: "function_call", call_id: c.call_id, name: c.name, arguments: c.arguments ?? "{}" }, { type: "function_call_output", call_id: c.call_id, output: r.modelText });
    }
    if (!followUp.length || pending || clientCalls) return false;
    if (this.rounds >= this.max) {
      this.incomplete = true;
      return false;
    }
    // The model reads its own turn (reasoning, text) and the results.
    this.input = [...this.input, ...items.filter((i) => !(i?.type === "function_call" && this.refs.has(i.name))), ...followUp];
    return true;
  }

  /** The response the client gets: the last turn's, with every turn's items and usage. */
  final(first: any): any {
    const r = { ...(this.last ?? first) };
    if (first?.id) r.id = first.id;
    r.output = this.output;
    r.tools = this.originalTools;
    if (this.wireUsage) r.usage = this.wireUsage;
    if (this.incomplete) Object.assign(r, { status: "incomplete", incomplete_details: { reason: "max_tool_calls" } });
    this.settle();
    return r;
  }

  /** Non-mcp items of a turn go to the output as the model made them. */
  keep(items: any[]): void {
    for (const i of items) if (!(i?.type === "function_call" && this.refs.has(i.name))) this.output.push(i);
  }

  isMcpCall(item: any): boolean {
    return item?.type === "function_call" && this.refs.has(item.name);
  }
}

export async function serveMcp(ctx: GatewayContext, dispatch: () => Promise<void>): Promise<void> {
  if (!gatewayRunsMcp(ctx)) return dispatch();
  const tools = mcpToolsOf(ctx.body);
  if (!ctx.auth) throw new GatewayError(401, "INVALID_API_KEY", "The mcp tool needs a project key");
  const closers: Array<() => Promise<void>> = [];
  // Each one runs whatever the others do: one left undone would keep a connection (or a replaced server) open.
  ctx.onFinish(async () => { for (const c of closers) await c().catch(() => {}); });
  const specs = await resolveMcpTools(ctx, tools, closers);
  const run = new McpRun(ctx, specs, dispatch);
  if (ctx.body.stream !== true) {
    const none: Emit = () => {};
    await run.prepare(none);
    await run.list(none);
    let first: any;
    try {
      for (;;) {
        const r = await run.runModel();
        if (r.kind !== "json") throw new Error("expected a JSON answer");
        if (r.status !== 200) return;
        const body = r.body as any;
        first ??= body;
        run.keep(body.output ?? []);
        if (!(await run.afterTurn(body, none))) break;
      }
      ctx.response = { kind: "json", status: 200, body: run.final(first) };
    } finally {
      run.settle(); // a later turn that failed: the turns before it are billed still
    }
    return;
  }
  if (run.runsApprovedCalls()) {
    // Calls approved in this follow-up run before the model's first turn, for as long as a tool takes: the stream
    // starts first, with a response.created of the gateway's own, so their events go out as they happen and
    // keep-alives between (an error after this point, the first turn's included, is an error event).
    ctx.response = { kind: "stream", status: 200, events: streamTurns(ctx, run, { opening: openingResponse(ctx, run) }) };
    return;
  }
  // Streamed: the mcp items' events are made before the model's first event is known, so they are queued until then.
  const early: Array<[string, Record<string, unknown>]> = [];
  await run.prepare((t, f) => early.push([t, f]));
  await run.list((t, f) => early.push([t, f]));
  const firstTurn = await run.runModel();
  if (firstTurn.kind !== "stream") {
    ctx.response = firstTurn; // an error answer
    return;
  }
  const response: GatewayResponse = { kind: "stream", status: firstTurn.status, events: streamTurns(ctx, run, { turn: firstTurn, early }) };
  ctx.response = response;
}

/** The response as it starts, before any model turn: what response.created shows when the gateway opens the stream. */
function openingResponse(ctx: GatewayContext, run: McpRun): any {
  return {
    id: id("resp"), object: "response", created_at: Math.floor(Date.now() / 1000), status: "in_progress", error: null, incomplete_details: null,
    model: ctx.model?.id ?? ctx.body.model, output: [], previous_response_id: null, tools: run.originalTools, usage: null,
  };
}

/**
 * How the stream begins: with the first model turn already made (its mcp items' events queued in `early`), or with
 * `opening` sent at once and everything before the first turn (approved calls, listings) run within the stream.
 */
type StreamStart = { turn: GatewayResponse & { kind: "stream" }; early: Array<[string, Record<string, unknown>]> } | { opening: any };

async function* streamTurns(ctx: GatewayContext, run: McpRun, start: StreamStart): AsyncGenerator<SseEvent> {
  try {
    let seq = 0;
    // The mcp items' events go out as they are made (a call's in_progress when it starts), keep-alives while it runs.
    const live = new LiveEvents();
    const emit: Emit = (type, fields) => { live.push({ event: type, data: JSON.stringify({ type, ...fields, sequence_number: seq++ }) }); };
    let first: any;
    let turn: GatewayResponse;
    let early: Array<[string, Record<string, unknown>]> = [];
    const mine = ctx.response;
    if ("opening" in start) {
      first = start.opening;
      emit("response.created", { response: first });
      emit("response.in_progress", { response: first });
      yield* live.take();
      yield* live.during(run.prepare(emit));
      yield* live.during(run.list(emit));
      try {
        turn = yield* live.during(run.runModel());
      } finally {
        ctx.response = mine;
      }
    } else {
      turn = start.turn;
      early = start.early;
    }
    for (;;) {
      if (turn.kind !== "stream") throw new GatewayError(502, "UPSTREAM_ERROR", "The model's next turn did not stream");
      /** Upstream output_index -> ours; the model's mcp function calls (left out) map to -1. */
      const index = new Map<number, number>();
      const base = run.output.length;
      let added = 0;
      let done: any;
      for await (const ev of turn.events) {
        let d: any;
        try {
          d = JSON.parse(ev.data);
        } catch {
          continue;
        }
        const type: string = d?.type ?? ev.event ?? "";
        if (type === "error") {
          run.settle(); // before the error event, which may end the response
          yield { event: ev.event ?? "error", data: JSON.stringify({ ...d, sequence_number: seq++ }) };
          return;
        }
        if (type === "response.created" || type === "response.in_progress") {
          if (first) continue;
          first = d.response;
          // Both opening events, once, from the first turn's first (later turns' are the loop's own business); the
          // client's tools, not the functions made of them.
          const opening = { response: { ...d.response, tools: run.originalTools } };
          emit("response.created", opening);
          emit("response.in_progress", opening);
          for (const [t, f] of early.splice(0)) emit(t, f);
          yield* live.take();
          continue;
        }
        if (early.length && first) {
          for (const [t, f] of early.splice(0)) emit(t, f);
          yield* live.take();
        }
        if (type === "response.completed" || type === "response.incomplete" || type === "response.failed") {
          done = d.response;
          continue;
        }
        if (typeof d.output_index === "number") {
          if (type === "response.output_item.added") index.set(d.output_index, run.isMcpCall(d.item) ? -1 : base + added++);
          const ours = index.get(d.output_index);
          if (ours === undefined || ours === -1) continue;
          d.output_index = ours;
        }
        d.sequence_number = seq++;
        yield { event: ev.event ?? type, data: JSON.stringify(d) };
      }
      ctx.response = mine;
      if (!done) throw new GatewayError(502, "UPSTREAM_ERROR", "The model's stream ended without its final event");
      run.keep(done.output ?? []);
      const more = yield* live.during(run.afterTurn(done, emit));
      if (!more) break;
      try {
        turn = yield* live.during(run.runModel());
      } finally {
        ctx.response = mine; // the stream the client is reading, also when the turn failed
      }
    }
    const final = run.final(first);
    emit(final.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final });
    yield* live.take();
  } finally {
    run.settle(); // a later turn that failed or was cut: the turns before it are billed still
  }
}
