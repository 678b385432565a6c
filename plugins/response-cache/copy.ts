// A kept answer's own copy, for when a step after the cache edits the answer it is handed in place (the guardrails
// rewrite a stream's events as their output rules hold text back): the kept one then stays as it was kept.
import type { StoredResponse } from "../../core/store/types.ts";

export function copied(response: StoredResponse): StoredResponse {
  if (response.kind === "json") return { ...response, body: structuredClone(response.body) };
  if (response.kind === "stream") return { ...response, events: response.events.map((e) => ({ ...e })) };
  return response;
}

/** A kept answer to serve: itself when nothing after the cache edits it (no cost per hit), else its own copy. */
export function toServe(response: StoredResponse, edited: boolean): StoredResponse {
  return edited ? copied(response) : response;
}
