// In a `start --workers N` worker: how many of the cluster's workers listen, as the primary last said
// (core/cluster.ts). /readyz shows it, so an operator sees a replica that runs with fewer workers than it was
// started with (one that died and whose replacement cannot start). Undefined in a single process.
export interface WorkerCount {
  listening: number;
  configured: number;
}

let count: WorkerCount | undefined;

export function setWorkerCount(c: WorkerCount): void {
  count = c;
}

export function workerCount(): WorkerCount | undefined {
  return count;
}
