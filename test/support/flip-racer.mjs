// A racer for worker_threads: flips `link` between a real directory (holding `name` with `content`)
// and a symlink to `target`, with renames only (each atomic), until the shared stop flag is set.
// Plain JS so the worker starts without a TypeScript loader. The tools under test create entries in
// the gaps (a write makes a missing directory), so a step may fail; the racer then clears `link`
// and re-creates what it parks, and goes on. It only ever touches `link` and its two parked twins.
import { lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";

const { link, target, name, content, stop } = workerData;
const flag = new Int32Array(stop);
const parkedDirectory = `${link}-directory`;
const parkedSymlink = `${link}-symlink`;
let flips = 0;
let repairs = 0;
let failedSteps = 0;

function missing(path) {
  try {
    lstatSync(path);
    return false;
  } catch {
    return true;
  }
}

// Each step may lose a race with the tools (rm meets a file written meanwhile); the next repair
// tries again, so nothing is thrown and the loop always reaches the stop flag.
function attempt(action) {
  try {
    action();
  } catch {
    failedSteps += 1;
  }
}

function repair() {
  repairs += 1;
  // rm does not follow a symlink: it removes the link, never the outside directory it points to.
  attempt(() => rmSync(link, { recursive: true, force: true }));
  if (missing(parkedDirectory))
    attempt(() => {
      mkdirSync(parkedDirectory);
      writeFileSync(join(parkedDirectory, name), content);
    });
  if (missing(parkedSymlink)) attempt(() => symlinkSync(target, parkedSymlink));
}

function move(from, to) {
  try {
    renameSync(from, to);
  } catch {
    repair();
  }
}

repair();
parentPort.postMessage({ ready: true });
while (Atomics.load(flag, 0) === 0) {
  move(parkedDirectory, link);
  move(link, parkedDirectory);
  move(parkedSymlink, link);
  move(link, parkedSymlink);
  flips += 1;
}
parentPort.postMessage({ flips, repairs, failedSteps });
