// A fake AWS Bedrock Runtime that verifies what the real one verifies (reference protocols-2 §2, §5):
// - every request authenticated: a Bedrock API key (Bearer) or a SigV4 signature recomputed from the received bytes
//   (bedrock-sigv4.ts); a mismatch is 403 InvalidSignatureException with `x-amzn-errortype` and `{"message"}`;
// - Converse bodies checked (content arrays, no blank text, toolConfig required with toolUse/toolResult history, no
//   empty tools, a tool's inputSchema.json an object schema (to Claude with no oneOf/anyOf/allOf at its root, Claude's
//   refusal relayed, as is its refusal of a blank stop sequence), no tool name twice, no unknown top-level keys, outputConfig.textFormat as the API types it: the
//   json_schema type, one structure member, the schema a JSON string), InvokeModel bodies checked (anthropic_version bedrock-2023-05-31, no
//   key Claude on Bedrock does not take: model, stream, thread… (claude-cloud-keys.ts), Claude's checks on stop sequences, tool input schemas and blank text); Claude on Converse refuses a prompt over 200k
//   tokens unless additionalModelRequestFields.anthropic_beta names a context-1m-* beta (Bedrock reads no beta header);
// - ConverseStream / InvokeModelWithResponseStream as real event-stream frames with correct CRCs
//   (@smithy/eventstream-codec), written so that frames are split across TCP writes and several share one write;
//   text/reasoning blocks without a start event, tool input as JSON string fragments, messageStop then metadata,
//   the `p` padding field; a Converse answer asked for outputConfig.textFormat is text matching the schema (a model
//   AWS does not list for structured outputs refuses it with a ValidationException), a model
//   made to call a tool (toolChoice any) calls one without text first; the tools called can be scripted; scripted failures: HTTP errors (ThrottlingException…), an exception frame mid-stream,
//   a corrupted frame (bad CRC), a well-formed frame of a given size (past the gateway's event bound).
import type { ServerResponse } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { fakeVector, listenLoopback, readRequest, approxTokens, type Recorded } from "./http-fake.ts";
import { verifySigV4, type AwsCreds } from "./bedrock-sigv4.ts";
import { blankTextError, stopSequencesError, toolSchemaError } from "./anthropic-checks.ts";
import { extraKeyError, INVOKE_MODEL_KEYS } from "./claude-cloud-keys.ts";
import { sampleFor, toolInput } from "./schema-sample.ts";

export const FAKE_AWS: AwsCreds & { region: string } = { accessKeyId: "AKIAFAKEBEDROCK00001", secretAccessKey: "fake+Secret/Key0000000000000000000000000", region: "us-west-2" };
export const FAKE_BEDROCK_API_KEY = "bedrock-api-key-ZmFrZS1iZWRyb2NrLWtleQ==";
export const BEDROCK_TEXT = "Hello from the fake Bedrock upstream.";

const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** Bytes per write while more than this is left to write. */
const LARGE_WRITE = 1024 * 1024;

export type BedrockFailure =
  | { kind: "status"; status: number; type: string; message?: string; path?: string }
  | { kind: "exception"; afterEvents: number; type?: string; path?: string }
  | { kind: "corrupt"; afterEvents: number; path?: string }
  /** A contentBlockDelta frame, right CRCs and all, of a little over `bytes`. */
  | { kind: "large"; afterEvents: number; bytes: number; path?: string };

export interface FakeBedrock {
  baseUrl: string;
  requests: (Recorded & { model: string; action: string })[];
  failures: BedrockFailure[];
  /** Credentials the fake accepts; a session token, when set, must be sent and signed. */
  creds: AwsCreds;
  region: string;
  /** Bytes per write of a stream, cycled: small ones split frames, large ones carry several. */
  writeSizes: number[];
  /** The input the model calls a tool of this name with; by default one sampled from the tool's schema. */
  toolInputs: Record<string, Record<string, unknown>>;
  /** The tools the model calls in its next Converse answers, one list per answer (taken in order); by default as plan() picks. */
  calls: string[][];
  close(): Promise<void>;
}

