// The credentials this process can leak through an upstream's text: every loaded config's secrets, and the
// credential header values the upstream client has sent (tokens minted at run time: Vertex access tokens, AWS
// session tokens from the environment, ...). Process-wide, so an error is masked where it is built
// (core/errors.ts), without the request at hand; over-masking another gateway's key in the same process is harmless.
import { MIN_SECRET, SecretIndex, redactText, redactValue } from "./redact.ts";

/** Configs kept: the live one and those of recent reloads (their keys may still be in flight). */
const MAX_CONFIGS = 16;
const configs: Array<{ owner: object; index: SecretIndex }> = [];

/** Secrets of one loaded config (core/secrets/config-secrets.ts lists them); a reload registers its own. */
export function rememberConfigSecrets(owner: object, secrets: Iterable<string>): void {
  const at = configs.findIndex((c) => c.owner === owner);
  if (at >= 0) configs.splice(at, 1);
  configs.push({ owner, index: new SecretIndex(secrets) });
  if (configs.length > MAX_CONFIGS) configs.shift();
}

/**
 * Run-time credentials in two generations of GENERATION values: a new one goes into the young generation; when it
 * is full it becomes the old one (the previous old is dropped). A value still in use is added again, so it survives.
 */
const GENERATION = 256;
let young = new SecretIndex();
let old = new SecretIndex();
/**
 * Header values already seen in this generation: the upstream client's per-request cost is one set lookup. Capped on
 * its own: a value that never enters `young` (too short) must not grow it, so it is emptied when it fills.
 */
const MAX_SEEN_HEADERS = 4 * GENERATION;
let seenHeaders = new Set<string>();

/** A credential learned at run time (a minted token, a signed assertion, a key read from a file). */
export function rememberSecret(value: string): void {
  if (typeof value !== "string" || value.length < MIN_SECRET || young.has(value)) return;
  if (young.size >= GENERATION) {
    old = young;
    young = new SecretIndex();
    seenHeaders = new Set();
  }
  young.add(value);
}

/** Headers whose value is a credential, as the drivers send them (lower case). */
const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token", "proxy-authorization"];
const SCHEME = /^(?:Bearer|Basic|Token)\s+/i;

/** Called by the upstream client for every request it sends: remembers its credential header values. */
export function rememberSentCredentials(headers: Record<string, string>): void {
  for (let i = 0; i < CREDENTIAL_HEADERS.length; i++) {
    const v = headers[CREDENTIAL_HEADERS[i]!];
    // A SigV4 Authorization is unique per request and its signature worthless elsewhere; the key id behind it is a
    // config or environment secret (config-secrets.ts). Checked first: remembering it as seen would keep every one.
    if (typeof v !== "string" || v.startsWith("AWS4-") || seenHeaders.has(v)) continue;
    if (seenHeaders.size >= MAX_SEEN_HEADERS) seenHeaders = new Set();
    seenHeaders.add(v);
    const m = SCHEME.exec(v);
    rememberSecret(m ? v.slice(m[0].length) : v);
  }
}

/** How many run-time values the registry holds (bounded: 2 generations plus the seen-header set). */
export function runtimeSecretCounts(): { young: number; old: number; seenHeaders: number } {
  return { young: young.size, old: old.size, seenHeaders: seenHeaders.size };
}

function indexes(): SecretIndex[] {
  const out: SecretIndex[] = [];
  for (const c of configs) if (c.index.size) out.push(c.index);
  if (young.size) out.push(young);
  if (old.size) out.push(old);
  return out;
}

/** `text` with every credential this process knows (and every credential shape) masked. */
export function redact(text: string): string {
  return redactText(text, indexes());
}

/** A JSON-like value masked in place (see redactValue); returns the value to use. */
export function redactDeep<T>(value: T): T {
  return redactValue(value, indexes());
}
