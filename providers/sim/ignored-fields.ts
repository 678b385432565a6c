// Request fields the simulator takes but does not act on: it writes no log probabilities and no reasoning. A live
// model that leaves them out says so in x-mg-dropped-params; so does the simulator, so a sandbox trial of an SDK
// feature is not silently empty. Named as the client spelled them (a translated client's chat body carries its
// names: client-names.ts), so a Messages client hears `thinking`, a Responses client `reasoning.effort`.
import { clientName } from "../translate/client-names.ts";

/** The chat body's fields the simulator ignores although they ask for something, in the client's spelling. */
export function ignoredFields(body: any): string[] {
  const out: string[] = [];
  if (body.logprobs === true) out.push("logprobs");
  if (typeof body.top_logprobs === "number" && body.top_logprobs > 0) out.push("top_logprobs");
  // "none" asks for no reasoning, which is what the simulator does anyway.
  if (typeof body.reasoning_effort === "string" && body.reasoning_effort !== "none") out.push("reasoning_effort");
  return [...new Set(out.map((f) => clientName(body, f)))];
}
