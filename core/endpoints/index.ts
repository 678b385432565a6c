// Every public endpoint the gateway serves. Add new endpoints here.
import type { EndpointSpec } from "./spec.ts";
import { chatEndpoint } from "./chat.ts";

export const endpoints: EndpointSpec[] = [chatEndpoint];

export const endpointByKind = new Map(endpoints.map((e) => [e.kind, e]));
