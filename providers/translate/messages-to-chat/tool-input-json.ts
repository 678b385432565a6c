// One tool_use block's input as a chat upstream streams its arguments, for a Messages client. The Anthropic SDKs (and
// vercel/ai) join the block's input_json_delta fragments and parse the whole at content_block_stop; a join that is not
// JSON came out as `input: {}` (the TS SDK's partial parser) or a throw (a stray `}`), where the JSON path gives
// `{rawInvalidInput: "<arguments>"}` (chat-to-messages/request.ts parseArgs). So the arguments go out as they come
// while what went out can still be closed as an object; the rest waits — the top-level object's closing brace, a
// number or a literal until it ends, an escape — and goes out at the block's end: as it came when the arguments
// turned out a whole JSON object (the join is the arguments, byte for byte), else as the closing that turns the join
// into an object with the arguments in rawInvalidInput, beside the members that went out before they broke (nothing
// can take them back; a member cut short is closed: a key owed its value gets null).
// Arguments that do not open an object (`[1]`, `city=x`) are held whole and sent as the JSON path's object. A strict
// JSON scan, one pass, no copy of what goes out live.
import { parseArgs } from "../chat-to-messages/request.ts";

const enum St {
  /** Before the first byte that is not a blank. */
  Start,
  /** After `{` or `[`: a key (object), a value (array) or the close. */
  Open,
  /** In a key string. */
  Key,
  /** After a key: its colon. */
  AfterKey,
  /** After a colon or a comma in an array: a value. */
  Value,
  /** After a comma in an object: a key. */
  NextKey,
  /** In a value string. */
  Str,
  /** In a number or a literal (true, false, null). */
  Bare,
  /** After a value in a container: a comma or the close. */
  After,
  /** The top-level value has closed: only blanks may follow. */
  Done,
  /** Not JSON. */
  Bad,
}

const BARE = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;
const isBlank = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** Characters that may follow a backslash in a JSON string. */
const ESCAPES = new Set([34, 92, 47, 98, 102, 110, 114, 116, 117]);

export class ToolInputJson {
  private st = St.Start;
  /** Open containers, outermost first: `o` object, `a` array (a string: a snapshot of it is a reference). */
  private stack = "";
  private escaped = false;
  /** Hex digits still owed by a `\u` escape. */
  private hex = 0;
  private bare = "";
  /** Every byte so far (the arguments for rawInvalidInput). */
  private raw = "";
  /** Bytes not sent yet. */
  private pending = "";
  /** Where what was sent ends: its open containers and state (one that closes: closable()); undefined: nothing sent. */
  private sentStack: string | undefined;
  private sentSt = St.Open;

