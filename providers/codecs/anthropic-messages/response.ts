// Native Anthropic JSON responses: the message passes through; usage is reported in canonical form.
import type { CallOptions } from "../../../core/contracts/provider.ts";
import { fromAnthropicUsage } from "./usage.ts";

export function acceptMessage(json: any, call: Pick<CallOptions, "reportUsage" | "reportFirstToken">): unknown {
  call.reportFirstToken();
  if (json?.usage) call.reportUsage(fromAnthropicUsage(json.usage));
  return json;
}
