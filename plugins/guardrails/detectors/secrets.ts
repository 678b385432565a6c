// Secret detectors: the key and token formats of the common providers (their prefixes and lengths as the providers
// publish them and as gitleaks' rule set describes them), private key blocks, JWTs, and generic `api_key = "..."`
// assignments whose value is random enough (gitleaks' entropy idea). One alternation per family keeps the number of
// passes over a text small.
import { entropy } from "./checksums.ts";
import type { Detector } from "./types.ts";

const B = "(?<![A-Za-z0-9_-])"; // a token starts at a boundary
const E = "(?![A-Za-z0-9_-])"; // and ends at one

/** Provider tokens with a recognisable prefix: precise enough to need no further check. */
const PREFIXED = [
  "sk-ant-(?:api|admin)\\d\\d-[A-Za-z0-9_-]{32,}", // Anthropic
  "sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}", // OpenAI project, service-account and admin keys
  "sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", // OpenAI legacy user keys
  "(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}", // AWS access key ids
  "gh[pousr]_[A-Za-z0-9]{36,255}", // GitHub tokens
  "github_pat_[A-Za-z0-9_]{82}", // GitHub fine-grained tokens
  "glpat-[A-Za-z0-9_-]{20,}", // GitLab personal access tokens
  "xox[abposr]-(?:\\d+-)+[A-Za-z0-9-]{10,}", // Slack tokens
  "(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,99}", // Stripe secret and restricted keys
  "AIza[A-Za-z0-9_-]{35}", // Google API keys
  "ya29\\.[A-Za-z0-9_-]{30,}", // Google OAuth access tokens
  "npm_[A-Za-z0-9]{36}", // npm tokens
  "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}", // SendGrid
  "hf_[A-Za-z]{34}", // Hugging Face
  "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", // PyPI upload tokens
  "dop_v1_[a-f0-9]{64}", // DigitalOcean
  "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", // Shopify
  "gsk_[A-Za-z0-9]{52}", // Groq
  "xai-[A-Za-z0-9]{80}", // xAI
  "mg_(?:live|test)_[A-Za-z0-9_]{16,}", // this gateway's own keys
];

export const providerTokens: Detector = {
  kind: "secret",
  label: "SECRET",
  re: new RegExp(`${B}(?:${PREFIXED.join("|")})${E}`, "g"),
};

export const slackWebhook: Detector = {
  kind: "secret",
  label: "SECRET",
  hint: "hooks.slack.com",
  re: /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9+/]{43,56}/g,
};

/** The body stops at the next BEGIN: a text of many BEGINs without an END is scanned once, not once per BEGIN. */
export const privateKey: Detector = {
  kind: "secret",
  label: "SECRET",
  hint: "-----BEGIN",
  re: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----BEGIN)[\s\S]){16,16384}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g,
};

export const jwt: Detector = {
  kind: "secret",
  label: "SECRET",
  hint: "eyJ",
  re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}(?![A-Za-z0-9_-])/g,
};

/**
 * `password: "..."`, `API_KEY=...`, `"client_secret": "..."`: the value after a secret-sounding name, when it looks
 * random (at least 16 characters, entropy of 3.5 bits per character or more). Only the value is matched.
 */
export const assignedSecret: Detector = {
  kind: "secret",
  label: "SECRET",
  re: /(?<=(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|auth|credentials?|access[_-]?key)["']?\s{0,4}(?::|=|:=|=>)\s{0,4}["'`]?)[A-Za-z0-9_\-+/=.~]{16,200}/gi,
  valid: (m) => entropy(m) >= 3.5,
};

export const secretDetectors: Detector[] = [providerTokens, slackWebhook, privateKey, jwt, assignedSecret];
