// What only an upstream serving /responses itself understands: built-in tools (web_search, file_search,
// code_interpreter, computer_use_preview, image_generation, mcp, …) and a tool_choice naming one. They pass through
// to a native upstream unchanged; a translated attempt cannot honour them, so it is passed over (Unsupported) rather
// than sent without them — another target may be native, and when none is the client gets this 400 before any
// upstream call. Input items of a built-in tool sent back (web_search_call, …) are no instruction: the translator
// drops them and names them in x-mg-dropped-params (responses-to-chat/request.ts).
import { GatewayError } from "../../core/errors.ts";
import { Unsupported, type Translator } from "../../core/contracts/translator.ts";

/** The first field of a Responses request that only a native upstream can serve, with its value. */
export function nativeOnlyField(body: any): { field: string; value: string } | undefined {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  for (let i = 0; i < tools.length; i++) {
    if (tools[i]?.type !== "function") return { field: `tools[${i}].type`, value: String(tools[i]?.type) };
  }
  const choice = body?.tool_choice;
  // allowed_tools over function tools is translated (the list is narrowed); over a built-in one it is native only.
  const allowedFunctions = choice?.type === "allowed_tools" && Array.isArray(choice.tools) && choice.tools.every((t: any) => t?.type === "function");
  if (choice && typeof choice === "object" && choice.type !== "function" && !allowedFunctions) return { field: "tool_choice.type", value: String(choice.type) };
  return undefined;
}

/** `tr` (a Responses translator) refusing what it cannot translate, per attempt. */
export function nativeOnly<S>(tr: Translator<S>): Translator<S> {
  return {
    ...tr,
    request(body, target, opts) {
      const hit = nativeOnlyField(body);
      if (hit) {
        throw new Unsupported(new GatewayError(400, "INVALID_REQUEST",
          `${hit.field}: built-in tool "${hit.value}" needs an upstream that serves the Responses API itself; ${target.modelId} on provider ${opts.provider} is reached through translation, where only function tools exist`,
          { details: { field: hit.field, provider: opts.provider } }));
      }
      return tr.request(body, target, opts);
    },
  };
}
