// An OpenAI conversation (Responses `conversation`, the Conversations API) under a rule that hands out placeholders:
// OpenAI fills the request in from its own copy of the conversation, which holds an earlier request's [EMAIL_1] (one
// value) beside this request's [EMAIL_1] (another), and the gateway holds no copy it could send in its place (as it
// does for previous_response_id). Refused before anything leaves, naming the field and the ways round it.
import { GatewayError } from "../../core/errors.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { Guard } from "./compile.ts";

export function refuseOpenAIConversation(ctx: GatewayContext, guard: Guard): void {
  if (ctx.endpoint !== "responses" || !guard.placeholders || (ctx.body as any)?.conversation == null) return;
  throw new GatewayError(
    400,
    "INVALID_REQUEST",
    "conversation: this project's guardrails hand out placeholders ([EMAIL_1]) numbered per request, which an OpenAI conversation would mix up across turns; chain turns with previous_response_id, or make the project's redact rules redact_with: mask",
    { details: { field: "conversation" } },
  );
}
