/**
 * Releasing whoever waits on a FIFO of the workspace: a tool that opens one to read waits until
 * something opens it to write, and the other way round, forever when nothing does.
 *
 * Promises: `releaseFifos` opens every FIFO under the root (found without following links, names as
 * bytes; one open per FIFO however many names it has, since two opens of one pipe would read each
 * other's notice) for reading and writing without blocking, which completes any open waiting on it; it keeps it
 * open `DRAIN_MS`, reading what a released writer wrote, then writes `notice` for a released reader
 * and, `NOTICE_MS` later, looks whether the notice is still there (nobody read it) or was read; then it
 * closes the FIFO, which gives a reader the end of the file. It answers, per FIFO, what was written
 * and whether a reader took the notice.
 * Nothing else is opened: no FIFO outside the root, no link.
 * Does not promise: to release a tool that opened a FIFO both ways itself (it is its own writer, and
 * never sees the end of the file).
 */
import { closeSync, constants, lstatSync, openSync, readSync, readdirSync, writeSync } from "node:fs";
import { childBytes, displayBytes } from "./sandbox.js";

/** How long a released FIFO stays open for a released writer to write. */
export const DRAIN_MS = 100;

/** How long the notice stays in a released FIFO for a released reader to read it: room for a loaded machine. */
export const NOTICE_MS = 300;

const DRAIN_STEP_MS = 20;

export interface Released {
  /** The FIFO, as `displayBytes` shows it, with its other names under the root: `ws/a (also ws/b)`. */
  fifo: string;
  /** What a writer released by the round wrote into it. */
  written: string;
  /** A reader waited on it: the notice written for one was read. */
  read: boolean;
}

export async function releaseFifos(root: string, notice: string): Promise<Released[]> {
  const released = await Promise.all([...namesByFifo(findFifos(Buffer.from(root))).values()].map((names) => release(names, notice)));
  return released.filter((entry): entry is Released => entry !== undefined);
}

/**
 * The names found, by the FIFO they name: every special file of a sandbox is a name of the one it
 * keeps (sandbox.ts), so a tree with a FIFO at its top and one deep inside holds one pipe twice.
 */
function namesByFifo(found: readonly { path: Buffer; inode: string }[]): Map<string, Buffer[]> {
  const byInode = new Map<string, Buffer[]>();
  for (const { path, inode } of found) byInode.set(inode, [...(byInode.get(inode) ?? []), path]);
  return byInode;
}

function findFifos(directory: Buffer): { path: Buffer; inode: string }[] {
  let names: Buffer[];
  try {
    names = readdirSync(directory, { encoding: "buffer" });
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = childBytes(directory, name);
    try {
      const stats = lstatSync(path);
      return stats.isFIFO() ? [{ path, inode: `${stats.dev}:${stats.ino}` }] : stats.isDirectory() ? findFifos(path) : [];
    } catch {
      return [];
    }
  });
}

async function release(names: readonly Buffer[], notice: string): Promise<Released | undefined> {
  const [fifo, ...others] = names as [Buffer, ...Buffer[]];
  const shown = `${displayBytes(fifo)}${others.length === 0 ? "" : ` (also ${others.map(displayBytes).join(", ")})`}`;
  let descriptor: number;
  try {
    descriptor = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(1 << 16);
    let written = "";
    for (let waited = 0; waited < DRAIN_MS; waited += DRAIN_STEP_MS) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_STEP_MS));
      written += drain(descriptor, buffer);
    }
    try {
      writeSync(descriptor, notice);
    } catch {
      // A pipe full of a writer's bytes: the reader, if any, has those to read.
      return { fifo: shown, written, read: false };
    }
    await new Promise((resolve) => setTimeout(resolve, NOTICE_MS));
    const left = drain(descriptor, buffer);
    return { fifo: shown, written, read: !left.includes(notice) };
  } finally {
    closeSync(descriptor);
  }
}

/** Whatever the FIFO holds now, without waiting for more. */
function drain(descriptor: number, buffer: Buffer): string {
  let text = "";
  for (;;) {
    let read: number;
    try {
      read = readSync(descriptor, buffer, 0, buffer.length, null);
    } catch {
      return text;
    }
    if (read === 0) return text;
    text += buffer.subarray(0, read).toString("utf8");
  }
}
