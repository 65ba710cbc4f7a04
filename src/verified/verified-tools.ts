/**
 * `createVerifiedWorkspaceTools(root)`: the chapter's three tools with every file reached by descriptor
 * on Linux (open-beneath.ts), closing the check-then-open window the chapter leaves open (SECURITY.md).
 */
import type { FileHandle } from "node:fs/promises";
import { relative } from "node:path";
import { fileChunks, readTruncated } from "../gates/read-truncated.js";
import type { Tool } from "../gates/tool.js";
import { type FsApi, workspacePath } from "../gates/workspace-path.js";
import { bashLimits, bashTool } from "../tools/bash.js";
import { readToolWith } from "../tools/read.js";
import { type WorkspaceToolsOptions, createWorkspaceTools } from "../tools/workspace-tools.js";
import { writeToolWith } from "../tools/write.js";
import { type HardlinkPolicy, type OpenIntent, type PinnedRoot, descriptorLink, openBeneath, pinRoot } from "./open-beneath.js";
import { procfsProblem } from "./procfs.js";

export interface VerifiedWorkspaceToolsOptions extends WorkspaceToolsOptions {
  /** Accept files with more than one hard link; off by default, since another link may be outside. */
  allowHardlinks?: boolean;
  /** Without procfs, fall back to the chapter's tools, each result marked unverified, instead of throwing. */
  bestEffort?: boolean;
}

/**
 * Promises: the same contract as `createWorkspaceTools` (`[read, write, bash]`, same specs, input
 * errors, truncation, bash limits and the answers of the bad-input table; `execute` never rejects),
 * except for the differences SECURITY.md lists ("The verified tools beside the chapter's"), each
 * pinned by a test. At construction it checks that `/proc/self/fd` is procfs and pins the root by
 * descriptor, synchronously. Every path then passes the chapter's check against the pinned root's
 * current real path (a path the chapter refuses is refused with its message before anything is
 * opened), and is opened again by `openBeneath` from the root descriptor, which trusts no earlier
 * answer; read takes its bytes from that descriptor, write truncates and writes through it. bash
 * starts in the pinned directory itself (its cwd is the root descriptor's magic link), wherever the
 * path `root` points by then. A file with more than one hard link is refused unless `allowHardlinks`
 * is set. `fsApi` reaches the chapter's check only (fault injection, the TOCTOU demo's swap), so a
 * lying `fsApi` cannot open the boundary. Without procfs it throws, unless `bestEffort` is set: then
 * it returns the chapter's tools and every result, errors included, ends with an `[unverified: …]`
 * line naming the problem.
 * Does not promise: any confinement of bash, which can do anything this process can; what
 * `openBeneath` leaves open (bind mounts, a process that can rename directories from inside the
 * workspace to outside); atomic writes (a failure while the bytes go out leaves a partial file); any
 * of these guarantees under `bestEffort`.
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
  const settings = { allowHardlinks: options.allowHardlinks === true, fsApi: options.fsApi };
  return [
    readToolWith(async (path) => {
      const handle = await openChecked(pinned, path, "read", settings);
      try {
        return await readTruncated(fileChunks(handle, (await handle.stat()).size));
      } finally {
        await handle.close();
      }
    }),
    writeToolWith(async (path, content) => {
      const handle = await openChecked(pinned, path, "write", settings);
      try {
        await handle.truncate(0);
        await handle.writeFile(content);
      } finally {
        await handle.close();
      }
    }),
    // The kernel resolves the magic link to the pinned directory itself when the child changes into it.
    bashTool(async () => descriptorLink(pinned.fd), limits),
  ];
}

interface VerifiedSettings extends HardlinkPolicy {
  fsApi?: FsApi | undefined;
}

/** Gate 3 twice: the chapter's check, then the descriptor walk that does not trust it. */
async function openChecked(root: PinnedRoot, candidate: string, intent: OpenIntent, settings: VerifiedSettings): Promise<FileHandle> {
  const rootReal = await root.currentPath();
  const target = await workspacePath(rootReal, candidate, intent === "write", settings.fsApi);
  return openBeneath(root, rootReal, relative(rootReal, target), intent, settings);
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
