// What a translated Responses attempt cannot serve: a tool_choice forcing a built-in tool (web_search, file_search,
// code_interpreter, mcp, custom, …) the target has no way to run — the model could not obey it. Such an attempt is
// passed over (Unsupported) rather than sent without it: another target may be native, and when none is the client
// gets this 400 before any upstream call. Built-in tools merely offered are not refused: the translator maps web
// search where the upstream has one and drops the rest, naming them in x-mg-dropped-params (responses-to-chat/tools.ts),
// as it drops input items of built-in tools sent back (web_search_call, …).
import { GatewayError } from "../../core/errors.ts";
import { Unsupported, type Translator } from "../../core/contracts/translator.ts";
import { forcedBuiltIn } from "./responses-to-chat/tools.ts";

/** `tr` (a Responses translator) refusing, per attempt, a tool_choice it cannot honour. */
export function nativeOnly<S>(tr: Translator<S>): Translator<S> {
  return {
    ...tr,
    request(body, target, opts) {
      const hit = forcedBuiltIn(body);
      if (hit) {
        throw new Unsupported(new GatewayError(400, "INVALID_REQUEST",
          `${hit.field}: tool_choice forces built-in tool "${hit.value}", which needs an upstream that serves the Responses API itself; ${target.modelId} on provider ${opts.provider} is reached through translation, where it cannot run`,
          { details: { field: hit.field, provider: opts.provider } }));
      }
      return tr.request(body, target, opts);
    },
  };
}
