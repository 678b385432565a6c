// Responses client -> Bedrock Converse upstream: responses -> chat chained with chat -> Converse, so each wire
// mapping is written once. Usage is reported by the inner half. What the inner half drops or refuses is named as the
// Responses client sent it.
import { chainTranslators } from "../chain.ts";
import { responsesToChat } from "../responses-to-chat/index.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

export const responsesToConverse = chainTranslators(responsesToChat, chatToConverse);
