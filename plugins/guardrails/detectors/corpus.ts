// A labelled corpus for the detectors: text that holds the values (each must be found whole) and text that looks like
// them but is not (nothing may be found). The unit tests assert it; bench/plugins.bench.ts times the detectors on it.
import type { DetectorKind } from "./types.ts";

export interface Sample {
  text: string;
  /** Values that must be found, each exactly as written in the text. */
  find: Array<[DetectorKind, string]>;
}

/** Not every key below is real: formats only (several are the providers' documented examples). */
export const POSITIVES: Sample[] = [
  { text: "Write to john.doe+work@example.co.uk today.", find: [["email", "john.doe+work@example.co.uk"]] },
  { text: "Mail: a_b@sub.example-mail.org, thanks", find: [["email", "a_b@sub.example-mail.org"]] },
  { text: "alice: alice.o'neil@example.com and 'bob@example.com'", find: [["email", "alice.o'neil@example.com"], ["email", "bob@example.com"]] },
  { text: "Call +1 (415) 555-2671 after 5", find: [["phone", "+1 (415) 555-2671"]] },
  { text: "Ring me on 07700 900123 or +44 7700 900123.", find: [["phone", "07700 900123"], ["phone", "+44 7700 900123"]] },
  { text: "Mon numéro: 06 12 34 56 78", find: [["phone", "06 12 34 56 78"]] },
  { text: "US office 415-555-2671", find: [["phone", "415-555-2671"]] },
  { text: "Card 4111 1111 1111 1111 exp 12/29", find: [["card", "4111 1111 1111 1111"]] },
  { text: "amex 378282246310005.", find: [["card", "378282246310005"]] },
  { text: "mc: 5500-0000-0000-0004", find: [["card", "5500-0000-0000-0004"]] },
  { text: "IBAN DE89 3704 0044 0532 0130 00 please", find: [["iban", "DE89 3704 0044 0532 0130 00"]] },
  { text: "pay GB82WEST12345698765432 now", find: [["iban", "GB82WEST12345698765432"]] },
  { text: "FR1420041010050500013M02606", find: [["iban", "FR1420041010050500013M02606"]] },
  { text: "SSN 123-45-6789 on file", find: [["national_id", "123-45-6789"]] },
  { text: "NI number AB 12 34 56 C", find: [["national_id", "AB 12 34 56 C"]] },
  { text: "DNI 12345678Z y NIE X1234567L", find: [["national_id", "12345678Z"], ["national_id", "X1234567L"]] },
  { text: "NIR 1 84 12 76 451 089 46", find: [["national_id", "1 84 12 76 451 089 46"]] },
  { text: "server at 10.20.30.40 is down", find: [["ip", "10.20.30.40"]] },
  { text: "key AKIAIOSFODNN7EXAMPLE in config", find: [["secret", "AKIAIOSFODNN7EXAMPLE"]] },
  { text: "token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB ok", find: [["secret", "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"]] },
  { text: "OPENAI sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7cDe0fGh", find: [["secret", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7cDe0fGh"]] },
  { text: "claude: sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA", find: [["secret", "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA"]] },
  { text: "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", find: [["secret", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"]] },
  { text: "google AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI", find: [["secret", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"]] },
  { text: "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", find: [["secret", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"]] },
  { text: "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", find: [["secret", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"]] },
  { text: 'config: {"api_key": "Zx9Qw3Lm8Rt2Vb7NpK4s"}', find: [["secret", "Zx9Qw3Lm8Rt2Vb7NpK4s"]] },
  { text: "DB_PASSWORD=hG7kL2mQ9xV4bN8pZ3 # rotate monthly", find: [["secret", "hG7kL2mQ9xV4bN8pZ3"]] },
  {
    text: "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----",
    find: [["secret", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----"]],
  },
];

/** Look-alikes: none of these may be reported. */
export const NEGATIVES: string[] = [
  "The meeting is at 10:30 on 2024-05-06, order 12345, version 1.2.3.",
  "Invoice 4111 1111 1111 1112 is not a card (Luhn fails).",
  "Tracking number 1234567890123 and amount 5,000,000.00",
  "IBAN-like DE89 3704 0044 0532 0130 01 has a bad check.",
  "SSN-like 000-12-3456 and 666-12-3456 are never issued.",
  "Use the password field; the token expires; secret sauce recipe.",
  "api_key = aaaaaaaaaaaaaaaaaaaaaaaa",
  "sk-short and ghp_tooshort and AKIA123",
  "Semantic version 10.20.30 and ratio 3.14159",
  "Reach us at support at example dot com",
  "Year range 1990-2024, ISBN 978-3-16-148410-0",
  "User id 20240506123456789",
];
