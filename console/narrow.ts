// The phone-sized layout of style.css (@media (max-width: 640px)): one column, so what opens beside the list on a
// wide screen opens under it, out of sight unless the page scrolls to it.
const ONE_COLUMN = "(max-width: 640px)";

export const isOneColumn = () => matchMedia(ONE_COLUMN).matches;

/** Brings `el` into the window when the page is one column (a wide page shows it already, beside the list). */
export function showInOneColumn(el: Element | null | undefined, block: ScrollLogicalPosition = "start"): void {
  if (el && isOneColumn()) el.scrollIntoView({ block });
}
