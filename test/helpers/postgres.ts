// A real PostgreSQL server for tests: a throwaway cluster (initdb) in a temp dir on a free loopback port, started
// with pg_ctl (as the `postgres` user when we are root: the server refuses to run as root). Each test file starts
// its own (initdb takes about a second) and makes a database per suite (createDatabase). stop() removes it all;
// kill() / restart() make an outage (an immediate shutdown, then the same cluster on the same port).
import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./ports.ts";

const run = promisify(execFile);

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** A new empty database; its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Immediate shutdown (like a crash): connections drop, new ones are refused. */
  kill(): Promise<void>;
  /** Start the same cluster again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Where initdb and pg_ctl are: PG_BIN, else the newest Debian cluster version, else the PATH. */
function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(join(root, v, "bin", "initdb"))) return join(root, v, "bin");
  }
  return "";
}

const asRoot = process.getuid?.() === 0;

/** Run a PostgreSQL binary, as the postgres user when we are root. */
async function pgRun(bin: string, args: string[]): Promise<string> {
  const path = binDir() ? join(binDir(), bin) : bin;
  const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", path, ...args]] : [path, args];
  try {
    const { stdout } = await run(cmd, argv, { timeout: 60_000 });
    return stdout;
  } catch (err) {
    const e = err as { code?: string; stderr?: string; message: string };
    if (e.code === "ENOENT") throw new Error(`cannot run ${path} (install postgresql: apt-get install -y postgresql)`);
    throw new Error(`${bin} ${args.join(" ")} failed: ${e.stderr || e.message}`);
  }
}

export interface PostgresOptions {
  /** fsync and synchronous_commit (default off: the tests are about the gateway, not PostgreSQL's disk). */
  durable?: boolean;
}

export async function startPostgres(o: PostgresOptions = {}): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "mg-pg-"));
  if (asRoot) chownSync(dir, postgresUid(), postgresGid());
  const data = join(dir, "data");
  await pgRun("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]);
  let port = 0;
  const start = async () => {
    const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${o.durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"}`;
    await pgRun("pg_ctl", ["-D", data, "-o", settings, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  };
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await start();
      break;
    } catch (err) {
      if (attempt >= 2) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let n = 0;
  const stop = () => pgRun("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).then(() => {}, () => {});
  return {
    url,
    port,
    async createDatabase(name = `t${process.pid}_${++n}`) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    kill: stop,
    restart: start,
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let ids: { uid: number; gid: number } | undefined;
function postgresIds(): { uid: number; gid: number } {
  if (ids) return ids;
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith("postgres:"));
  if (!line) throw new Error("no postgres user (install postgresql: apt-get install -y postgresql)");
  const f = line.split(":");
  return (ids = { uid: Number(f[2]), gid: Number(f[3]) });
}
const postgresUid = () => postgresIds().uid;
const postgresGid = () => postgresIds().gid;
