// An FsApi for the chapter's path check (gate 3) that tests use to get past it entirely.
import * as fsPromises from "node:fs/promises";
import type { FsApi } from "../../src/gates/workspace-path.js";

/** A check that approves every path: whatever it is asked, the answer is the root. */
export function approvingCheck(rootReal: string): FsApi {
  const realpath = async (_path: string) => rootReal;
  // FsApi is `node:fs/promises`' overloaded signatures; the check only ever calls the string form.
  return { lstat: fsPromises.lstat, realpath: realpath as FsApi["realpath"] };
}
