// `model-gateway plugin new NAME`: a plugin package that builds, type-checks and tests against this gateway from its
// first `npm install && npm test`. Files come from templates/plugin/ (__PLUGIN__ is the plugin's name, __PACKAGE__
// the package's); package.json is written here, as its dependencies depend on where this gateway is installed.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { packageRoot } from "../package-root.ts";

/** An npm package name (optionally scoped) whose last part is also a plugin name (definePlugin's rule). */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?([a-z0-9][a-z0-9_-]*)$/;

/** Template files and where each is written (npm drops files named .gitignore from a package, hence `gitignore`). */
const FILES: Record<string, string> = {
  "src/index.ts": "src/index.ts",
  "test/index.test.ts": "test/index.test.ts",
  "tsconfig.json": "tsconfig.json",
  "README.md": "README.md",
  gitignore: ".gitignore",
};

export interface ScaffoldOptions {
  /** Package name, e.g. `redact-email` or `@acme/redact-email`; the plugin's name is its last part. */
  name: string;
  /** Where to write it (created; must be empty). Default: ./<plugin name>. */
  dir?: string;
  /** The devDependency spec of model-gateway. Default: see gatewaySpec(). */
  gateway?: string;
  /** This gateway's package folder (default: the running one). */
  gatewayRoot?: string;
  /** Names the plugin may not take: the built-in plugins' (a plugin with one of them can never be loaded). */
  reserved?: readonly string[];
}

export interface Scaffolded {
  dir: string;
  plugin: string;
  gatewaySpec: string;
}

/** Write the package; throws with a message for the user when the name or folder is unusable. */
export function scaffoldPlugin(opts: ScaffoldOptions): Scaffolded {
  const m = PACKAGE_NAME.exec(opts.name);
  if (!m || opts.name.length > 214) {
    throw new Error(`"${opts.name}" is not a usable name: lower-case letters, digits, - and _ (an npm package name, optionally @scope/, whose last part names the plugin)`);
  }
  const plugin = m[1]!;
  if (opts.reserved?.includes(plugin)) {
    throw new Error(`"${plugin}" is the name of a built-in plugin, and a gateway refuses to load another by that name; choose another (e.g. ${plugin}-plus)`);
  }
  const dir = resolve(opts.dir ?? plugin);
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} exists and is not empty`);
  const root = opts.gatewayRoot ?? packageRoot();
  const gateway = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; devDependencies?: Record<string, string> };
  const spec = opts.gateway ?? gatewaySpec(root, dir, gateway.version);

  const fill = (text: string) => text.replaceAll("__PLUGIN__", plugin).replaceAll("__PACKAGE_FILE__", opts.name.replace(/^@/, "").replace("/", "-")).replaceAll("__PACKAGE__", opts.name);
  mkdirSync(dir, { recursive: true });
  for (const [from, to] of Object.entries(FILES)) {
    const target = join(dir, to);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, fill(readFileSync(join(root, "templates", "plugin", from), "utf8")));
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify(packageJson(opts.name, plugin, spec, gateway), null, 2) + "\n");
  return { dir, plugin, gatewaySpec: spec };
}

/**
 * How the new package depends on this gateway for its tests. A gateway in a folder of its own (a checkout, an
 * unpacked release) is linked from there (`file:`), so `npm install` works offline and at once; one installed
 * in some project's node_modules is not a folder to link to, so the version range is written, and the author installs
 * the gateway's tarball or folder over it (`npm install -D ...`), or a workspace root provides it.
 */
export function gatewaySpec(root: string, dir: string, version: string): string {
  if (root.split(sep).includes("node_modules")) return `^${version}`;
  const rel = relative(dir, root).split(sep).join("/");
  return `file:${rel.startsWith(".") ? rel : `./${rel}`}`;
}

function packageJson(name: string, plugin: string, spec: string, gateway: { version: string; devDependencies?: Record<string, string> }) {
  // The compiler and Node types the gateway itself is built and its declarations checked with.
  const dev = gateway.devDependencies ?? {};
  return {
    name,
    version: "0.1.0",
    description: `model-gateway plugin ${plugin}`,
    type: "module",
    // Only an `import` condition (and the types): the gateway imports plugins as ES modules.
    exports: { ".": { types: "./dist/src/index.d.ts", import: "./dist/src/index.js" } },
    files: ["dist/src"],
    scripts: {
      build: "tsc -p .",
      test: "tsc -p . && node --test dist/test/*.test.js",
      prepare: "npm run build",
    },
    keywords: ["model-gateway-plugin"],
    // The gateway that loads the plugin provides model-gateway/plugin: a peer, never a dependency of its own.
    peerDependencies: { "model-gateway": `^${gateway.version}` },
    devDependencies: {
      "@types/node": dev["@types/node"] ?? "^20.19.0",
      "model-gateway": spec,
      typescript: dev.typescript ?? "^5.9.0",
    },
    engines: { node: ">=20.19" },
  };
}

/** The `plugin` command: `plugin new NAME [--dir D] [--gateway SPEC]`. */
export async function pluginCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  // A wrong word is a usage error, as everywhere in the CLI: exit 2.
  if (sub !== "new") {
    process.stderr.write(`${sub === undefined ? "" : `plugin: unknown subcommand ${JSON.stringify(sub)}\n`}usage: model-gateway plugin new NAME [--dir DIR] [--gateway SPEC]\n`);
    return 2;
  }
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { dir: { type: "string" }, gateway: { type: "string" } } });
  if (positionals.length !== 1) {
    process.stderr.write("plugin new: give one NAME (the package's name, e.g. redact-email)\n");
    return 2;
  }
  let made: Scaffolded;
  try {
    // Loaded only here: the composition root carries every plugin and provider.
    const { builtins } = await import("../builtins.ts");
    made = scaffoldPlugin({ name: positionals[0]!, dir: values.dir, gateway: values.gateway, reserved: Object.keys(builtins.plugins) });
  } catch (err) {
    process.stderr.write(`plugin new: ${(err as Error).message}\n`);
    return 1;
  }
  const where = relative(process.cwd(), made.dir) || ".";
  const install = made.gatewaySpec.startsWith("file:")
    ? "  npm install\n"
    : "  npm install -D /path/to/model-gateway-VERSION.tgz   # or its folder: the gateway to test against\n" +
      "  # (in an npm workspace whose root depends on model-gateway, `npm install` at the root does it)\n";
  process.stdout.write(
    `created plugin ${made.plugin} in ${where} (model-gateway: ${made.gatewaySpec} for its tests, a peer dependency for deployments)\n\n` +
      `  cd ${where}\n${install}  npm test\n`,
  );
  return 0;
}
