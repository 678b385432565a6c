// The models a request names (its model and the fallbacks in providerOptions.gateway.models). In core because
// several plugins read them (allowlist checks each, budget prices the worst one).

/** The requested model, then each fallback model, with the body field that named it. */
export function requestedModels(body: any): { id: string; field: string }[] {
  const out: { id: string; field: string }[] = [];
  if (typeof body?.model === "string") out.push({ id: body.model, field: "model" });
  const fallbacks = body?.providerOptions?.gateway?.models;
  if (Array.isArray(fallbacks)) {
    fallbacks.forEach((id: unknown, i: number) => {
      if (typeof id === "string") out.push({ id, field: `providerOptions.gateway.models[${i}]` });
    });
  }
  return out;
}
