// What a translated Responses attempt cannot serve: a tool_choice forcing a built-in tool (web_search, file_search,
// code_interpreter, mcp, custom, …) the target has no way to run — the model could not obey it — and a
// `conversation` or stored `prompt`, which only OpenAI can expand, and a request without `input`. Such an attempt is
// passed over (Unsupported) rather than sent without it: another target may be native, and when none is the client
// gets this 400 before any upstream call. Built-in tools merely offered are not refused: the translator maps web
// search where the upstream has one and drops the rest, naming them in x-mg-dropped-params (responses-to-chat/tools.ts),
// as it drops input items of built-in tools sent back (web_search_call, …).
import { GatewayError } from "../../core/errors.ts";
import { Unsupported, type Translator } from "../../core/contracts/translator.ts";
import { forcedBuiltIn } from "./responses-to-chat/tools.ts";

/**
 * State only OpenAI keeps: a Conversations API conversation, a stored prompt. Its text is filled in upstream, so a
 * translated attempt would send the model a request without it — a different request, silently (unknown fields are
 * dropped), and one that policies judged as continuing stored state.
 */
function openAiState(body: any): string | undefined {
  if (body?.conversation != null) return "conversation";
  if (body?.prompt != null) return "prompt";
  return undefined;
}

/** `tr` (a Responses translator) refusing, per attempt, a tool_choice it cannot honour or state it cannot read. */
export function nativeOnly<S>(tr: Translator<S>): Translator<S> {
  return {
    ...tr,
    request(body, target, opts) {
      const state = openAiState(body);
      if (state) {
        throw new Unsupported(new GatewayError(400, "INVALID_REQUEST",
          `${state}: names state OpenAI keeps (${state === "conversation" ? "a Conversations API conversation" : "a stored prompt"}), which needs an upstream that serves the Responses API itself; ${target.modelId} on provider ${opts.provider} is reached through translation, where the model would never see it`,
          { details: { field: state, provider: opts.provider } }));
      }
      const hit = forcedBuiltIn(body);
      if (hit) {
        throw new Unsupported(new GatewayError(400, "INVALID_REQUEST",
          `${hit.field}: tool_choice forces built-in tool "${hit.value}", which needs an upstream that serves the Responses API itself; ${target.modelId} on provider ${opts.provider} is reached through translation, where it cannot run`,
          { details: { field: hit.field, provider: opts.provider } }));
      }
      // input is optional in the SDK (a stored prompt may hold it all, named above); a translation has nothing to send.
      if (body?.input == null) {
        throw new Unsupported(new GatewayError(400, "INVALID_REQUEST",
          `input: is required on ${target.modelId} (provider ${opts.provider}), reached through translation; only a model serving the Responses API itself takes a request without it (a stored prompt)`,
          { details: { field: "input", provider: opts.provider } }));
      }
      return tr.request(body, target, opts);
    },
  };
}
