// Native Anthropic JSON responses: the message passes through; usage is reported in canonical form.
import type { CallOptions } from "../../../core/contracts/provider.ts";
import { fromAnthropicUsage } from "./usage.ts";

// No first token is reported: a time to first token is a stream's alone (the console tells streamed requests by it).
export function acceptMessage(json: any, call: Pick<CallOptions, "reportUsage">): unknown {
  if (json?.usage) call.reportUsage(fromAnthropicUsage(json.usage));
  return json;
}
