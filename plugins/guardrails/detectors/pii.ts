// Personal data detectors: e-mail addresses, phone numbers, card numbers (Luhn), IBANs (mod-97), national ids (US SSN,
// UK NINO, Spanish DNI/NIE, French NIR, each with its own check) and IPv4 addresses. Candidates are found by one
// regular expression each and kept only when their check passes, so a run of digits is not a card number.
import { dniValid, ibanValid, luhn, ninoValid, nirValid, ssnValid } from "./checksums.ts";
import type { Detector } from "./types.ts";

export const email: Detector = {
  kind: "email",
  label: "EMAIL",
  hint: "@",
  // An apostrophe may be inside the local part (o'neil@), not before it: a quoted 'a@b.io' is found without its quote.
  re: /(?<![\w.%+-])[A-Za-z0-9][\w.%+'-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])/g,
};

/** 13 to 19 digits, optionally grouped by spaces or dashes, that pass Luhn and start like a card network's numbers (2-6). */
export const card: Detector = {
  kind: "card",
  label: "CARD",
  re: /(?<![\d-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\d-])/g,
  valid: (m) => {
    const n = m.replace(/\D/g, "").length;
    return n >= 13 && n <= 19 && grouped(m) && luhn(m);
  },
};

/** Card numbers are printed whole or in the networks' groups: 4-4-4-4(-3), or Amex/Diners 4-6-5 / 4-6-4. */
function grouped(m: string): boolean {
  const groups = m.split(/[ -]/);
  if (groups.length === 1) return true;
  const sizes = groups.map((g) => g.length).join("-");
  return sizes === "4-4-4-4" || sizes === "4-4-4-4-3" || sizes === "4-6-5" || sizes === "4-6-4";
}

/** Country code, check digits, then up to 30 letters or digits, in groups of four or not. */
export const iban: Detector = {
  kind: "iban",
  label: "IBAN",
  re: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])/g,
  valid: ibanValid,
};

/**
 * Phone numbers: international (+ and 7 to 15 digits), North American ((415) 555-2671, 415-555-2671) and national
 * numbers with a trunk 0 (07700 900123, 06 12 34 56 78). Plain digit runs without a + or a leading 0 are left alone:
 * they are order numbers and amounts far more often than phones.
 */
export const phone: Detector = {
  kind: "phone",
  label: "PHONE",
  re: /(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{3}\)[ .-]?\d{3}[ .-]?\d{4}|\d{3}[.-]\d{3}[.-]\d{4}|0\d{1,4}(?:[ .-]?\d{2,4}){2,4})(?![\w])/g,
  valid: (m) => {
    const n = m.replace(/\D/g, "").length;
    return m.startsWith("+") ? n >= 8 && n <= 15 : n >= 10 && n <= 12;
  },
};

const SSN = /^\d{3}-\d{2}-\d{4}$/;
const NINO = /^[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]$/;
const DNI = /^(?:\d{8}|[XYZ]\d{7})-?[A-Z]$/;

/** One expression for the four formats; the check that applies is chosen by the shape of the match. */
export const nationalId: Detector = {
  kind: "national_id",
  label: "NATIONAL_ID",
  re: /(?<![\w-])(?:\d{3}-\d{2}-\d{4}|[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]|(?:\d{8}|[XYZ]\d{7})-?[A-Z]|[12] ?\d{2} ?\d{2} ?(?:\d{2}|2A|2B) ?\d{3} ?\d{3} ?\d{2})(?![\w-])/g,
  valid: (m) => {
    if (SSN.test(m)) return ssnValid(m);
    if (NINO.test(m)) return ninoValid(m);
    if (DNI.test(m)) return dniValid(m);
    return nirValid(m);
  },
};

export const ipv4: Detector = {
  kind: "ip",
  label: "IP",
  hint: ".",
  re: /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.])/g,
};
