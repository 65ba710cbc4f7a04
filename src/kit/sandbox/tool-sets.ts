/**
 * The tool sets the TOCTOU demo can attack, by name (`--tools NAME`): the chapter's tools, and the
 * descriptor-verified tools that are meant to close the window the chapter leaves open.
 *
 * Promises: each factory builds a fresh, unmodified tool set bound to the given workspace root, with
 * the production defaults (real `node:fs/promises`, no test hooks; for `verified`, hardlinks refused and
 * no best-effort fallback, so it throws where /proc cannot verify descriptors); `attackedTools` picks
 * out `read` and `write` by their spec names and throws, naming what is missing, when a set lacks one.
 * Does not promise: that a set defends against anything. The demo finds that out.
 */
import type { Tool } from "../../gates/tool.js";
import { createVerifiedWorkspaceTools } from "../../verified/verified-tools.js";
import { createWorkspaceTools } from "../../tools/workspace-tools.js";

export type ToolSetFactory = (root: string) => Tool[];

export const TOOL_SETS: ReadonlyMap<string, ToolSetFactory> = new Map<string, ToolSetFactory>([
  ["chapter", (root) => createWorkspaceTools(root)],
  ["verified", (root) => createVerifiedWorkspaceTools(root)],
]);

export const DEFAULT_TOOL_SET = "chapter";

/** The two tools the attack calls: both open a path they checked a moment earlier. */
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
