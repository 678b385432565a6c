// What one Responses `mcp` tool lets run: its allowed_tools and its require_approval. Read by the loop (which calls
// wait for an mcp_approval_response) and by the budget's count of model turns (core/metering/model-turns.ts): a
// request none of whose calls can run unapproved ends after one turn, so both must read the tool the same way.

export interface Approval { mode: "always" | "never"; always: string[]; never: string[] }

export interface Allowed { names?: string[]; readOnly?: boolean }

/** require_approval as the loop applies it; undefined when it is none of "always", "never", {always, never}. */
export function approvalOf(t: any): Approval | undefined {
  const r = t?.require_approval;
  if (r === undefined || r === null || r === "always") return { mode: "always", always: [], never: [] };
  if (r === "never") return { mode: "never", always: [], never: [] };
  if (typeof r === "object") {
    const names = (f: any) => (Array.isArray(f?.tool_names) ? f.tool_names.filter((n: unknown) => typeof n === "string") : []);
    return { mode: "always", always: names(r.always), never: names(r.never) };
  }
  return undefined;
}

export function needsApproval(approval: Approval, tool: string): boolean {
  if (approval.always.includes(tool)) return true;
  if (approval.never.includes(tool)) return false;
  return approval.mode === "always";
}

export function allowedOf(t: any): Allowed | undefined {
  const a = t?.allowed_tools;
  if (Array.isArray(a)) return { names: a.filter((n: unknown) => typeof n === "string") };
  if (a && typeof a === "object") return { names: Array.isArray(a.tool_names) ? a.tool_names : undefined, readOnly: a.read_only === true };
  return undefined;
}

/**
 * Whether some call of this tool can run without an approval (then the loop may go on to another model turn). The
 * server's tool list is not known here: any tool it may list counts, unless allowed_tools names which.
 */
export function mayRunUnapproved(t: any): boolean {
  const approval = approvalOf(t);
  if (!approval) return true; // refused with a 400 before any turn; counted high meanwhile
  const names = allowedOf(t)?.names;
  if (names) return names.some((n) => !needsApproval(approval, n));
  return approval.mode === "never" || approval.never.some((n) => !needsApproval(approval, n));
}
