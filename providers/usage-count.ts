// Token counts summed over an answer's batches. A batch whose count is missing or not a whole number (a string
// "3", null) makes the total NaN rather than a wrong sum ("0" + "3" is "03"; skipping it bills too little):
// the endpoint then bills its own estimate of the input, never 0 for a served answer.
export function addCount(total: number, reported: unknown): number {
  return typeof reported === "number" && Number.isInteger(reported) && reported >= 0 ? total + reported : NaN;
}
