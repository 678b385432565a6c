// The MCP endpoint's open sessions, bounded by mcp.max_sessions. When a session past the bound is added, the key
// holding the most sessions (the new one counted) loses the one of its own idle longest; among keys holding as many,
// the session idle longest of theirs goes. So a key opening sessions in a loop closes only its own, and a key within
// its fair share (max_sessions / keys using MCP) is never closed by another. Each add costs O(1) in the usual cases:
// sessions are kept in least-recently-used order (overall and per key) and keys are bucketed by how many they hold.

/** What the table needs of a session (core/mcp/session.ts McpSession). */
export interface TableSession {
  id?: string;
  readonly projectId: string;
  readonly keyId: string;
  /** Requests being handled now: a busy session is never closed for being idle or to make room. */
  busy: number;
  lastUsed: number;
  close(): Promise<void>;
}

export interface SessionLimits {
  maxSessions: number;
  idleMs: number;
}

const ownerOf = (s: TableSession): string => `${s.projectId}\0${s.keyId}`;

export class SessionTable<S extends TableSession> {
  /** Every session, the one used least recently first (touch() moves a session to the end). */
  private readonly byUse = new Map<string, S>();
  /** Each key's sessions, in the same order. */
  private readonly owners = new Map<string, Map<string, S>>();
  /** Keys by how many sessions they hold, and the largest such count. */
  private readonly ownersByCount = new Map<number, Set<string>>();
  private most = 0;

  constructor(private readonly limits: () => SessionLimits) {}

  get size(): number {
    return this.byUse.size;
  }

  /** The session, unless it ended; one idle past idleMs ends now rather than at the next sweep. */
  get(id: string, now = Date.now()): S | undefined {
    const s = this.byUse.get(id);
    if (s && this.idle(s, now)) {
      this.remove(s);
      void s.close();
      return undefined;
    }
    return s;
  }

  /** The session was used now: it moves to the end of the eviction order. */
  touch(s: S, now = Date.now()): void {
    s.lastUsed = now;
    if (!s.id || this.byUse.get(s.id) !== s) return; // not (or no longer) in the table
    this.byUse.delete(s.id);
    this.byUse.set(s.id, s);
    const own = this.owners.get(ownerOf(s))!;
    own.delete(s.id);
    own.set(s.id, s);
  }

  add(s: S): void {
    if (!s.id || this.byUse.has(s.id)) return;
    this.byUse.set(s.id, s);
    const owner = ownerOf(s);
    let own = this.owners.get(owner);
    if (!own) this.owners.set(owner, (own = new Map()));
    own.set(s.id, s);
    this.recount(owner, own.size - 1, own.size);
    while (this.byUse.size > this.limits().maxSessions) {
      const victim = this.victim(s);
      if (!victim) break; // every other session is busy: the bound holds again once one ends
      // Out of the table now, not when its close reports back: a session already closed would never report, stay
      // first in line, and take every later eviction with it.
      this.remove(victim);
      void victim.close();
    }
  }

  remove(s: S): void {
    if (!s.id || this.byUse.get(s.id) !== s) return;
    this.byUse.delete(s.id);
    const owner = ownerOf(s);
    const own = this.owners.get(owner)!;
    own.delete(s.id);
    if (own.size === 0) this.owners.delete(owner);
    this.recount(owner, own.size + 1, own.size);
  }

  /** Closes the sessions idle past idleMs (each leaves the table as its close reports back). */
  sweep(now = Date.now()): void {
    for (const s of this.byUse.values()) if (this.idle(s, now)) void s.close();
  }

  /** Empties the table, handing back what it held. */
  takeAll(): S[] {
    const all = [...this.byUse.values()];
    this.byUse.clear();
    this.owners.clear();
    this.ownersByCount.clear();
    this.most = 0;
    return all;
  }

  private idle(s: S, now: number): boolean {
    return s.busy === 0 && now - s.lastUsed > this.limits().idleMs;
  }

  private recount(owner: string, from: number, to: number): void {
    const was = this.ownersByCount.get(from);
    was?.delete(owner);
    if (was?.size === 0) this.ownersByCount.delete(from);
    if (to > 0) {
      let now = this.ownersByCount.get(to);
      if (!now) this.ownersByCount.set(to, (now = new Set()));
      now.add(owner);
    }
    if (to > this.most) this.most = to;
    else if (from === this.most && !this.ownersByCount.has(from)) this.most = to; // counts move by one
  }

  private countOf(s: S): number {
    return this.owners.get(ownerOf(s))?.size ?? 0;
  }

  /** The session to close to make room for `added`: the idle-longest of the key holding the most, never a busy one. */
  private victim(added: S): S | undefined {
    const evictable = (x: S) => x !== added && x.busy === 0;
    const largest = this.ownersByCount.get(this.most);
    if (largest?.size === 1) {
      const [owner] = largest;
      for (const x of this.owners.get(owner!)!.values()) if (evictable(x)) return x;
    } else {
      // Several keys hold as many: the first of theirs in use order (at once when every key holds one).
      for (const x of this.byUse.values()) if (evictable(x) && this.countOf(x) === this.most) return x;
    }
    // Every session of the largest keys is busy (or is the one being added): the next largest key's idle-longest.
    let best: S | undefined;
    for (const x of this.byUse.values()) if (evictable(x) && (!best || this.countOf(x) > this.countOf(best))) best = x;
    return best;
  }
}
