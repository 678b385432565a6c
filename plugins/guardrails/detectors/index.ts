// The built-in detectors by their config name (rules' `detect:`), in the order their matches win an overlap.
import { card, email, iban, ipv4, nationalId, phone } from "./pii.ts";
import { secretDetectors } from "./secrets.ts";
import type { Detector, DetectorKind } from "./types.ts";

export const DETECTORS: Record<DetectorKind, Detector[]> = {
  secret: secretDetectors,
  iban: [iban],
  card: [card],
  national_id: [nationalId],
  email: [email],
  phone: [phone],
  ip: [ipv4],
};

/** The detectors of the kinds asked for, in precedence order (secrets first: a key may hold digits like a phone). */
export function detectorsFor(kinds: readonly DetectorKind[]): Detector[] {
  const want = new Set(kinds);
  return (Object.keys(DETECTORS) as DetectorKind[]).filter((k) => want.has(k)).flatMap((k) => DETECTORS[k]);
}

export type { Detector, DetectorKind, Span } from "./types.ts";
export { findAll } from "./types.ts";
