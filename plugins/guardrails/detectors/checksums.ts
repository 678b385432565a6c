// Check digits that tell a real identifier from a run of digits: Luhn (card numbers), ISO 13616 mod-97 (IBANs) and
// the national ids' own. Each takes the characters as matched, separators included, and ignores the separators.

/** Luhn (ISO/IEC 7812): every second digit from the right doubled, the sum a multiple of 10. */
export function luhn(digits: string): boolean {
  let sum = 0, n = 0;
  for (let i = digits.length - 1; i >= 0; i--) {
    const c = digits.charCodeAt(i) - 48;
    if (c < 0 || c > 9) continue;
    let d = c;
    if (n++ & 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return n > 0 && sum % 10 === 0;
}

/** IBAN lengths by country (ISO 13616 registry): a wrong length is no IBAN, whatever its remainder. */
const IBAN_LENGTH: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28, CZ: 24,
  DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28,
  HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20,
  LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29,
  RO: 24, RS: 22, SA: 24, SC: 31, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22,
  VG: 24, XK: 20,
};

/** ISO 13616: the country's length, and the number (first four characters moved to the end, letters as 10..35) mod 97 is 1. */
export function ibanValid(text: string): boolean {
  const s = text.replace(/[\s-]/g, "").toUpperCase();
  if (IBAN_LENGTH[s.slice(0, 2)] !== s.length) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < moved.length; i++) {
    const c = moved.charCodeAt(i);
    if (c >= 48 && c <= 57) rem = (rem * 10 + (c - 48)) % 97;
    else if (c >= 65 && c <= 90) rem = (rem * 100 + (c - 55)) % 97;
    else return false;
  }
  return rem === 1;
}

/** US Social Security Number: area not 000, 666 or 9xx; group not 00; serial not 0000. */
export function ssnValid(text: string): boolean {
  const d = text.replace(/\D/g, "");
  const area = d.slice(0, 3), group = d.slice(3, 5), serial = d.slice(5);
  return d.length === 9 && area !== "000" && area !== "666" && area[0] !== "9" && group !== "00" && serial !== "0000";
}

const DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE";

/** Spanish DNI (8 digits) or NIE (X/Y/Z + 7 digits): the letter is the number mod 23. */
export function dniValid(text: string): boolean {
  const s = text.replace(/[\s-]/g, "").toUpperCase();
  const lead = "XYZ".indexOf(s[0]!);
  const num = lead >= 0 ? String(lead) + s.slice(1, 8) : s.slice(0, 8);
  if (!/^\d{8}$/.test(num)) return false;
  return DNI_LETTERS[Number(num) % 23] === s[8];
}

/** French NIR (social security number, 13 digits + 2-digit key): key = 97 - number mod 97 (Corsica's 2A/2B as 19/18). */
export function nirValid(text: string): boolean {
  const s = text.replace(/\s/g, "").toUpperCase();
  if (s.length !== 15) return false;
  const body = s.slice(0, 13).replace("2A", "19").replace("2B", "18");
  if (!/^\d{13}$/.test(body)) return false;
  return 97 - Number(BigInt(body) % 97n) === Number(s.slice(13));
}

/** UK National Insurance number: the prefixes HMRC never issues are out (D, F, I, Q, U, V; O second; BG, GB, NK, KN, TN, NT, ZZ). */
export function ninoValid(text: string): boolean {
  const s = text.replace(/\s/g, "").toUpperCase();
  const p = s.slice(0, 2);
  return /^[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]$/.test(s) && !["BG", "GB", "NK", "KN", "TN", "NT", "ZZ"].includes(p);
}

/** Shannon entropy in bits per character: random tokens score high, words and repeated characters low. */
export function entropy(s: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) counts.set(s.charCodeAt(i), (counts.get(s.charCodeAt(i)) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}