type Block = { kind: "reasoning"; text: string; signature: string } | { kind: "text"; text: string } | { kind: "tool"; id: string; name: string; input: Record<string, unknown> };

export const signReasoning = (text: string) => "sig_" + createHash("sha256").update(text).digest("base64");
const words = (t: string) => t.match(/\s*\S+/g) ?? [];
const pad = () => randomBytes(3 + Math.floor(Math.random() * 6)).toString("hex");

/** The model's answer, in neutral form: rendered as Converse or as Anthropic. */
/**
 * `any`: the model must call some tool (Converse's toolChoice any), `calls`: the tools it calls (a script), `format`:
 * the JSON Schema its text answer follows (outputConfig.textFormat).
 */
function plan(o: { thinking: boolean; tools: string[]; lastHasResult: boolean; forced?: string; any?: boolean; calls?: string[]; format?: unknown; max?: number; schemas?: Record<string, unknown>; inputs?: Record<string, Record<string, unknown>> }): { blocks: Block[]; stop: "end_turn" | "tool_use" | "max_tokens" } {
  const blocks: Block[] = [];
  if (o.thinking) {
    const text = "Let me think about this carefully.";
    blocks.push({ kind: "reasoning", text, signature: signReasoning(text) });
  }
  // A forced tool is called whatever the last turn holds (a JSON answer after a tool loop), as the real model must.
  const calls = o.calls?.filter((n) => o.tools.includes(n)) ?? [];
  if (o.tools.length && (o.forced || o.any || calls.length || !o.lastHasResult)) {
    const names = o.forced ? [o.forced] : calls.length ? calls : o.any && o.lastHasResult ? o.tools.slice(0, 1) : o.tools.slice(0, 2);
    // Made to call a tool (a named one or any), Claude says nothing first: the answer starts with the call.
    if (!o.forced && !o.any) blocks.push({ kind: "text", text: "Let me check." });
    // An input with what the tool's schema requires (a forced JSON tool's answer parses as the client's schema).
    names.forEach((name, i) => blocks.push({ kind: "tool", id: `tooluse_fake${i}${randomBytes(4).toString("hex")}`, name, input: o.inputs?.[name] ?? toolInput(o.schemas?.[name], { city: i === 0 ? "Paris" : "Tokyo" }) }));
    return { blocks, stop: "tool_use" };
  }
  const pieces = o.format !== undefined ? [JSON.stringify(sampleFor(o.format))] : words(o.lastHasResult ? "The weather is sunny." : BEDROCK_TEXT);
  const cut = pieces.slice(0, Math.max(1, o.max ?? pieces.length));
  blocks.push({ kind: "text", text: cut.join("") });
  return { blocks, stop: cut.length < pieces.length ? "max_tokens" : "end_turn" };
}

