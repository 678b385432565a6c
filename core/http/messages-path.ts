// The Messages API's paths (/v1/messages and everything under it: count_tokens, and batches, which the gateway does
// not serve): errors there are rendered in Anthropic's envelope, so the Anthropic SDK raises its own classes even for
// a path or method no route takes.
const MESSAGES = "/api/v1/messages";

export const isMessagesPath = (path: string): boolean => path === MESSAGES || path.startsWith(MESSAGES + "/");
