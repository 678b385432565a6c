// /api/openapi.json as a contract a real answer is held to: the operation exists, the status is documented, the
// body (JSON, or each server-sent event's data) validates against the schema the document names, the headers it
// requires are there, and the headers the gateway sends of the kinds it documents (the request id, rate limits,
// the wait, the generation and its cost, the MCP session) are documented on that answer.
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Json = any;

/** What was received, as fetch gives it. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** Headers a client has to know about: each one sent must be documented on the answer it came with. */
const DOCUMENTED_KINDS = /^(x-request-id|request-id|x-should-retry|x-ratelimit-.*|retry-after|retry-after-ms|x-mg-generation-id|x-mg-cost-usd|x-mg-trace-id|mcp-session-id)$/i;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

export class OpenApiContract {
  private readonly ajv: Json;

  constructor(readonly doc: Json) {
    this.ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });
    (addFormats as any)(this.ajv);
    this.ajv.addSchema({ ...doc, $id: "openapi.json" });
  }

  /** A `#/components/...` reference followed (once: the document's responses and headers refer no further). */
  private deref(node: Json): Json {
    if (!node?.$ref) return node;
    return node.$ref.slice(2).split("/").reduce((n: Json, k: string) => n?.[k.replace(/~1/g, "/").replace(/~0/g, "~")], this.doc);
  }

  private validate(schemaPointer: string, data: unknown): string | undefined {
    const v = this.ajv.getSchema(`openapi.json#/${schemaPointer}`);
    if (!v) return `no schema at ${schemaPointer}`;
    return v(data) ? undefined : JSON.stringify(v.errors.slice(0, 3));
  }

  operation(method: string, template: string): Json {
    return this.doc.paths[template]?.[method.toLowerCase()];
  }

  /** Why the document refuses this JSON request body, or undefined when it takes it. */
  requestBodyProblem(method: string, template: string, body: unknown): string | undefined {
    const op = this.operation(method, template);
    if (!op?.requestBody?.content?.["application/json"]) return `${method} ${template} documents no JSON request body`;
    return this.validate(pointer("paths", template, method.toLowerCase(), "requestBody", "content", "application/json", "schema"), body);
  }

  /** Why the document refuses `value` for a parameter (a query value as a client's typed value, a header as sent). */
  parameterProblem(method: string, template: string, where: "query" | "header", name: string, value: unknown): string | undefined {
    const params: Json[] = this.operation(method, template)?.parameters ?? [];
    const i = params.findIndex((p) => p.in === where && p.name.toLowerCase() === name.toLowerCase());
    if (i === -1) return `${where} parameter ${name} is not documented on ${method} ${template}`;
    return this.validate(pointer("paths", template, method.toLowerCase(), "parameters", String(i), "schema"), value);
  }

  /** Everything about `answer` the document does not say: [] when it conforms. */
  problems(method: string, template: string, answer: Answer): string[] {
    const op = this.operation(method, template);
    if (!op) return [`${method} ${template} is not in the document`];
    const code = String(answer.status);
    const raw = op.responses[code];
    if (!raw) return [`status ${code} is not documented (documented: ${Object.keys(op.responses).join(", ")})`];
    const res = this.deref(raw);
    const responsePointer = raw.$ref ? raw.$ref.slice(2) : pointer("paths", template, method.toLowerCase(), "responses", code);
    const out: string[] = [];

    const documented = new Map<string, Json>();
    for (const [name, h] of Object.entries<Json>(res.headers ?? {})) documented.set(name.toLowerCase(), this.deref(h));
    for (const [name, h] of documented) if (h.required && !answer.headers.has(name)) out.push(`required header ${name} missing`);
    answer.headers.forEach((_v, name) => {
      if (DOCUMENTED_KINDS.test(name) && !documented.has(name.toLowerCase())) out.push(`header ${name} sent but not documented on ${code}`);
    });

    const type = (answer.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const content = res.content ?? {};
    if (!Object.keys(content).length) {
      if (answer.text) out.push(`a ${type} body was sent but ${code} documents none`);
      return out;
    }
    if (!content[type]) return [...out, `content-type ${type || "(none)"} is not documented on ${code} (documented: ${Object.keys(content).join(", ")})`];
    const schemaPointer = `${responsePointer}/content/${pointer(type)}/schema`;
    if (type === "application/json") {
      let body: unknown;
      try {
        body = JSON.parse(answer.text);
      } catch {
        return [...out, "the body is not JSON"];
      }
      const bad = this.validate(schemaPointer, body);
      if (bad) out.push(`body: ${bad}`);
    } else if (type === "text/event-stream") {
      out.push(...this.eventProblems(content[type].schema, answer.text));
    }
    return out;
  }

  /** Each event's data against the component the stream's description names; a named event's `type` is its name. */
  private eventProblems(schema: Json, text: string): string[] {
    const named = /is a (\w+)/.exec(schema.description ?? "")?.[1];
    if (!named) return ["the event stream's schema names no component for its events"];
    const byName = /event: <type> line/.test(schema.description);
    const out: string[] = [];
    let events = 0;
    for (const block of text.split(/\r?\n\r?\n/)) {
      const lines = block.split(/\r?\n/);
      const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim();
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
      if (!data || data === "[DONE]") continue;
      events++;
      let json: Json;
      try {
        json = JSON.parse(data);
      } catch {
        out.push(`event data is not JSON: ${data.slice(0, 80)}`);
        continue;
      }
      if (byName && json.type !== event) out.push(`event ${event} carries type ${json.type}`);
      const bad = this.validate(`components/schemas/${named}`, json);
      if (bad) out.push(`event ${event ?? json.type ?? ""}: ${bad} :: ${data.slice(0, 160)}`);
    }
    if (!events) out.push("no events");
    return out;
  }
}
