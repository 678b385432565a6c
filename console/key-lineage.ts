// A rotation links two keys (the admin API's replaced_by on the old one, rotated_from on the new one). The old key
// keeps working for the overlap and stays "active", so without these the Keys view shows it as any other key and
// offers a Rotate that the API refuses (409: rotate its successor instead).
import type { KeyView } from "./types.ts";

type Linked = Pick<KeyView, "replaced_by" | "rotated_from">;

/** Beside the status: "rotated to ui-1-r2" on the old key, "rotated from ui-1" on the new one. */
export function lineageOf(k: Linked): string {
  return [k.replaced_by ? `rotated to ${k.replaced_by}` : "", k.rotated_from ? `rotated from ${k.rotated_from}` : ""].filter(Boolean).join(", ");
}

/** Why Rotate is off for a key already rotated (the API's 409 said before the click), else undefined. */
export function rotatedAlready(k: Linked): string | undefined {
  return k.replaced_by ? `Already rotated to ${k.replaced_by}: rotate ${k.replaced_by} instead` : undefined;
}
