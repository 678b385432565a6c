// mobile-mcp's kind of tool, a zod discriminated union, which serialises to a root oneOf; and a call a model makes with it.
export const tap = { type: "object", properties: { action: { const: "tap" }, x: { type: "number" }, y: { type: "number" } }, required: ["action", "x", "y"], additionalProperties: false };
export const swipe = { type: "object", properties: { action: { const: "swipe" }, direction: { type: "string", enum: ["up", "down"] }, distance: { type: "number" } }, required: ["action", "direction"], additionalProperties: false };
export const UNION = { $schema: "http://json-schema.org/draft-07/schema#", oneOf: [tap, swipe] };
export const TOOL = "mobile_action";
/** What the model calls the tool with: one of the union's shapes, optional property included. */
export const SWIPE = { action: "swipe", direction: "up", distance: 200 };
