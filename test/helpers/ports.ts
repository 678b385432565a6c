// A free TCP port on loopback, for servers a test starts in another process.
import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Whether a process's output says it could not listen because its port was taken: the port freePort gives is free
 * when it answers, but a test file running beside this one can take it before the process listens, and the start is
 * worth another try on another port. The gateway says so in words (`refusing to start: port N on H is in use`, or
 * `metrics port N ...`), other servers with the error code.
 */
export const portTaken = (output: string): boolean => /EADDRINUSE|\bport \d+ on \S+ is in use\b/.test(output);
