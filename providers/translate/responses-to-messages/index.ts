// Responses client -> Messages upstream: responses -> chat chained with chat -> messages, so each wire mapping is
// written once. Usage is reported by the inner half or the driver. The outer half knows its chat body goes on to
// Anthropic: reasoning items made by a messages upstream replay as signed thinking blocks.
import { chainTranslators } from "../chain.ts";
import { responsesToChatFor } from "../responses-to-chat/index.ts";
import { chatToMessages } from "../chat-to-messages/index.ts";

export const responsesToMessages = chainTranslators(responsesToChatFor("messages"), chatToMessages);
