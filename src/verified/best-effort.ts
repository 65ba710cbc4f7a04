/**
 * The fallback a caller must ask for where descriptors cannot be verified (no procfs: macOS,
 * Windows, some sandboxes): the chapter's tools, and every result saying that it is unverified.
 *
 * Promises: each result is the chapter tool's result with one more line, the notice, appended, on
 * success and on error alike, so neither the model nor a log can mistake it for a verified result.
 * Does not promise: any of the verified tools' guarantees. The TOCTOU window is open and hardlinks
 * are not checked, exactly as with `createWorkspaceTools`.
 */
import type { Tool } from "../gates/tool.js";

export function unverifiedNotice(problem: string): string {
  return `[unverified: ${problem}; this result comes from the chapter's path checks alone, which a concurrent symlink swap or a hardlink can get past]`;
}

export function announceUnverified(tool: Tool, problem: string): Tool {
  const notice = unverifiedNotice(problem);
  return {
    spec: tool.spec,
    async execute(input, signal) {
      const result = await tool.execute(input, signal);
      return { ...result, content: `${result.content}\n${notice}` };
    },
  };
}
