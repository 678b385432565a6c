// Preloaded into a gateway process (`node --import <this file>`) by tests that check which packages it has loaded:
// appends to $MG_PACKAGE_LOG one line per module resolved inside node_modules (ESM imports, through a resolve hook
// on the loader thread) and one per package name required from CommonJS (`require("ioredis")`, createRequire's too).
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";

const log = process.env.MG_PACKAGE_LOG;
if (!log) throw new Error("package-loads.mjs needs MG_PACKAGE_LOG");

const hooks = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.includes("/node_modules/")) appendFileSync(${JSON.stringify(log)}, r.url + "\\n");
  return r;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

const load = Module._load;
Module._load = function (request, ...rest) {
  if (!/^[./]/.test(request) && !Module.isBuiltin(request)) appendFileSync(log, `/node_modules/${request}/\n`);
  return load.call(this, request, ...rest);
};
