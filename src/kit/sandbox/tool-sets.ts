/**
 * The one registry of tool sets, by name: the chapter's tools, and the descriptor-verified tools that
 * are meant to close the window the chapter leaves open. The TOCTOU demo attacks them by name
 * (`--tools NAME`), and every shared table (bad input, Go's os.Root corpus, the known limits, the
 * descriptor leaks) runs over each of them, so a new set added here is held to all of them at once.
 *
 * Promises: each `create` builds a fresh, unmodified tool set bound to the given workspace root, with
 * the production defaults for everything the options do not set (real `node:fs/promises`; for
 * `verified`, hardlinks refused and no best-effort fallback, so it throws where /proc cannot verify
 * descriptors); `needsProcfs` says which sets a platform without Linux procfs cannot build;
 * `attackedTools` picks out `read` and `write` by their spec names and throws, naming what is
 * missing, when a set lacks one (the race takes every tool by operation: operations/surface.ts).
 * Does not promise: that a set defends against anything. The demo and the tables find that out.
 */
import type { Tool } from "../../gates/tool.js";
import { createVerifiedWorkspaceTools } from "../../verified/verified-tools.js";
import { type WorkspaceToolsOptions, createWorkspaceTools } from "../../tools/workspace-tools.js";

export interface ToolSet {
  name: string;
  /** The options every set shares (bash limits, the path check's fs); the rest stay at their defaults. */
  create: (root: string, options?: WorkspaceToolsOptions) => Tool[];
  needsProcfs: boolean;
}

export const TOOL_SETS: ReadonlyMap<string, ToolSet> = new Map(
  [
    { name: "chapter", create: (root: string, options?: WorkspaceToolsOptions) => createWorkspaceTools(root, options), needsProcfs: false },
    { name: "verified", create: (root: string, options?: WorkspaceToolsOptions) => createVerifiedWorkspaceTools(root, options), needsProcfs: true },
  ].map((set) => [set.name, set]),
);

export const DEFAULT_TOOL_SET = "chapter";

/** The tools the deterministic attack calls: each opens or makes a path it checked a moment earlier. */
export interface AttackedTools {
  read: Tool;
  write: Tool;
}

export function attackedTools(tools: readonly Tool[]): AttackedTools {
  const named = (name: string) => {
    const tool = tools.find((candidate) => candidate.spec.name === name);
    if (tool === undefined) throw new Error(`the tool set has no "${name}" tool (it has: ${tools.map((t) => t.spec.name).join(", ")})`);
    return tool;
  };
  return { read: named("read"), write: named("write") };
}
