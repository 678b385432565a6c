// The rules of rotating a gateway.yaml key (`model-gateway keys rotate --config`), the admin API's for a stored key
// (core/admin/keys.ts rotateKey): a revoked or expired key is not rotated, and a key has one successor. The file
// records the pair as the store does: the retiring key's entry gets `replaced_by`, its successor's `rotated_from`.
import type { YamlKey } from "./yaml-edit.ts";

const CHAIN = /^(.*)-r(\d+)$/;

/** The default id of a successor: the chain's first id with -r2, -r3, ... (the first free one), as the API names it. */
export function successorId(id: string, taken: Set<string>): string {
  const root = id.replace(/-r\d+$/, "");
  for (let n = 2; ; n++) if (!taken.has(`${root}-r${n}`)) return `${root}-r${n}`;
}

/**
 * A successor written before rotations recorded `replaced_by`: a later id of the key's chain (team -> team-r2) that
 * names no predecessor, beside an expiry of the key's (every rotation set one). Its expires_at is then the overlap's
 * end, not an expiry of its own, so neither a second successor nor that expiry may be handed on.
 */
function unrecordedSuccessor(keys: YamlKey[], old: YamlKey): string | undefined {
  if (!old.expires_at) return undefined;
  const m = CHAIN.exec(old.id);
  const root = m ? m[1] : old.id;
  const at = m ? Number(m[2]) : 1;
  return keys.find((k) => {
    const c = CHAIN.exec(k.id);
    return k.project === old.project && k.rotated_from === undefined && c !== null && c[1] === root && Number(c[2]) > at;
  })?.id;
}

/** Why `old` may not be rotated, in one line; undefined when it may. */
export function rotationRefusal(keys: YamlKey[], old: YamlKey, now: number): string | undefined {
  const name = `key ${old.project}/${old.id}`;
  if (old.revoked) return `${name} is revoked: create a new key instead`;
  if (old.expires_at && Date.parse(old.expires_at) <= now) return `${name} has expired (${old.expires_at}): create a new key instead`;
  if (old.replaced_by) return `${name} was already rotated to ${old.project}/${old.replaced_by}: rotate ${old.replaced_by} instead`;
  const earlier = unrecordedSuccessor(keys, old);
  if (earlier) return `${name} was already rotated to ${old.project}/${earlier} (its expires_at is that rotation's overlap end): rotate ${earlier} instead`;
  return undefined;
}
