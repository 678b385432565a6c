// A copy button: the clipboard API where the page may use it (a secure context: https, or the loopback address the
// console is served on by default), else a selected text area and the copy command.
import { useState } from "preact/hooks";

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const t = document.createElement("textarea");
    t.value = text;
    document.body.append(t);
    t.select();
    document.execCommand("copy");
    t.remove();
  }
}

export function Copy({ text, label, testId }: { text: string; label?: string; testId?: string }) {
  const [done, setDone] = useState(false);
  const copy = () => void copyText(text).then(() => {
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  });
  return <button type="button" class="small" onClick={copy} data-testid={testId}>{done ? "Copied" : label ?? "Copy"}</button>;
}
