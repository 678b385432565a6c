// Provider `sim`: an in-process simulator that behaves like a real model. Sandbox keys always reach it.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver } from "../../core/contracts/provider.ts";
import { simChat } from "./chat.ts";
import { simEmbeddings } from "./embeddings.ts";
import { simRerank } from "./rerank.ts";
import { simImages } from "./images.ts";
import { simVideos } from "./videos.ts";
import { simCountChatTokens, simCountTokens } from "./count-tokens.ts";

export function createSimDriver(name: string, config: ProviderConfig): ProviderDriver {
  const opts = config.sim ?? {};
  return {
    name,
    protocol: "sim",
    chat: (body, target, call) => simChat(body, target, call, opts),
    countTokens: (body) => simCountTokens(body, name),
    countChatTokens: (body) => simCountChatTokens(body, name),
    embeddings: (body, target, call) => simEmbeddings(body, target, call, opts),
    rerank: (body, target, call) => simRerank(body, target, call, opts),
    images: (body, target, call) => simImages(body, target, call, opts),
    videos: (body, target, call) => simVideos(body, target, call, opts),
  };
}
