import { describe, expect, it } from "vitest";
import { dniValid, entropy, ibanValid, luhn, ninoValid, nirValid, ssnValid } from "./checksums.ts";

describe("check digits", () => {
  it("Luhn accepts the test card numbers and refuses a changed digit", () => {
    for (const n of ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005", "6011111111111117"]) expect(luhn(n)).toBe(true);
    for (const n of ["4111 1111 1111 1112", "5500000000000005", "378282246310006"]) expect(luhn(n)).toBe(false);
  });

  it("mod-97 accepts real IBAN examples, spaced or not, and refuses a typo or a wrong length", () => {
    for (const n of ["DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "FR1420041010050500013M02606", "NL91ABNA0417164300"]) expect(ibanValid(n)).toBe(true);
    expect(ibanValid("DE89 3704 0044 0532 0130 01")).toBe(false);
    expect(ibanValid("DE89370400440532013")).toBe(false); // too short for DE
    expect(ibanValid("XX89370400440532013000")).toBe(false); // no such country
  });

  it("national ids carry their own checks", () => {
    expect(ssnValid("123-45-6789")).toBe(true);
    expect(ssnValid("000-45-6789") || ssnValid("666-45-6789") || ssnValid("923-45-6789") || ssnValid("123-00-6789")).toBe(false);
    expect(dniValid("12345678Z")).toBe(true);
    expect(dniValid("12345678A")).toBe(false);
    expect(dniValid("X1234567L")).toBe(true);
    expect(nirValid("1 84 12 76 451 089 46")).toBe(true);
    expect(nirValid("1 84 12 76 451 089 47")).toBe(false);
    expect(ninoValid("AB 12 34 56 C")).toBe(true);
    expect(ninoValid("GB 12 34 56 C")).toBe(false);
  });

  it("entropy tells a random token from a word", () => {
    expect(entropy("aaaaaaaaaaaaaaaa")).toBe(0);
    expect(entropy("Zx9Qw3Lm8Rt2Vb7N")).toBeGreaterThan(3.5);
    expect(entropy("passwordpassword")).toBeLessThan(3);
  });
});
