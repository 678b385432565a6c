// A Gemini API client that sends and reads exactly what @google/genai (2.x, the SDK Gemini CLI runs on) does on the
// Gemini Developer API, written from its source (src/_api_client.ts, src/_transformers.ts): the model in the path as
// `models/<id>` with its slash raw, `x-goog-api-key`, `?alt=sse` streams split on a blank line (\n\n, \r\r or
// \r\n\r\n) with `data:` events, a non-2xx answer thrown with its JSON body, an `{"error":…}` read or data event thrown, and
// leftover bytes at the end of a stream thrown as an incomplete segment. Plus Gemini CLI's history rules
// (packages/core/src/core/geminiChat.ts): thought parts are not kept, a first function call without a signature gets
// the documented placeholder, function ids are `<name>__<id>`.
export class GeminiApiError extends Error {
  constructor(readonly status: number, readonly body: any) {
    super(JSON.stringify(body));
  }
}

export interface GeminiClient {
  generate(model: string, body: unknown): Promise<any>;
  stream(model: string, body: unknown): Promise<any[]>;
  raw(path: string, init?: RequestInit): Promise<Response>;
}

export function geminiClient(baseUrl: string, apiKey: string): GeminiClient {
  const headers = { "Content-Type": "application/json", "User-Agent": "google-genai-sdk/2.32.0 gl-node/v20", "x-goog-api-client": "google-genai-sdk/2.32.0 gl-node/v20", "x-goog-api-key": apiKey };
  const url = (model: string, method: string) => new URL(`${baseUrl}/v1beta/${model.startsWith("models/") ? model : `models/${model}`}:${method}`);
  async function post(u: URL, body: unknown): Promise<Response> {
    const res = await fetch(u, { method: "POST", headers, body: JSON.stringify(body) });
    if (!res.ok) throw new GeminiApiError(res.status, res.headers.get("content-type")?.includes("application/json") ? await res.json() : { error: { message: await res.text() } });
    return res;
  }
  return {
    async generate(model, body) {
      return (await post(url(model, "generateContent"), body)).json();
    },
    async stream(model, body) {
      const u = url(model, "streamGenerateContent");
      u.searchParams.set("alt", "sse");
      const res = await post(u, body);
      const events: any[] = [];
      const decoder = new TextDecoder();
      let buffer = "";
      // Its throwIfStreamErrorChunk: on a whole read, and on every data: event.
      const throwIfError = (text: string) => {
        try {
          const json = JSON.parse(text);
          if (json && typeof json.error === "object" && json.error && json.error.code >= 400 && json.error.code < 600) throw new GeminiApiError(json.error.code, json);
        } catch (e) {
          if (e instanceof GeminiApiError) throw e;
        }
      };
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        const chunk = decoder.decode(bytes, { stream: true });
        throwIfError(chunk);
        buffer += chunk;
        for (;;) {
          const at = ["\n\n", "\r\r", "\r\n\r\n"].map((d) => [buffer.indexOf(d), d.length] as const).filter(([i]) => i !== -1).sort((a, b) => a[0] - b[0])[0];
          if (!at) break;
          const event = buffer.slice(0, at[0]).trim();
          buffer = buffer.slice(at[0] + at[1]);
          if (!event.startsWith("data:")) continue;
          throwIfError(event.slice(5).trim());
          events.push(JSON.parse(event.slice(5).trim()));
        }
      }
      if (buffer.trim()) throw new Error(`Incomplete JSON segment at the end: ${buffer.slice(0, 200)}`);
      return events;
    },
    raw: (path, init = {}) => fetch(`${baseUrl}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } }),
  };
}

/** A streamed answer put together as Gemini CLI does: every non-thought part in order (text runs joined), the
 * thoughts apart, the last finish reason and usage. */
export function assemble(events: any[]): { parts: any[]; thoughts: string; finishReason?: string; usage?: any; modelVersion?: string } {
  const parts: any[] = [];
  let thoughts = "";
  let finishReason: string | undefined;
  let usage: any;
  for (const e of events) {
    const c = e.candidates?.[0];
    for (const p of c?.content?.parts ?? []) {
      if (p.thought) thoughts += p.text ?? "";
      else if (typeof p.text === "string" && Object.keys(p).length === 1 && typeof parts.at(-1)?.text === "string" && Object.keys(parts.at(-1)).length === 1) parts.at(-1).text += p.text;
      else parts.push({ ...p });
    }
    if (c?.finishReason) finishReason = c.finishReason;
    if (e.usageMetadata) usage = e.usageMetadata;
  }
  return { parts, thoughts, finishReason, usage, modelVersion: events.at(-1)?.modelVersion };
}

/** The model turn as Gemini CLI keeps it in its history. */
export function cliModelTurn(parts: any[]): any {
  let first = true;
  const kept = parts.filter((p) => !p.thought).map((p) => {
    if (!p.functionCall) return p;
    const call = { ...p, functionCall: { ...p.functionCall, id: p.functionCall.id ? `${p.functionCall.name}__${p.functionCall.id}` : undefined } };
    if (call.functionCall.id === undefined) delete call.functionCall.id;
    if (first && !call.thoughtSignature) call.thoughtSignature = "skip_thought_signature_validator";
    first = false;
    return call;
  });
  return { role: "model", parts: kept };
}

/** Gemini CLI's answer to a model turn's calls: one functionResponse each, `{output}` or `{error}`. */
export function cliResults(turn: any, result: (call: any) => { output?: string; error?: string }): any {
  // A call that came without an id gets one of the CLI's own (name-timestamp-random), which the model never saw.
  const idOf = (c: any) => c.id ?? `${c.name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  return { role: "user", parts: turn.parts.filter((p: any) => p.functionCall).map((p: any) => ({ functionResponse: { id: idOf(p.functionCall), name: p.functionCall.name, response: result(p.functionCall) } })) };
}
