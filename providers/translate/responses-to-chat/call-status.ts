// A function_call item's status in a Responses answer made from chat. A call whose arguments are not yet a whole
// JSON value when the answer was cut (finish_reason length: max_output_tokens; content_filter) is "incomplete":
// clients (Codex, agent loops) run every call marked "completed", and would run this one with arguments like {"city":.
/** Whether arguments are a whole JSON object or array (so nothing but blanks can follow). */
export function wholeJson(args: string): boolean {
  const first = args.trimStart()[0];
  if (first !== "{" && first !== "[") return false;
  try {
    JSON.parse(args);
    return true;
  } catch {
    return false;
  }
}

/** `answer`: the response's status (statusOf: incomplete when finish_reason was length or content_filter). */
export function callStatus(args: string, answer: "completed" | "incomplete"): "completed" | "incomplete" {
  return answer === "incomplete" && !wholeJson(args) ? "incomplete" : "completed";
}
