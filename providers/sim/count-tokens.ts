// The simulator's count: the prompt tokens it would report in usage for the same Messages request (which it serves
// translated to chat), so a sandbox client's count_tokens and messages.create agree exactly.
import type { ProviderResult } from "../../core/contracts/provider.ts";
import { messagesToChatRequest } from "../translate/messages-to-chat/request.ts";
import { countResult } from "../count-result.ts";
import { promptTokens } from "./tokens.ts";

export function simCountTokens(body: any, provider: string): Promise<ProviderResult> {
  return simCountChatTokens(messagesToChatRequest(body).body, provider);
}

/** A chat body's prompt tokens as its create reports them (a translated Responses count: what that create sends). */
export async function simCountChatTokens(body: any, provider: string): Promise<ProviderResult> {
  return countResult(provider, promptTokens(body as Parameters<typeof promptTokens>[0]), "simulator");
}
