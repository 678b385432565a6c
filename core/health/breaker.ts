// A circuit breaker for one (model, provider) endpoint: closed -> open on N consecutive failures or an error rate
// over a sliding window; open endpoints are skipped until the cooldown ends; then exactly one half-open probe is let
// through, whose outcome closes the circuit or opens it again. Pure: the clock is passed in.

export type CircuitState = "closed" | "open" | "half_open";

export interface BreakerPolicy {
  consecutiveFailures: number;
  errorRate: number;
  minRequests: number;
  windowMs: number;
  cooldownMs: number;
}

export const DEFAULT_POLICY: BreakerPolicy = {
  consecutiveFailures: 5,
  errorRate: 0.5,
  minRequests: 20,
  windowMs: 60_000,
  cooldownMs: 30_000,
};

/** The window is kept as 10 buckets of counts, so memory does not grow with traffic. */
const BUCKETS = 10;

/** What a half-open endpoint whose probe is under way asks a caller to wait: the probe's outcome is due any moment. */
export const PROBE_WAIT_MS = 1000;

export class CircuitBreaker {
  state: CircuitState = "closed";
  private consecutive = 0;
  private openedAt = 0;
  private probeInFlight = false;
  private probeAt = 0;
  /** The request the half-open probe belongs to, when its caller said (HealthRegistry passes the request's context). */
  private probeOwner: object | undefined;
  private readonly ok = new Array<number>(BUCKETS).fill(0);
  private readonly bad = new Array<number>(BUCKETS).fill(0);
  private bucketAt = new Array<number>(BUCKETS).fill(-1);

  constructor(
    /** Replaced when the config is reloaded with other thresholds; the state is kept. */
    public policy: BreakerPolicy,
    private readonly onTransition: (from: CircuitState, to: CircuitState) => void = () => {},
  ) {}

  /**
   * May a request use this endpoint now? In half-open state only one probe at a time gets a yes; `owner` (the
   * request) is remembered as the probe's, so another request's release() cannot free its slot.
   */
  allow(now: number, owner?: object): boolean {
    if (this.state === "closed") return true;
    this.notAhead(now);
    if (this.state === "open") {
      if (now - this.openedAt < this.policy.cooldownMs) return false;
      this.move("half_open");
    }
    // A probe whose outcome never came back (its response was never consumed) stops blocking after a cooldown.
    if (this.probeInFlight && now - this.probeAt < this.policy.cooldownMs) return false;
    this.probeInFlight = true;
    this.probeAt = now;
    this.probeOwner = owner;
    return true;
  }

  /** Would allow() say yes, without taking the probe slot (for listing and sorting). */
  peek(now: number): CircuitState {
    this.notAhead(now);
    if (this.state === "open" && now - this.openedAt >= this.policy.cooldownMs) return "half_open";
    return this.state;
  }

  /**
   * Milliseconds until allow() could say yes: 0 when closed or its cooldown is over; else until the cooldown ends.
   * A half-open probe in flight decides within its own request: PROBE_WAIT_MS then, rather than the cooldown.
   */
  retryInMs(now: number): number {
    this.notAhead(now);
    if (this.state === "open") return Math.max(0, this.openedAt + this.policy.cooldownMs - now);
    if (this.state === "half_open" && this.probeInFlight) return Math.max(0, Math.min(PROBE_WAIT_MS, this.probeAt + this.policy.cooldownMs - now));
    return 0;
  }

  record(success: boolean, now: number): void {
    this.count(success, now);
    if (this.state === "half_open") {
      this.probeInFlight = false;
      if (success) {
        this.consecutive = 0;
        this.resetWindow();
        this.move("closed");
      } else {
        this.open(now);
      }
      return;
    }
    if (success) {
      this.consecutive = 0;
      return;
    }
    this.consecutive++;
    if (this.state === "closed" && (this.consecutive >= this.policy.consecutiveFailures || this.rateExceeded(now))) this.open(now);
  }

  /**
   * A probe that ended without an outcome (client left): free the slot. An attempt that was not the probe (one let
   * through while the circuit was closed, ending while a probe is out) frees nothing: a second probe would go out.
   */
  release(owner?: object): void {
    if (owner !== undefined && this.probeOwner !== undefined && owner !== this.probeOwner) return;
    this.probeInFlight = false;
    this.probeOwner = undefined;
  }

  /**
   * An open or probe time later than now means the clock stepped back since (an NTP correction): it counts as now,
   * so the endpoint waits out its cooldown from the first consult after the step (at most one cooldown more), not
   * for the step's length more.
   */
  private notAhead(now: number): void {
    if (this.openedAt > now) this.openedAt = now;
    if (this.probeAt > now) this.probeAt = now;
  }

  private open(now: number): void {
    this.openedAt = now;
    this.probeInFlight = false;
    this.move("open");
  }

  private move(to: CircuitState): void {
    if (to === this.state) return;
    const from = this.state;
    this.state = to;
    this.onTransition(from, to);
  }

  private slot(now: number): number {
    const width = this.policy.windowMs / BUCKETS;
    const tick = Math.floor(now / width);
    const i = tick % BUCKETS;
    if (this.bucketAt[i] !== tick) {
      this.bucketAt[i] = tick;
      this.ok[i] = 0;
      this.bad[i] = 0;
    }
    return i;
  }

  private count(success: boolean, now: number): void {
    const i = this.slot(now);
    if (success) this.ok[i]!++;
    else this.bad[i]!++;
  }

  private rateExceeded(now: number): boolean {
    const width = this.policy.windowMs / BUCKETS;
    const tick = Math.floor(now / width);
    let ok = 0;
    let bad = 0;
    for (let i = 0; i < BUCKETS; i++) {
      // A bucket stamped after now was counted before the clock stepped back (an NTP correction): stale, as the
      // window's own are once passed: what it counted must not add to the failures after the step and open the circuit.
      const age = tick - this.bucketAt[i]!;
      if (age >= 0 && age < BUCKETS) {
        ok += this.ok[i]!;
        bad += this.bad[i]!;
      }
    }
    const n = ok + bad;
    return n >= this.policy.minRequests && bad / n >= this.policy.errorRate;
  }

  private resetWindow(): void {
    this.bucketAt = new Array<number>(BUCKETS).fill(-1);
  }
}
