// Provider `sim`: an in-process simulator that behaves like a real model. Sandbox keys always reach it.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver } from "../types.ts";
import { simChat } from "./chat.ts";

export function createSimDriver(name: string, config: ProviderConfig): ProviderDriver {
  const opts = config.sim ?? {};
  return {
    name,
    protocol: "sim",
    chat: (body, target, call) => simChat(body, target, call, opts),
  };
}