function frame(headers: Record<string, string>, payload: unknown): Uint8Array {
  const h: Record<string, { type: "string"; value: string }> = {};
  for (const [k, v] of Object.entries(headers)) h[k] = { type: "string", value: v };
  return codec.encode({ headers: h, body: fromUtf8(JSON.stringify(payload)) });
}
export const eventFrame = (type: string, payload: unknown) => frame({ ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, payload);
export const exceptionFrame = (type: string, payload: unknown) => frame({ ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" }, payload);

const CONVERSE_KEYS = new Set(["messages", "system", "inferenceConfig", "toolConfig", "outputConfig", "additionalModelRequestFields", "additionalModelResponseFieldPaths", "guardrailConfig", "performanceConfig", "serviceTier", "requestMetadata", "promptVariables"]);
const BLOCK_KEYS = new Set(["text", "image", "document", "video", "toolUse", "toolResult", "reasoningContent", "cachePoint", "guardContent", "citationsContent"]);

/** Converse refuses blank text (whitespace only is blank) in system, in a turn and in a toolResult's content. */
const isBlankText = (c: any) => typeof c?.text === "string" && c.text.trim() === "";
const blankText = (object: string, at: string) => `The text field in the ${object} object at ${at} is blank. Add text to the text field, and try again.`;

function blankConverseText(b: any): string | undefined {
  for (const [i, s] of (Array.isArray(b.system) ? b.system : []).entries()) if (isBlankText(s)) return blankText("SystemContentBlock", `system.${i}`);
  for (const [i, m] of b.messages.entries()) {
    for (const [j, c] of (Array.isArray(m?.content) ? m.content : []).entries()) {
      if (isBlankText(c)) return blankText("ContentBlock", `messages.${i}.content.${j}`);
      for (const [k, r] of (Array.isArray(c?.toolResult?.content) ? c.toolResult.content : []).entries()) {
        if (isBlankText(r)) return blankText("ToolResultContentBlock", `messages.${i}.content.${j}.toolResult.content.${k}`);
      }
    }
  }
  return undefined;
}

function converseProblem(b: any): string | undefined {
  if (!b || typeof b !== "object") return "Malformed input request, please reformat your input and try again.";
  for (const k of Object.keys(b)) if (!CONVERSE_KEYS.has(k)) return `Malformed input request: extraneous key [${k}] is not permitted, please reformat your input and try again.`;
  if (!Array.isArray(b.messages) || !b.messages.length) return "A conversation must start with a user message. Try again with a conversation that starts with a user message.";
  if (b.messages[0].role !== "user") return "A conversation must start with a user message. Try again with a conversation that starts with a user message.";
  let toolBlocks = false;
  for (let i = 0; i < b.messages.length; i++) {
    const m = b.messages[i];
    if (i > 0 && b.messages[i - 1].role === m.role) return "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.";
    if (!Array.isArray(m.content) || !m.content.length) return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
    for (const c of m.content) {
      const keys = Object.keys(c ?? {});
      if (keys.length !== 1 || !BLOCK_KEYS.has(keys[0]!)) return `Malformed input request: messages.${i}.content: each content block must have exactly one member, please reformat your input and try again.`;
      if (c.toolUse || c.toolResult) toolBlocks = true;
      if (c.image && typeof c.image.source?.bytes !== "string") return "The provided image must have bytes.";
    }
  }
  if (b.toolConfig && (!Array.isArray(b.toolConfig.tools) || !b.toolConfig.tools.length)) return "The value at toolConfig.tools failed to satisfy constraint: Member must have length greater than or equal to 1";
  // A tool's input is an object: a schema with another type at its root, or none (a bare $ref, {}), is refused.
  for (const [i, t] of (b.toolConfig?.tools ?? []).entries()) {
    if (t?.toolSpec && t.toolSpec.inputSchema?.json?.type !== "object") return `The value at toolConfig.tools.${i}.toolSpec.inputSchema.json.type must be one of the following: object.`;
  }
  // Claude's own check, relayed as Bedrock relays the model's refusals.
  const names = (b.toolConfig?.tools ?? []).map((t: any) => t?.toolSpec?.name).filter(Boolean);
  if (names.some((n: string, i: number) => names.indexOf(n) !== i)) return "The model returned the following errors: tools: Tool names must be unique.";
  if (toolBlocks && !b.toolConfig) return "The toolConfig field must be defined when using toolUse and toolResult content blocks.";
  return outputConfigProblem(b.outputConfig) ?? blankConverseText(b);
}

const jsonType = (v: unknown) => (Array.isArray(v) ? "JSONArray" : v === null ? "null" : typeof v === "object" ? "JSONObject" : typeof v === "string" ? "String" : typeof v === "number" ? "Number" : "Boolean");

/** outputConfig as the API types it (OutputConfig > OutputFormat > OutputFormatStructure > JsonSchemaDefinition). */
function outputConfigProblem(oc: any): string | undefined {
  if (oc === undefined) return undefined;
  const malformed = (path: string, what: string) => `Malformed input request: #/outputConfig${path}: ${what}, please reformat your input and try again.`;
  if (jsonType(oc) !== "JSONObject") return malformed("", `expected type: JSONObject, found: ${jsonType(oc)}`);
  for (const k of Object.keys(oc)) if (k !== "textFormat") return malformed("", `extraneous key [${k}] is not permitted`);
  const tf = oc.textFormat;
  if (tf === undefined) return undefined;
  if (jsonType(tf) !== "JSONObject") return malformed("/textFormat", `expected type: JSONObject, found: ${jsonType(tf)}`);
  if (tf.type !== "json_schema") return `1 validation error detected: Value '${tf.type}' at 'outputConfig.textFormat.type' failed to satisfy constraint: Member must satisfy enum value set: [json_schema]`;
  const st = tf.structure;
  if (jsonType(st) !== "JSONObject" || Object.keys(st).length !== 1 || !("jsonSchema" in st)) return malformed("/textFormat/structure", "exactly one member (jsonSchema) must be set");
  const js = st.jsonSchema;
  if (jsonType(js) !== "JSONObject") return malformed("/textFormat/structure/jsonSchema", `expected type: JSONObject, found: ${jsonType(js)}`);
  for (const k of Object.keys(js)) if (!["schema", "name", "description"].includes(k)) return malformed("/textFormat/structure/jsonSchema", `extraneous key [${k}] is not permitted`);
  if (typeof js.schema !== "string") return malformed("/textFormat/structure/jsonSchema/schema", `expected type: String, found: ${jsonType(js.schema)}`);
  try {
    if (jsonType(JSON.parse(js.schema)) !== "JSONObject") throw new Error();
  } catch {
    return "The provided JSON schema is invalid: outputConfig.textFormat.structure.jsonSchema.schema must be a JSON object serialized as a string.";
  }
  return undefined;
}

/** Models AWS lists for structured outputs ("Get validated JSON results from models", Supported models): Claude 4.5 and
 * Opus 4.6, and select open-weight families. Kept here apart from the gateway's own list, as Bedrock's side of it. */
const STRUCTURED_OUTPUT_MODELS = /(^|[./])(anthropic\.claude-(sonnet|haiku|opus)-4-5|anthropic\.claude-opus-4-6|openai\.gpt-oss-|qwen\.qwen3|deepseek\.v3|mistral\.(mistral-large-3|ministral-3|magistral-small|devstral-2|voxtral)|google\.gemma-3-(12|27)b|nvidia\.nemotron|minimax\.minimax-m2|moonshot(ai)?\.kimi|zai\.glm-(4\.7|5))/;

/** A model without structured outputs refuses outputConfig.textFormat as Bedrock refuses a field the model does not
 * take (its message for toolConfig.toolChoice.any on such a model: "This model doesn't support the … field.
 * Remove … and try again."). */
function converseOutputConfigModelProblem(b: any, model: string): string | undefined {
  if (b.outputConfig?.textFormat === undefined || STRUCTURED_OUTPUT_MODELS.test(model)) return undefined;
  return "This model doesn't support the outputConfig.textFormat field. Remove outputConfig.textFormat and try again.";
}

/** Claude's refusals of a root combinator in a tool's schema and of a blank stop sequence (anthropic-checks.ts), which
 * Bedrock relays on Converse. */
function converseClaudeToolProblem(b: any, model: string): string | undefined {
  if (!/(^|[./])anthropic\.claude/.test(model)) return undefined;
  const stops = stopSequencesError(b.inferenceConfig?.stopSequences);
  if (stops) return `The model returned the following errors: ${stops}`;
  for (const [i, t] of (b.toolConfig?.tools ?? []).entries()) {
    const schema = t?.toolSpec?.inputSchema?.json;
    if (schema && ["oneOf", "allOf", "anyOf"].some((k) => k in schema)) return `The model returned the following errors: tools.${i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`;
  }
  return undefined;
}

/** Claude's 200k window on Converse, 1M with a context-1m-* beta in additionalModelRequestFields (tokens as usage counts them). */
function converseContextProblem(b: any, model: string): string | undefined {
  if (!/(^|[./])anthropic\.claude/.test(model)) return undefined;
  const tokens = JSON.stringify(b.messages).length >> 2;
  const betas = b.additionalModelRequestFields?.anthropic_beta;
  const window = Array.isArray(betas) && betas.some((x: unknown) => /^context-1m-/.test(String(x))) ? 1_000_000 : 200_000;
  return tokens > window ? `The model returned the following errors: prompt is too long: ${tokens} tokens > ${window} maximum` : undefined;
}

function invokeProblem(b: any): string | undefined {
  if (!b || typeof b !== "object") return "Malformed input request, please reformat your input and try again.";
  if (b.anthropic_version !== "bedrock-2023-05-31") return "Malformed input request: #: required key [anthropic_version] not found or invalid, please reformat your input and try again.";
  const extra = extraKeyError(b, INVOKE_MODEL_KEYS); // model and stream included: the path holds them
  if (extra) return extra;
  if (!Array.isArray(b.messages)) return "messages: Field required";
  if (typeof b.max_tokens !== "number") return "max_tokens: Field required";
  return stopSequencesError(b.stop_sequences) ?? toolSchemaError(b) ?? blankTextError(b);
}

export async function startFakeBedrock(opts: { creds?: AwsCreds; region?: string } = {}): Promise<FakeBedrock> {
  const seenPrefixes = new Set<string>();
  const fake: FakeBedrock = {
    baseUrl: "",
    requests: [],
    failures: [],
    creds: opts.creds ?? FAKE_AWS,
    region: opts.region ?? FAKE_AWS.region,
    writeSizes: [7, 61, 3, 900, 29],
    toolInputs: {},
    calls: [],
    close: () => server.close(),
  };

  const error = (res: ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": randomBytes(8).toString("hex") });
    res.end(JSON.stringify({ message }));
  };

  /** Writes the frames as one byte sequence cut into writeSizes pieces, a timer tick apart (separate TCP reads). */
  async function writeFrames(res: ServerResponse, frames: Uint8Array[]): Promise<void> {
    const all = Buffer.concat(frames);
    let at = 0;
    for (let i = 0; at < all.length; i++) {
      // A large frame goes in MiB writes: split into a few bytes each it would take hours.
      const n = all.length - at > LARGE_WRITE ? LARGE_WRITE : fake.writeSizes[i % fake.writeSizes.length]!;
      if (res.destroyed) return;
      res.write(all.subarray(at, at + n));
      at += n;
      await new Promise((r) => setTimeout(r, 1));
    }
    res.end();
  }

  function cacheUsage(key: unknown, marked: boolean): { read: number; write: number } {
    if (!marked) return { read: 0, write: 0 };
    const k = JSON.stringify(key);
    const n = k.length >> 2;
    if (seenPrefixes.has(k)) return { read: n, write: 0 };
    seenPrefixes.add(k);
    return { read: 0, write: n };
  }

  function streamFailure(frames: Uint8Array[], path: string): Uint8Array[] {
    const at = fake.failures.findIndex((f) => f.kind !== "status" && (!f.path || path.startsWith(f.path)));
    if (at === -1) return frames;
    const f = fake.failures.splice(at, 1)[0]!;
    const cut = frames.slice(0, (f as { afterEvents: number }).afterEvents);
    if (f.kind === "exception") {
      const type = f.type ?? "modelStreamErrorException";
      cut.push(exceptionFrame(type, { message: "The model failed to continue the stream.", originalStatusCode: 500, originalMessage: "fake upstream model error" }));
    } else if (f.kind === "corrupt") {
      const bad = Buffer.from(eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: " corrupted" } }));
      bad[bad.length - 8] ^= 0xff; // a payload byte: the message CRC no longer matches
      cut.push(bad);
    } else if (f.kind === "large") {
      cut.push(eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x".repeat(f.bytes) } }));
    }
    return cut;
  }

  function converse(body: any, model: string) {
    const tools: string[] = (body.toolConfig?.tools ?? []).map((t: any) => t.toolSpec?.name).filter(Boolean);
    const last = body.messages[body.messages.length - 1];
    const lastHasResult = last.content.some((c: any) => c.toolResult);
    const forced = body.toolConfig?.toolChoice?.tool?.name;
    const any = body.toolConfig?.toolChoice?.any !== undefined;
    const schemas = Object.fromEntries((body.toolConfig?.tools ?? []).filter((t: any) => t.toolSpec).map((t: any) => [t.toolSpec.name, t.toolSpec.inputSchema?.json]));
    const schema = body.outputConfig?.textFormat?.structure?.jsonSchema?.schema;
    const format = typeof schema === "string" ? JSON.parse(schema) : undefined;
    const p = plan({ thinking: body.additionalModelRequestFields?.thinking?.type === "enabled", tools, lastHasResult, forced, any, calls: fake.calls.shift(), format, max: body.inferenceConfig?.maxTokens, schemas, inputs: fake.toolInputs });
    const marked = JSON.stringify(body).includes('"cachePoint"');
    const cache = cacheUsage({ system: body.system, tools: body.toolConfig?.tools, model }, marked);
    const usage: Record<string, number> = { inputTokens: JSON.stringify(body.messages).length >> 2, outputTokens: p.blocks.reduce((n, b) => n + words(b.kind === "tool" ? JSON.stringify(b.input) : b.text).length, 0) };
    if (marked) { usage.cacheReadInputTokens = cache.read; usage.cacheWriteInputTokens = cache.write; }
    usage.totalTokens = usage.inputTokens! + usage.outputTokens! + cache.read + cache.write;
    return { p, usage };
  }

  function converseJson(body: any, model: string) {
    const { p, usage } = converse(body, model);
    const content = p.blocks.map((b) => b.kind === "reasoning" ? { reasoningContent: { reasoningText: { text: b.text, signature: b.signature } } }
      : b.kind === "text" ? { text: b.text } : { toolUse: { toolUseId: b.id, name: b.name, input: b.input } });
    return { output: { message: { role: "assistant", content } }, stopReason: p.stop, usage, metrics: { latencyMs: 42 } };
  }

  function converseFrames(body: any, model: string): Uint8Array[] {
    const { p, usage } = converse(body, model);
    const out = [eventFrame("messageStart", { role: "assistant", p: pad() })];
    p.blocks.forEach((b, i) => {
      if (b.kind === "reasoning") {
        for (const w of words(b.text)) out.push(eventFrame("contentBlockDelta", { contentBlockIndex: i, delta: { reasoningContent: { text: w } }, p: pad() }));
        out.push(eventFrame("contentBlockDelta", { contentBlockIndex: i, delta: { reasoningContent: { text: "" } }, p: pad() }));
        out.push(eventFrame("contentBlockDelta", { contentBlockIndex: i, delta: { reasoningContent: { signature: b.signature } }, p: pad() }));
      } else if (b.kind === "text") {
        for (const w of words(b.text)) out.push(eventFrame("contentBlockDelta", { contentBlockIndex: i, delta: { text: w }, p: pad() }));
      } else {
        out.push(eventFrame("contentBlockStart", { contentBlockIndex: i, start: { toolUse: { toolUseId: b.id, name: b.name } }, p: pad() }));
        const json = JSON.stringify(b.input);
        for (let k = 0; k < json.length; k += 5) out.push(eventFrame("contentBlockDelta", { contentBlockIndex: i, delta: { toolUse: { input: json.slice(k, k + 5) } }, p: pad() }));
      }
      out.push(eventFrame("contentBlockStop", { contentBlockIndex: i, p: pad() }));
    });
    out.push(eventFrame("messageStop", { stopReason: p.stop, p: pad() }));
    out.push(eventFrame("metadata", { usage, metrics: { latencyMs: 42 }, p: pad() }));
    return out;
  }

  function anthropicMessage(body: any, model: string) {
    const tools: string[] = (body.tools ?? []).map((t: any) => t.name);
    const last = body.messages[body.messages.length - 1];
    const lastHasResult = Array.isArray(last?.content) && last.content.some((c: any) => c.type === "tool_result");
    const forced = body.tool_choice?.type === "tool" ? body.tool_choice.name : undefined;
    const p = plan({ thinking: body.thinking?.type === "enabled", tools: body.tool_choice?.type === "none" ? [] : tools, lastHasResult, forced, max: body.max_tokens });
    const content = p.blocks.map((b) => b.kind === "reasoning" ? { type: "thinking", thinking: b.text, signature: b.signature }
      : b.kind === "text" ? { type: "text", text: b.text } : { type: "tool_use", id: b.id.replace("tooluse_", "toolu_bdrk_"), name: b.name, input: b.input });
    const marked = JSON.stringify(body).includes('"cache_control"');
    const cache = cacheUsage({ system: body.system, tools: body.tools, model }, marked);
    const usage = { input_tokens: JSON.stringify(body.messages).length >> 2, cache_creation_input_tokens: cache.write, cache_read_input_tokens: cache.read, output_tokens: content.length * 5 };
    return { id: `msg_bdrk_${randomBytes(10).toString("hex")}`, type: "message", role: "assistant", model, content, stop_reason: p.stop, stop_sequence: null, usage };
  }

  function anthropicFrames(msg: any): Uint8Array[] {
    const events: any[] = [{ type: "message_start", message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } } }];
    msg.content.forEach((b: any, index: number) => {
      if (b.type === "thinking") {
        events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
        for (const w of words(b.thinking)) events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: w } });
        events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: b.signature } });
      } else if (b.type === "text") {
        events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
        for (const w of words(b.text)) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: w } });
      } else {
        events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
        events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } });
        const json = JSON.stringify(b.input);
        for (let k = 0; k < json.length; k += 6) events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(k, k + 6) } });
      }
      events.push({ type: "content_block_stop", index });
    });
    events.push({ type: "message_delta", delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: msg.usage.output_tokens } });
    events.push({ type: "message_stop", "amazon-bedrock-invocationMetrics": { inputTokenCount: msg.usage.input_tokens, outputTokenCount: msg.usage.output_tokens, invocationLatency: 40, firstByteLatency: 10 } });
    return events.map((e) => eventFrame("chunk", { bytes: Buffer.from(JSON.stringify(e)).toString("base64"), p: pad() }));
  }

  /** Titan: one inputText, dimensions 256/512/1024 (v2); Cohere: 1-96 texts and an input_type. Bedrock's own checks. */
  function embed(res: ServerResponse, model: string, b: any) {
    if (model.includes("titan")) {
      for (const k of Object.keys(b ?? {})) if (!["inputText", "dimensions", "normalize", "embeddingTypes"].includes(k)) return error(res, 400, "ValidationException", `Malformed input request: extraneous key [${k}] is not permitted, please reformat your input and try again.`);
      if (typeof b?.inputText !== "string" || !b.inputText) return error(res, 400, "ValidationException", "Malformed input request: #/inputText: expected minLength: 1, please reformat your input and try again.");
      if (b.dimensions !== undefined && ![256, 512, 1024].includes(b.dimensions)) return error(res, 400, "ValidationException", "Malformed input request: #/dimensions: " + b.dimensions + " is not a valid enum value, please reformat your input and try again.");
      const dims = b.dimensions ?? 1024;
      const n = approxTokens(b.inputText);
      res.writeHead(200, { "content-type": "application/json", "x-amzn-bedrock-input-token-count": String(n) });
      return res.end(JSON.stringify({ embedding: fakeVector(b.inputText, dims, model), inputTextTokenCount: n }));
    }
    if (!Array.isArray(b?.texts) || !b.texts.length || b.texts.length > 96) return error(res, 400, "ValidationException", "Malformed input request: #/texts: expected between 1 and 96 items, please reformat your input and try again.");
    if (typeof b.input_type !== "string") return error(res, 400, "ValidationException", "Malformed input request: #: required key [input_type] not found, please reformat your input and try again.");
    const dims = b.output_dimension ?? 1024;
    const vectors = b.texts.map((t: string) => fakeVector(t, dims, model));
    const n = b.texts.reduce((s: number, t: string) => s + approxTokens(t), 0);
    res.writeHead(200, { "content-type": "application/json", "x-amzn-bedrock-input-token-count": String(n) });
    return res.end(JSON.stringify({ id: randomBytes(8).toString("hex"), texts: b.texts, response_type: Array.isArray(b.embedding_types) ? "embeddings_by_type" : "embeddings_floats", embeddings: Array.isArray(b.embedding_types) ? { float: vectors } : vectors }));
  }

  const server = await listenLoopback(async (req, res) => {
    const rec = await readRequest(req);
    const m = /^\/model\/([^/?]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(rec.path);
    const model = m ? decodeURIComponent(m[1]!) : "";
    fake.requests.push({ ...rec, model, action: m?.[2] ?? "" });
    // Authentication first, as AWS does: nothing else is looked at for an unauthenticated request.
    const auth = String(req.headers.authorization ?? "");
    if (auth.startsWith("Bearer ")) {
      if (auth.slice(7) !== FAKE_BEDROCK_API_KEY) return error(res, 403, "UnrecognizedClientException", "Invalid API Key format: Must start with pre-defined prefix or the key is not valid.");
    } else {
      const check = verifySigV4(req.method!, rec.path, req.headers, rec.raw, fake.creds, fake.region);
      if (!check.ok) return error(res, 403, check.type, check.message);
    }
    if (req.method !== "POST" || !m) return error(res, 404, "UnknownOperationException", "Unknown operation");
    const at = fake.failures.findIndex((f) => f.kind === "status" && (!f.path || rec.path.startsWith(f.path)));
    if (at >= 0) {
      const f = fake.failures.splice(at, 1)[0] as Extract<BedrockFailure, { kind: "status" }>;
      return error(res, f.status, f.type, f.message ?? `fake ${f.type}`);
    }
    const action = m[2]!;
    const body = rec.body;
    if (action === "invoke" && /(^|\.)(amazon\.titan-embed|cohere\.embed)/.test(model)) return embed(res, model, body);
    const problem = action.startsWith("converse") ? converseProblem(body) ?? converseOutputConfigModelProblem(body, model) ?? converseClaudeToolProblem(body, model) ?? converseContextProblem(body, model) : invokeProblem(body);
    if (problem) return error(res, 400, "ValidationException", problem);
    const reqId = randomBytes(8).toString("hex");
    if (action === "converse") {
      res.writeHead(200, { "content-type": "application/json", "x-amzn-requestid": reqId });
      return res.end(JSON.stringify(converseJson(body, model)));
    }
    if (action === "invoke") {
      const msg = anthropicMessage(body, model);
      res.writeHead(200, { "content-type": "application/json", "x-amzn-requestid": reqId, "x-amzn-bedrock-input-token-count": String(msg.usage.input_tokens), "x-amzn-bedrock-output-token-count": String(msg.usage.output_tokens) });
      return res.end(JSON.stringify(msg));
    }
    const frames = action === "converse-stream" ? converseFrames(body, model) : anthropicFrames(anthropicMessage(body, model));
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": reqId, ...(action === "invoke-with-response-stream" ? { "x-amzn-bedrock-content-type": "application/json" } : {}) });
    await writeFrames(res, streamFailure(frames, rec.path));
  });
  fake.baseUrl = server.origin;
  return fake;
}
