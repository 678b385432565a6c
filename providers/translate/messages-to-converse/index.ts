// Messages client -> Bedrock Converse upstream: messages -> chat chained with chat -> Converse, so each wire mapping
// is written once. Usage is reported by the chat -> Converse half. What it drops or refuses is named as the Messages
// client sent it.
import { chainTranslators } from "../chain.ts";
import { messagesToChatFor } from "../messages-to-chat/index.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

export const messagesToConverse = chainTranslators(messagesToChatFor("converse"), chatToConverse);
