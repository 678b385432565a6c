// Responses client -> Messages upstream: responses -> chat chained with chat -> messages, so each wire mapping is
// written once. Usage is reported by the inner half or the driver.
import { chainTranslators } from "../chain.ts";
import { responsesToChat } from "../responses-to-chat/index.ts";
import { chatToMessages } from "../chat-to-messages/index.ts";

export const responsesToMessages = chainTranslators(responsesToChat, chatToMessages);
