// Message threads (beta message-threads-*) keep the conversation on Anthropic's servers and send only new turns; no
// other upstream holds them: not a translated model, nor Claude on Bedrock or Vertex (whose APIs refuse the unknown
// `thread` key, a 400 the SDK cannot recover from). Every such route refuses it with this one error, before anything
// is sent: the code the SDK's threads recognise, so one created with unsupportedRequestBehavior
// 'continue_unthreaded' (the tool runner's default) resends the full history.
import { invalidRequest } from "../../../core/errors.ts";

/** Throws the 400 naming `thread` when the body asks for a message thread. */
export function refuseThread(body: { thread?: unknown }): void {
  if (body.thread === undefined || body.thread === null) return;
  throw invalidRequest("message threads are only kept by Anthropic's own API; send the full history (the SDK tool runner: thread: false)", "thread", { error_code: "thread_unsupported_request", unsupported: ["thread"] });
}
