// A TCP proxy to a local port (Redis) that can be cut: a network partition between one replica and the server. Cut,
// it drops every open connection and refuses new ones until healed.
import { createServer, connect, type Server, type Socket } from "node:net";

export function partitionable(port: number) {
  const socks = new Set<Socket>();
  let cut = false;
  const srv: Server = createServer((c) => {
    if (cut) return void c.destroy();
    const u = connect(port, "127.0.0.1");
    const end = () => { c.destroy(); u.destroy(); socks.delete(c); socks.delete(u); };
    socks.add(c).add(u);
    c.pipe(u).pipe(c);
    for (const s of [c, u]) s.on("error", end).on("close", end);
  });
  return {
    listen: () => new Promise<string>((r) => srv.listen(0, "127.0.0.1", () => r(`redis://127.0.0.1:${(srv.address() as { port: number }).port}`))),
    cut: () => { cut = true; for (const s of socks) s.destroy(); },
    heal: () => { cut = false; },
    close: () => { for (const s of socks) s.destroy(); srv.close(); },
  };
}
