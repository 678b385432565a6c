// What the answer-shape tests share: call options that record the usage a decoder reports, and the 502 a decoder
// gives for a 200 that is not an answer.
import type { CallOptions, Usage } from "../core/contracts/provider.ts";

export function recordingCall(): { options: CallOptions; usage: Usage[] } {
  const usage: Usage[] = [];
  const options = {
    signal: new AbortController().signal, requestId: "r", clientHeaders: {},
    reportUsage: (u: Usage) => usage.push(u), reportFirstToken() {}, reportFirstEvent() {},
  } as unknown as CallOptions;
  return { options, usage };
}

export const invalidAnswer = (provider: string) => ({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider, reason: "invalid_answer" } });
