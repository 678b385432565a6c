// Requests whose answer stands on state the provider keeps and changes while the body stays the same: the same body
// is a new question each time, so the cache neither answers nor keeps them. Responses: core/responses/replayable.ts.
// Messages: a request naming a container (`container: "container_…"` or `{ id }`) runs its code execution in it, on
// the files earlier turns left there; one without (or `{ skills }` alone) gets a fresh container made from the body.
import type { EndpointKind } from "../../core/pipeline/context.ts";
import { changesUnderIt } from "../../core/responses/replayable.ts";

const named = (c: unknown): boolean =>
  (typeof c === "string" && c !== "") || (c !== null && typeof c === "object" && typeof (c as { id?: unknown }).id === "string" && (c as { id: string }).id !== "");

export function onProviderState(endpoint: EndpointKind, body: any): boolean {
  if (endpoint === "responses") return changesUnderIt(body);
  if (endpoint === "messages") return named(body?.container);
  return false;
}
