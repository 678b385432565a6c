#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx (no build step).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../core/cli.ts");
await main(process.argv.slice(2));
