// FsApi replacements for the chapter's path check (gate 3), for tests that must get past it or race it.
import * as fsPromises from "node:fs/promises";
import type { FsApi } from "../../src/workspace-path.js";

type Realpath = (path: string) => Promise<string>;

// FsApi is `node:fs/promises`' overloaded signatures; the check only ever calls the string form.
function withRealpath(realpath: Realpath): FsApi {
  return { lstat: fsPromises.lstat, realpath: realpath as FsApi["realpath"] };
}

/** A check that approves every path: whatever it is asked, the answer is the root. */
export function approvingCheck(rootReal: string): FsApi {
  return withRealpath(async () => rootReal);
}

/**
 * The real check, with `swap` run once right after the check's second and last `realpath` (the
 * checked path; the first resolves the root): the moment between check and open that the chapter
 * admits it cannot defend. `swapped()` tells a test that the swap really happened.
 */
export function swapAfterCheck(swap: () => Promise<void>): FsApi & { readonly swapped: () => boolean } {
  let calls = 0;
  const api = withRealpath(async (path) => {
    const real = await fsPromises.realpath(path);
    calls += 1;
    if (calls === 2) await swap();
    return real;
  });
  return Object.assign(api, { swapped: () => calls >= 2 });
}
