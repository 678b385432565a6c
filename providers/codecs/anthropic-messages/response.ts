// Native Anthropic JSON responses: the message passes through once it is one (answer-shape.ts); usage is reported in
// canonical form.
import type { CallOptions } from "../../../core/contracts/provider.ts";
import { checkMessagesAnswer } from "../../answer-shape.ts";
import { fromAnthropicUsage } from "./usage.ts";

// No first token is reported: a time to first token is a stream's alone (the console tells streamed requests by it).
export function acceptMessage(provider: string, json: unknown, call: Pick<CallOptions, "reportUsage">): unknown {
  const message = checkMessagesAnswer(provider, json);
  if (message.usage) call.reportUsage(fromAnthropicUsage(message.usage));
  return message;
}
