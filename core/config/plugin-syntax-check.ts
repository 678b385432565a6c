// Node's own parse of one JavaScript file (`node --check`, its source on stdin: no loader, nothing run), for the
// reason and place of a syntax error the loader reported without them (./plugin-syntax.ts). Asynchronous: a reload
// that adds a broken plugin runs it inside a serving gateway, whose requests must not wait on the child.
import { spawn } from "node:child_process";

/** How long one parse may take; past it the file counts as parsing (the import's own error is reported). */
export const CHECK_TIMEOUT_MS = 10_000;

/** `file:line:column: SyntaxError: reason` for `source` parsed as `type`; undefined when it parses (or the check fails). */
export function nodeCheck(source: string, type: "module" | "commonjs", file: string, timeoutMs = CHECK_TIMEOUT_MS): Promise<string | undefined> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // a loader given there (tsx's) would parse it instead
  return new Promise((resolve) => {
    let stderr = "";
    let child;
    try {
      child = spawn(process.execPath, [`--input-type=${type}`, "--check"], { env, stdio: ["pipe", "ignore", "pipe"], timeout: timeoutMs });
    } catch {
      return resolve(undefined);
    }
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => { stderr += chunk; });
    child.stdin!.on("error", () => {}); // a child that exits before reading all of it
    child.stdin!.end(source);
    child.on("error", () => resolve(undefined));
    child.on("close", (code) => resolve(code === 0 ? undefined : placed(stderr, file)));
  });
}

/** Node's report (`[stdin]:LINE`, the source line, spaces and a caret under the column, ..., `SyntaxError: reason`) placed in `file`. */
function placed(stderr: string, file: string): string | undefined {
  const at = /^\[stdin\]:(\d+)\r?\n.*\r?\n( *)\^/m.exec(stderr);
  const reason = /^SyntaxError: .*$/m.exec(stderr)?.[0];
  if (!reason) return undefined;
  return at ? `${file}:${at[1]}:${at[2]!.length + 1}: ${reason}` : `${file}: ${reason}`;
}