  /** The arguments' next fragment: what may go out now ("" for nothing). */
  push(s: string): string {
    this.raw += s;
    let safe = -1;
    let safeStack = "";
    let safeSt = St.Open;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      // Most of a long input is a string's plain characters: nothing changes but where it may be closed.
      if (this.st === St.Str && c >= 32 && c !== 34 && c !== 92 && !this.escaped && this.hex === 0) {
        if (this.stack.charCodeAt(0) === 111) {
          safe = i + 1;
          safeStack = this.stack;
          safeSt = St.Str;
        }
        continue;
      }
      this.step(c);
      if (this.closable()) {
        safe = i + 1;
        safeStack = this.stack;
        safeSt = this.st;
      }
    }
    if (safe < 0) {
      this.pending += s;
      return "";
    }
    this.sentStack = safeStack;
    this.sentSt = safeSt;
    const out = this.pending + (safe === s.length ? s : s.slice(0, safe));
    this.pending = safe === s.length ? "" : s.slice(safe);
    return out;
  }

  /** The arguments are a whole JSON object or array: nothing more belongs to them. */
  get whole(): boolean {
    return this.st === St.Done;
  }

  /** The block's end: what goes out before its content_block_stop ("" for nothing). */
  end(): string {
    if (this.raw === "") return "";
    if (this.sentStack === undefined) return JSON.stringify(parseArgs(this.raw));
    // Something went out: the arguments open an object. Whole, the rest goes as it came.
    if (this.st === St.Done) return this.pending;
    // What went out ends a value, then every container inside the top-level object closes, then the member.
    let st = this.sentSt;
    let out = st === St.Str ? '"' : st === St.Key ? '":null' : st === St.AfterKey ? ":null" : st === St.Value ? "null" : "";
    if (out) st = St.After;
    for (let i = this.sentStack.length - 1; i >= 1; i--) {
      out += this.sentStack[i] === "o" ? "}" : "]";
      st = St.After;
    }
    return `${out}${st === St.After ? "," : ""}"rawInvalidInput":${JSON.stringify(this.raw)}}`;
  }

  /**
   * Whether what was scanned so far can be closed as an object (end()): inside a top-level object, not in a number,
   * a literal or an escape, and not after a comma in a nested object (its next key is owed).
   */
  private closable(): boolean {
    if (this.stack.charCodeAt(0) !== 111) return false;
    switch (this.st) {
      case St.Open:
      case St.After:
      case St.Value:
      case St.AfterKey:
        return true;
      case St.Str:
      case St.Key:
        return !this.escaped && this.hex === 0;
      case St.NextKey:
        return this.stack.length === 1;
      default:
        return false;
    }
  }

  private step(c: number): void {
    switch (this.st) {
      case St.Str:
      case St.Key:
        if (this.hex > 0) {
          if (isHex(c)) this.hex--;
          else this.st = St.Bad;
        } else if (this.escaped) {
          this.escaped = false;
          if (c === 117) this.hex = 4;
          else if (!ESCAPES.has(c)) this.st = St.Bad;
        } else if (c === 92) this.escaped = true;
        else if (c === 34) this.st = this.st === St.Key ? St.AfterKey : this.valueDone();
        else if (c < 32) this.st = St.Bad;
        return;
      case St.Bare:
        if ((c >= 48 && c <= 57) || (c >= 97 && c <= 122) || c === 45 || c === 43 || c === 46 || c === 69) {
          this.bare += String.fromCharCode(c);
          return;
        }
        if (!BARE.test(this.bare)) {
          this.st = St.Bad;
          return;
        }
        this.bare = "";
        this.st = this.valueDone();
        if (this.st === St.Done || this.st === St.After) this.step(c);
        return;
      case St.Done:
        if (!isBlank(c)) this.st = St.Bad;
        return;
      case St.Bad:
        return;
    }
    if (isBlank(c)) return;
    const inObject = this.stack.charCodeAt(this.stack.length - 1) === 111;
    switch (this.st) {
      case St.Start:
      case St.Value:
        return this.value(c);
      case St.Open:
        if (c === (inObject ? 125 : 93)) return this.close();
        if (inObject) this.st = c === 34 ? St.Key : St.Bad;
        else this.value(c);
        return;
      case St.NextKey:
        this.st = c === 34 ? St.Key : St.Bad;
        return;
      case St.AfterKey:
        this.st = c === 58 ? St.Value : St.Bad;
        return;
      case St.After:
        if (c === 44) this.st = inObject ? St.NextKey : St.Value;
        else if (c === (inObject ? 125 : 93)) this.close();
        else this.st = St.Bad;
        return;
    }
  }

  /** A value's first byte. */
  private value(c: number): void {
    if (c === 123 || c === 91) {
      this.stack += c === 123 ? "o" : "a";
      this.st = St.Open;
    } else if (c === 34) this.st = St.Str;
    else if (c === 45 || (c >= 48 && c <= 57) || c === 116 || c === 102 || c === 110) {
      this.bare = String.fromCharCode(c);
      this.st = St.Bare;
    } else this.st = St.Bad;
  }

  private close(): void {
    this.stack = this.stack.slice(0, -1);
    this.st = this.valueDone();
  }

  private valueDone(): St {
    return this.stack === "" ? St.Done : St.After;
  }
}
