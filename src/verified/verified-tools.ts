/**
 * `createVerifiedWorkspaceTools(root)`: the chapter's three tools with every file reached by descriptor
 * on Linux (open-beneath.ts), closing the check-then-open window the chapter leaves open (SECURITY.md).
 */
import { relative, resolve } from "node:path";
import { fileChunks, readTruncated } from "../gates/read-truncated.js";
import type { Tool } from "../gates/tool.js";
import { type FsApi, checkedPath, throughHandedRoot } from "../gates/workspace-path.js";
import { bashLimits, bashTool } from "../tools/bash.js";
import { readToolWith } from "../tools/read.js";
import { type WorkspaceToolsOptions, createWorkspaceTools } from "../tools/workspace-tools.js";
import { writeToolWith } from "../tools/write.js";
import { type PinnedRoot, descriptorLink, openBeneath, pinRoot, replaceBeneath } from "./open-beneath.js";
import { procfsProblem } from "./procfs.js";

export interface VerifiedWorkspaceToolsOptions extends WorkspaceToolsOptions {
  /** Accept files with more than one hard link; off by default, since another link may be outside. */
  allowHardlinks?: boolean;
  /** Without procfs, fall back to the chapter's tools, each result marked unverified, instead of throwing. */
  bestEffort?: boolean;
}

/**
 * Promises: the same contract as `createWorkspaceTools` (`[read, write, bash]`, same specs, input
 * errors, truncation, the read time bound (`readTimeoutMs`) and the caller's signal, bash limits and
 * the answers of the bad-input table; `execute` never rejects),
 * except for the differences SECURITY.md lists ("The verified tools beside the chapter's"), each
 * pinned by a test. At construction it checks that `/proc/self/fd` is procfs and pins the root by
 * descriptor, synchronously. Every path then passes the chapter's check against the pinned root's
 * current real path (a path the chapter refuses is refused with its message before anything is
 * opened), and is opened again by `openBeneath` from the root descriptor, which trusts no earlier
 * answer; read takes its bytes from that descriptor, write replaces the file by a temporary file
 * renamed over it in the same directory (writes cannot tear; a file's other hard links keep the old
 * content). bash
 * starts in the pinned directory itself (its cwd is the root descriptor's magic link), wherever the
 * path `root` points by then. A file with more than one hard link is refused unless `allowHardlinks`
 * is set. `fsApi` reaches the chapter's check only (fault injection, the TOCTOU demo's swap), so a
 * lying `fsApi` cannot open the boundary. Without procfs it throws, unless `bestEffort` is set: then
 * it returns the chapter's tools and every result, errors included, ends with an `[unverified: …]`
 * line naming the problem.
 * Does not promise: any confinement of bash, which can do anything this process can; what
 * `openBeneath` leaves open (bind mounts, a process that can rename directories from inside the
 * workspace to outside); durability (nothing is fsync'd); any of these guarantees under `bestEffort`.
 */
export function createVerifiedWorkspaceTools(root: string, options: VerifiedWorkspaceToolsOptions = {}): Tool[] {
  const limits = bashLimits(options.bash);
  const problem = procfsProblem();
  if (problem !== undefined) {
    if (options.bestEffort !== true)
      throw new Error(
        `verified workspace tools need Linux procfs: ${problem}. Pass { bestEffort: true } to use the chapter's checks instead, with every result marked unverified.`,
      );
    return createWorkspaceTools(root, options).map((tool) => announceUnverified(tool, problem));
  }
  const pinned = pinRoot(root);
  const handed = resolve(root);
  const settings = { allowHardlinks: options.allowHardlinks === true, fsApi: options.fsApi };
  return [
    readToolWith(async (path, stop) => {
      const { rootReal, relativePath } = await checkedFirst(pinned, handed, path, false, settings.fsApi);
      const { handle, stats } = await openBeneath(pinned, rootReal, relativePath, settings);
      try {
        return await readTruncated(fileChunks(handle, stats.size), stop);
      } finally {
        await handle.close();
      }
    }, options.readTimeoutMs),
    writeToolWith(async (path, content, signal) => {
      const { rootReal, relativePath } = await checkedFirst(pinned, handed, path, true, settings.fsApi);
      // A last step "", "." or ".." asks for a directory; the check's path.resolve has dropped it.
      const namesDirectory = ["", ".", ".."].includes(path.slice(path.lastIndexOf("/") + 1));
      await replaceBeneath(pinned, rootReal, relativePath, content, { ...settings, namesDirectory, signal });
    }),
    // The kernel resolves the magic link to the pinned directory itself when the child changes into it.
    bashTool(async () => descriptorLink(pinned.fd), limits),
  ];
}

/** Gate 3, first half: the chapter's check against where the pinned root is now; the walk that follows does not trust it. */
async function checkedFirst(
  root: PinnedRoot,
  handed: string,
  candidate: string,
  creating: boolean,
  fsApi: FsApi | undefined,
): Promise<{ rootReal: string; relativePath: string }> {
  const rootReal = root.currentPath();
  const { path } = await checkedPath(rootReal, throughHandedRoot(handed, rootReal, candidate), creating, fsApi);
  return { rootReal, relativePath: relative(rootReal, path) };
}

export function unverifiedNotice(problem: string): string {
  return `[unverified: ${problem}; this result comes from the chapter's path checks alone, which a concurrent symlink swap or a hardlink can get past]`;
}

function announceUnverified(tool: Tool, problem: string): Tool {
  const notice = unverifiedNotice(problem);
  return {
    spec: tool.spec,
    async execute(input, signal) {
      const result = await tool.execute(input, signal);
      return { ...result, content: `${result.content}\n${notice}` };
    },
  };
}
