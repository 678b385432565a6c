// Which BPE library counts tokens for OpenAI-protocol models on POST /v1/messages/count_tokens: gpt-tokenizer (the
// dependency) against js-tiktoken, both with o200k_base.
//   cold: a fresh node process importing the encoding and counting once — import time, heap and RSS it adds;
//   hot:  tinybench, counting a ~4 KB chat text, and the gateway's whole chat count (chatPromptTokens) on a
//         conversation of the same size.
//   runs: hostile text (one letter repeated, random letters, unspaced CJK, o200k_base's "\n/" run), where the encoder's work is quadratic in
//         a run's length: gpt-tokenizer's countTokens on the whole text (what the gateway did before issue 25) vs
//         the gateway's count (bpe-pieces.ts: runs cut to 64 bytes), with the merge cache cleared on every call so
//         neither is timed on a cached answer. Prose is there too, to show the pieces cost nothing on ordinary text.
// js-tiktoken is not a dependency; without it its rows are skipped (`npm i --no-save js-tiktoken@1.0.21` to compare).
// Measured when choosing (Node 20, this 2-core machine): gpt-tokenizer ~0.4 s import, +20 MB heap, +58 MB RSS, ~0.2 ms
// per 4 KB; js-tiktoken ~1.3 s, +70 MB heap, +160 MB RSS, ~1.7 ms — equal counts.
import { spawnSync } from "node:child_process";
import { clearMergeCache, countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { assert, assertEqual, runGroup, type BenchTask } from "./lib.ts";
import { chatPromptTokens, tokenizer } from "../providers/openai-compatible/count-tokens.ts";

const PARAGRAPH = "The gateway translates a Messages request into chat completions, counts each message with the model's own " +
  "encoding, and answers { \"input_tokens\": N }. Code: function add(a, b) { return a + b; } // 42 — naïve café 東京 🙂\n";
const TEXT = PARAGRAPH.repeat(Math.ceil(4096 / PARAGRAPH.length)).slice(0, 4096);
const CHAT = {
  messages: [
    { role: "system", content: TEXT.slice(0, 512) },
    ...Array.from({ length: 7 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: TEXT.slice(512 * (i + 1), 512 * (i + 2)) })),
  ],
};

const COLD: Record<string, string> = {
  "gpt-tokenizer": `const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base"); count = (s) => countTokens(s);`,
  "js-tiktoken": `const { Tiktoken } = await import("js-tiktoken/lite"); const ranks = (await import("js-tiktoken/ranks/o200k_base")).default; const enc = new Tiktoken(ranks); count = (s) => enc.encode(s).length;`,
};

/** One fresh process: import + first count, heap and RSS added (after a GC). */
function cold(lib: string): { ms: number; heapMb: number; rssMb: number } | undefined {
  const script = `global.gc(); const m0 = process.memoryUsage(); const t0 = performance.now(); let count; ${COLD[lib]}
    count("Hello world"); const ms = performance.now() - t0; global.gc(); const m1 = process.memoryUsage();
    console.log(JSON.stringify({ ms, heapMb: (m1.heapUsed - m0.heapUsed) / 1e6, rssMb: (m1.rss - m0.rss) / 1e6 }));`;
  const r = spawnSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8" });
  if (r.status !== 0) return undefined;
  return JSON.parse(r.stdout);
}

async function jsTiktoken(): Promise<((s: string) => number) | undefined> {
  try {
    // Not a dependency: resolved at run time only, so the type checker never needs it.
    const lite = "js-tiktoken/lite";
    const ranksPath = "js-tiktoken/ranks/o200k_base";
    const { Tiktoken } = await import(lite);
    const enc = new Tiktoken((await import(ranksPath)).default);
    return (s: string) => enc.encode(s).length;
  } catch {
    return undefined;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

process.stdout.write("== cold start (fresh node process: import o200k_base + one count; median of 3)\n");
for (const lib of Object.keys(COLD)) {
  const runs = [cold(lib), cold(lib), cold(lib)].filter((r): r is NonNullable<typeof r> => r !== undefined);
  if (!runs.length) {
    process.stdout.write(`${lib.padEnd(14)} not installed\n`);
    continue;
  }
  const m = (k: "ms" | "heapMb" | "rssMb") => median(runs.map((r) => r[k]));
  process.stdout.write(`${lib.padEnd(14)} ${m("ms").toFixed(0).padStart(5)} ms  heap +${m("heapMb").toFixed(1)} MB  rss +${m("rssMb").toFixed(1)} MB\n`);
}
process.stdout.write("\n");

const tiktoken = await jsTiktoken();
const gatewayCount = await tokenizer("o200k_base");
const expected = countTokens(TEXT);
const tasks: BenchTask[] = [
  { name: "gpt-tokenizer countTokens", fn: () => countTokens(TEXT), check: () => assertEqual(countTokens(TEXT), expected, "gpt-tokenizer count") },
  ...(tiktoken ? [{ name: "js-tiktoken encode().length", fn: () => tiktoken(TEXT), check: () => assertEqual(tiktoken(TEXT), expected, "js-tiktoken agrees") }] : []),
  {
    name: "gateway chatPromptTokens (8 messages)",
    fn: () => chatPromptTokens(CHAT, gatewayCount, "o200k_base"),
    check: () => assertEqual(chatPromptTokens(CHAT, gatewayCount, "o200k_base") > expected, true, "a conversation costs more than its text"),
  },
];
if (!tiktoken) process.stdout.write("(js-tiktoken not installed: `npm i --no-save js-tiktoken@1.0.21` to compare)\n\n");
await runGroup(`count o200k_base tokens of ${TEXT.length} chars (${expected} tokens)`, tasks);

// ---- runs: the encoder's quadratic case, before and after bpe-pieces --------------------------------------------
let seed = 5;
const random = (alphabet: string, n: number) => Array.from({ length: n }, () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return alphabet[seed % alphabet.length];
}).join("");
const CJK = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(0x4e00 + i)).join("");
const RUNS: Array<[string, string]> = [
  ["16 KiB of one letter", "a".repeat(16 * 1024)],
  ["16 KiB of random letters", random("abcdefghijklmnopqrstuvwxyz", 16 * 1024)],
  ["8 Ki unspaced CJK characters", random(CJK, 8 * 1024)],
  ["16 KiB of newlines and slashes after a '!'", `!${"\n/".repeat(8 * 1024)}`],
  ["4 KiB of prose", TEXT],
];
const plain = { disallowedSpecial: new Set<string>() };
for (const [label, text] of RUNS) {
  const exact = countTokens(text, plain);
  await runGroup(`count ${label} (${exact} tokens), merge cache cleared each call`, [
    { name: "before: countTokens(whole text)", fn: () => { clearMergeCache(); return countTokens(text, plain); } },
    {
      name: "after: gateway tokenizer()",
      fn: () => { clearMergeCache(); return gatewayCount(text); },
      check: () => assert(Math.abs(gatewayCount(text) - exact) <= exact * 0.01, `within 1% of ${exact}: ${gatewayCount(text)}`),
    },
  ], { time: 2000 });
}
