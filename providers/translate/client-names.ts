// How the client of a translation spells the fields of the chat body made of its request: the one source of truth for
// "chat field -> the client's field". What a chat step names — a refusal's field (400), a field it leaves out
// (x-mg-dropped-params) — reaches a Messages, Responses or Gemini client as that client sent it: a chained pair's
// inner half (chain.ts, chat-to-gemini's downloads) and a host that refuses unknown fields
// (openai-compatible/strict-host.ts) ask clientName().
// The X-to-chat translator marks its chat body with its protocol's spelling and the client's body, under a
// non-enumerable symbol key (never serialised, sent or compared). Nothing is worked out before a name is asked for:
// an element of a list (messages[2].content[0]…, tools[1]…) is found by translating the client's body again with an
// Origin recorder (which client object each chat object was made of), so only a refusal pays for it. Chat's indices
// are not the client's (a system prompt or `instructions` becomes messages[0], tool results become tool messages,
// Responses namespaces are flattened): a name is the client's own path, or its nearest certain prefix, never a guess.
import { GatewayError } from "../../core/errors.ts";
import { Unsupported } from "../../core/contracts/translator.ts";
import type { Target } from "../../core/contracts/provider.ts";

export const CLIENT_NAMES: unique symbol = Symbol("mg.clientNames");

/** Records that chat object `made` was made of `from`: a client object, or the client's field (for a string). */
export type Origin = (made: object, from: object | string) => void;

/** One client protocol's names for chat's fields. */
export interface ClientSpelling {
  /** Chat field -> the client's (a function where the client's body decides: user or safety_identifier). */
  readonly fields: Readonly<Record<string, string | ((client: any) => string)>>;
  /** Chat's lists (messages, tools) -> the client's: what an element is named when its origin is not certain. */
  readonly lists: Readonly<Record<string, string>>;
  /**
   * The rest of a chat path below an object made of `from` (".image_url.url" below a part), as the client spells
   * it below `from` (".source" below a Messages image block); "" names `from` itself.
   */
  below(rest: string, from: any): string;
}

/** The chat body of `client`, translated again with `origin` told of every object it makes. */
export type Retrace<O> = (client: any, target: Target | undefined, options: O, origin: Origin) => unknown;

interface Source {
  spelling: ClientSpelling;
  retrace: Retrace<any>;
  client: any;
  target: Target | undefined;
  options: unknown;
}

/** `chat` (a translation's chat body) marked as made of `client`: `retrace(client, target, options)` makes it again. */
export function markClient<T extends object, O>(chat: T, spelling: ClientSpelling, retrace: Retrace<O>, client: unknown, target: Target | undefined, options: O): T {
  const source: Source = { spelling, retrace, client, target, options };
  Object.defineProperty(chat, CLIENT_NAMES, { value: source, configurable: true, writable: true });
  return chat;
}

/** `field` of the chat body as its client spells it (a chat client's body has no mark: as it is). */
export function clientName(chat: unknown, field: string): string {
  const source = (chat as { [CLIENT_NAMES]?: Source } | null | undefined)?.[CLIENT_NAMES];
  return source ? nameIn(source, field) : field;
}

/** A refusal (a GatewayError, or one in an Unsupported) naming the client's field; anything else as it is. */
export function forClient(e: unknown, chat: unknown): unknown {
  if (e instanceof Unsupported) {
    const named = namedError(e.error, chat);
    return named === e.error ? e : new Unsupported(named);
  }
  return e instanceof GatewayError ? namedError(e, chat) : e;
}

function namedError(err: GatewayError, chat: unknown): GatewayError {
  const field = err.details?.field;
  if (typeof field !== "string") return err;
  const name = clientName(chat, field);
  if (name === field) return err;
  // "n > 1 is not supported…" -> "generationConfig.candidateCount > 1 is not supported…"; else the field in front,
  // so a client whose SDK shows only the message still finds it.
  const rest = err.message.slice(field.length);
  const message = err.message.startsWith(field) && (rest.startsWith(" ") || rest.startsWith(":")) ? name + rest : `${name}: ${err.message}`;
  return new GatewayError(err.status, err.code, message, { details: { ...err.details, field: name }, retryAfter: err.retryAfter, retryable: err.retryable, headers: err.headers, cause: err.cause, type: err.type });
}

const fieldOf = (named: string | ((client: any) => string), client: any) => (typeof named === "string" ? named : named(client));

/** `prefix` heads `field`, followed by `next` (or nothing). Allocates nothing: dropped params are named per request. */
const heads = (field: string, prefix: string, next: string) => field.startsWith(prefix) && (field.length === prefix.length || field[prefix.length] === next);

function nameIn(source: Source, field: string): string {
  const { fields, lists } = source.spelling;
  const named = fields[field];
  if (named !== undefined) return fieldOf(named, source.client);
  for (const list in lists) if (heads(field, list, "[")) return field === list ? lists[list]! : elementName(source, field, lists[list]!);
  // A field under a mapped one (response_format.json_schema.name): the mapped one, the nearest certain prefix.
  let under: string | undefined;
  for (const k in fields) if (heads(field, k, ".") && k.length > (under?.length ?? 0)) under = k;
  return under === undefined ? field : fieldOf(fields[under]!, source.client);
}

type Segment = string | number;

/** "messages[2].content[0].image_url.url" -> ["messages", 2, "content", 0, "image_url", "url"]. */
function segments(path: string): Segment[] {
  const out: Segment[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

const render = (segs: Segment[]) => segs.map((s) => (typeof s === "number" ? `[${s}]` : `.${s}`)).join("");

/** An element of a chat list named by the client object it was made of (deepest known along the path). */
function elementName(source: Source, field: string, list: string): string {
  const made = new Map<object, object | string>();
  let chat: unknown;
  try {
    chat = source.retrace(source.client, source.target, source.options, (m, from) => made.set(m, from));
  } catch {
    return list; // it translated once; should it not again, the list is all that is certain
  }
  const path = segments(field);
  let node: any = chat;
  let from: object | string | undefined;
  let depth = 0;
  for (let d = 0; d < path.length && node !== null && typeof node === "object"; d++) {
    node = node[path[d]!];
    if (node !== null && typeof node === "object" && made.has(node)) {
      from = made.get(node);
      depth = d + 1;
    }
  }
  if (from === undefined) return list;
  const at = typeof from === "string" ? from : pathOf(source.client, from);
  if (at === undefined) return list; // made of something the client did not send as such (a string turned into a block)
  return typeof from === "string" ? at : at + source.spelling.below(render(path.slice(depth)), from);
}

/** Where `target` sits in the client's body ("messages[1].content[0]"), by identity. */
function pathOf(root: unknown, target: object): string | undefined {
  const trail: Segment[] = [];
  const find = (node: unknown): boolean => {
    if (node === target) return true;
    if (node === null || typeof node !== "object") return false;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        trail.push(i);
        if (find(node[i])) return true;
        trail.pop();
      }
      return false;
    }
    for (const k in node) {
      trail.push(k);
      if (find((node as Record<string, unknown>)[k])) return true;
      trail.pop();
    }
    return false;
  };
  return find(root) ? render(trail).replace(/^\./, "") : undefined;
}
