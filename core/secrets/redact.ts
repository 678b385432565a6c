// Masking of credentials in text the gateway did not write (upstream error bodies and events). A secret is matched
// whole and in part: any run of RUN characters of it (a key an upstream truncated, or quoted after "Bearer "), in
// its plain, URL-encoded and JSON-escaped forms, is replaced with REDACTED. On top of the known secrets, a few shapes
// that can only be a credential (a Bearer token, a value after an api-key header name) are masked whatever they hold.
// Runs only on error paths: about 1 µs for a one-line message against 50 secrets, 0.5 ms for a 64 KiB body.

export const REDACTED = "[redacted]";

/** Shorter values are not treated as secrets: masking "dummy" or "none" everywhere would garble every message. */
export const MIN_SECRET = 8;
/** A run of this many characters of a secret is masked (a partial echo); a shorter secret only when whole. */
export const RUN = 12;

/** The forms a secret may take in text: as sent, URL-encoded, JSON-escaped (and with "\/", as PHP writes it). */
function variants(secret: string): string[] {
  const out = new Set<string>([secret]);
  const json = JSON.stringify(secret).slice(1, -1);
  out.add(json);
  out.add(json.replaceAll("/", "\\/"));
  out.add(encodeURIComponent(secret));
  return [...out];
}

/** A hash of the 3 characters at i: the index's first filter, so most positions of a text cost no slice at all. */
const anchor = (s: string, i: number) => (s.charCodeAt(i) * 961 + s.charCodeAt(i + 1) * 31 + s.charCodeAt(i + 2)) & 0xffff;

/**
 * Known secrets, indexed by every RUN-character slice so a scan costs one set lookup per position — and most
 * positions not even that: a slice is looked up only where its first 3 characters start some slice of a secret.
 */
export class SecretIndex {
  private readonly grams = new Set<string>();
  private anchors: Uint8Array | undefined; // 64 KiB, made with the first slice
  private readonly whole: string[] = [];
  private readonly seen = new Set<string>();

  constructor(secrets: Iterable<string> = []) {
    for (const s of secrets) this.add(s);
  }

  get size(): number {
    return this.seen.size;
  }

  has(secret: string): boolean {
    return this.seen.has(secret);
  }

  add(secret: string): void {
    if (typeof secret !== "string" || secret.length < MIN_SECRET || this.seen.has(secret)) return;
    this.seen.add(secret);
    for (const v of variants(secret)) {
      if (v.length < RUN) this.whole.push(v);
      else {
        const anchors = (this.anchors ??= new Uint8Array(1 << 16));
        for (let i = 0; i + RUN <= v.length; i++) {
          this.grams.add(v.slice(i, i + RUN));
          anchors[anchor(v, i)] = 1;
        }
      }
    }
  }

  /** Adds [start, end) pairs of text covered by a secret to `ranges`. */
  mark(text: string, ranges: number[]): void {
    const anchors = this.anchors;
    if (anchors) {
      let start = -1;
      let end = -1;
      for (let i = 0; i + RUN <= text.length; i++) {
        if (anchors[anchor(text, i)] === 0 || !this.grams.has(text.slice(i, i + RUN))) continue;
        if (i <= end) end = i + RUN;
        else {
          if (start >= 0) ranges.push(start, end);
          start = i;
          end = i + RUN;
        }
      }
      if (start >= 0) ranges.push(start, end);
    }
    for (const w of this.whole) {
      for (let at = text.indexOf(w); at >= 0; at = text.indexOf(w, at + w.length)) ranges.push(at, at + w.length);
    }
  }
}

/**
 * Credential shapes masked whatever their value: an Authorization scheme's token, the value after a credential
 * header or parameter name (`x-api-key: …`, `"api_key":"…"`, `?key=…`), a SigV4 access key id.
 */
const SHAPES: Array<[RegExp, string]> = [
  [/\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/-]{12,}=*/gi, `$1$2${REDACTED}`],
  [/\b(x-api-key|x-goog-api-key|api-key|api_key|apikey|x-amz-security-token|access_token|refresh_token|client_secret|private_key)(\\?["']?\s*[:=]\s*\\?["']?)[^\s"'\\,;&}]{8,}/gi, `$1$2${REDACTED}`],
  [/([?&](?:key|api_key|api-key|token|access_token|sig|signature)=)[^\s"'&#]{8,}/gi, `$1${REDACTED}`],
  [/\b(Credential=)[A-Z0-9]{16,}/g, `$1${REDACTED}`],
];

/** `text` with every known secret and every credential shape replaced by REDACTED. */
export function redactText(text: string, indexes: readonly SecretIndex[]): string {
  if (text.length < MIN_SECRET) return text;
  const ranges: number[] = [];
  for (const index of indexes) index.mark(text, ranges);
  let out = ranges.length ? cut(text, ranges) : text;
  for (const [re, by] of SHAPES) {
    re.lastIndex = 0;
    if (re.test(out)) out = out.replace(re, by);
  }
  return out;
}

/** Replaces the (possibly overlapping) ranges, merged, with one REDACTED each. */
function cut(text: string, ranges: number[]): string {
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i]!, ranges[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  let out = "";
  let pos = 0;
  for (let i = 0; i < pairs.length;) {
    const start = pairs[i]![0];
    let end = pairs[i]![1];
    for (i++; i < pairs.length && pairs[i]![0] <= end; i++) end = Math.max(end, pairs[i]![1]);
    out += text.slice(pos, start) + REDACTED;
    pos = end;
  }
  return out + text.slice(pos);
}

/** Deepest nesting walked; anything deeper (an upstream's pathological JSON) is replaced whole. */
const MAX_DEPTH = 32;

/**
 * Masks every string (values and keys) of a JSON-like value. Objects and arrays are changed in place, and only where
 * a string changed (objects shared with the rest of the request, such as the attempt list, stay as they are);
 * the possibly new value is returned (a string, or a subtree too deep to walk).
 */
export function redactValue<T>(value: T, indexes: readonly SecretIndex[], depth = 0): T {
  if (typeof value === "string") return redactText(value, indexes) as T;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return REDACTED as T;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value; // not JSON-like (a Buffer, an Error...)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const r = redactValue(v, indexes, depth + 1);
      if (r !== v) value[i] = r;
    }
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    const r = redactValue(v, indexes, depth + 1);
    const rk = redactText(k, indexes);
    if (rk !== k) {
      delete obj[k];
      obj[rk] = r;
    } else if (r !== v) {
      try {
        obj[k] = r;
      } catch { /* a frozen object: nothing upstream-derived is frozen */ }
    }
  }
  return value;
}
