// The request body is read when the pipeline first needs it — the validate step right after auth — and not before:
// an unauthenticated request is answered from its headers, its body neither buffered nor parsed. A body left
// unread by the answer is not waited for either: the response closes the connection (see handle.ts).
import type { GatewayContext } from "../pipeline/context.ts";

const readers = new WeakMap<GatewayContext, () => Promise<unknown>>();

export function deferBody(ctx: GatewayContext, read: () => Promise<unknown>): void {
  readers.set(ctx, read);
}

/** Read and parse the body into ctx.body, once; a no-op when there is none (GET) or it was read already. */
export async function loadBody(ctx: GatewayContext): Promise<void> {
  const read = readers.get(ctx);
  if (!read) return;
  readers.delete(ctx);
  ctx.body = await read();
}

/** The request has a body the pipeline never asked for (it was answered before validation: 401, ...). */
export function bodyUnread(ctx: GatewayContext): boolean {
  return readers.has(ctx);
}
