// The rules of rotating a gateway.yaml key (`model-gateway keys rotate --config`), the admin API's for a stored key
// (core/admin/keys.ts rotateKey): a revoked or expired key is not rotated, and a key has one successor. The file
// records the pair in comments on both entries (rotation-marks.ts), which a gateway of an earlier release ignores.
import type { YamlKey } from "./yaml-edit.ts";

const CHAIN = /^(.*)-r(\d+)$/;

/** The default id of a successor: the chain's first id with -r2, -r3, ... (the first free one), as the API names it. */
export function successorId(id: string, taken: Set<string>): string {
  const root = id.replace(/-r\d+$/, "");
  for (let n = 2; ; n++) if (!taken.has(`${root}-r${n}`)) return `${root}-r${n}`;
}

/**
 * A key that may be the successor an earlier release's rotation made, which recorded nothing: a later id of the key's
 * chain (team -> team-r2) recording no predecessor, beside an expiry of the key's (every rotation set one). It may
 * as well be a key of its own (eu-r1 and eu-r2, two regions), so it is never taken for a successor; but if it is one,
 * the key's expires_at is that rotation's overlap end, which a new key must not inherit.
 */
function successorLookalike(keys: YamlKey[], old: YamlKey): string | undefined {
  if (!old.expires_at) return undefined;
  const m = CHAIN.exec(old.id);
  const root = m ? m[1] : old.id;
  const at = m ? Number(m[2]) : 1;
  return keys.find((k) => {
    const c = CHAIN.exec(k.id);
    return k.project === old.project && k.rotated_from === undefined && c !== null && c[1] === root && Number(c[2]) > at;
  })?.id;
}

/**
 * Why `old` may not be rotated, in one line; undefined when it may. `expires`: the new key's expiry given (--expires),
 * when it is, nothing is handed on from the old key's.
 */
export function rotationRefusal(keys: YamlKey[], old: YamlKey, now: number, expires?: string): string | undefined {
  const name = `key ${old.project}/${old.id}`;
  if (old.revoked) return `${name} is revoked: create a new key instead`;
  if (old.expires_at && Date.parse(old.expires_at) <= now) return `${name} has expired (${old.expires_at}): create a new key instead`;
  if (old.replaced_by) return `${name} was already rotated to ${old.project}/${old.replaced_by}: rotate ${old.replaced_by} instead`;
  const lookalike = expires === undefined ? successorLookalike(keys, old) : undefined;
  if (lookalike) {
    const x = old.expires_at!;
    return `${name} has an expires_at (${x}) that the new key would take, but ${old.project}/${lookalike} looks like the successor ` +
      `of an earlier rotation of it that left no record, which would make ${x} that rotation's overlap end: pass --expires DATE ` +
      `for the new key (--expires ${x} if it is ${old.id}'s own; if ${old.id} was rotated to ${lookalike}, rotate ${lookalike} instead)`;
  }
  return undefined;
}
