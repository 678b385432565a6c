// Responses client -> Bedrock Converse upstream: responses -> chat chained with chat -> Converse, so each wire
// mapping is written once. Usage is reported by the inner half. What the inner half drops or refuses is named as the
// Responses client sent it. The chat half is the chat upstream's own (its reasoning blobs and efforts), except that a
// file_url goes on as a URL part, which the Converse half downloads (url-media.ts).
import { chainTranslators } from "../chain.ts";
import { responsesToChatFor } from "../responses-to-chat/index.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

export const responsesToConverse = chainTranslators(responsesToChatFor("chat", true), chatToConverse);
