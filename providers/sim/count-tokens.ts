// The simulator's count: the prompt tokens it would report in usage for the same Messages request (which it serves
// translated to chat), so a sandbox client's count_tokens and messages.create agree exactly.
import type { ProviderResult } from "../../core/contracts/provider.ts";
import { messagesToChatRequest } from "../translate/messages-to-chat/request.ts";
import { countResult } from "../count-result.ts";
import { promptTokens } from "./tokens.ts";

export async function simCountTokens(body: any, provider: string): Promise<ProviderResult> {
  return countResult(provider, promptTokens(messagesToChatRequest(body).body as Parameters<typeof promptTokens>[0]), "simulator");
}
