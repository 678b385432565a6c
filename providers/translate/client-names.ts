// How the client of a translation spells fields of the chat body it was given (verbosity is a Responses client's
// text.verbosity), for the fields a chat driver leaves out of its own accord: a host that refuses what it does not
// know (openai-compatible/strict-host.ts) names them in x-mg-dropped-params as the client sent them. The map rides on
// the body under a non-enumerable symbol key, so it is never serialised, sent or compared.
export const CLIENT_NAMES: unique symbol = Symbol("mg.clientNames");

type Named = Record<string | symbol, unknown>;

/** `body` (a translation's chat body, changed in place) with `names` (chat field -> the client's) attached. */
export function withClientNames<T extends Record<string, unknown>>(body: T, names: Readonly<Record<string, string>>): T {
  if (Object.keys(names).length) Object.defineProperty(body, CLIENT_NAMES, { value: names, configurable: true, writable: true });
  return body;
}

/** `field` of the chat body as its client spells it (a chat client's body has no map: as it is). */
export function clientName(body: unknown, field: string): string {
  const names = (body as Named | undefined)?.[CLIENT_NAMES] as Readonly<Record<string, string>> | undefined;
  return names?.[field] ?? field;
}
