/**
 * What the audit attacks: any module that exports some of the contract of SPEC §3.
 *
 * Promises: `loadTarget` imports `.js`, `.mjs` and `.ts` modules (TypeScript through tsx when Node
 * cannot load it alone) and keeps only the exports that are functions; a property whose export is
 * missing is skipped, never failed.
 * Does not promise: that the exports behave; that is what the properties find out.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { PathApi } from "../../gates/is-inside.js";
import type { Tool } from "../../gates/tool.js";
import type { FsApi } from "../../gates/workspace-path.js";

export interface AuditTarget {
  /** How the report names the target: the module path, or `reference`. */
  label: string;
  isInside?: (root: string, path: string, pathApi?: PathApi) => boolean;
  workspacePath?: (root: string, candidate: string, creating: boolean, fsApi?: FsApi) => Promise<string>;
  createWorkspaceTools?: (root: string, options?: object) => Tool[];
}

export type ContractExport = "isInside" | "workspacePath" | "createWorkspaceTools";

export const CONTRACT_EXPORTS: readonly ContractExport[] = ["isInside", "workspacePath", "createWorkspaceTools"];

export function targetFromModule(label: string, module: Record<string, unknown>): AuditTarget {
  const target: AuditTarget = { label };
  for (const name of CONTRACT_EXPORTS) {
    const value = module[name];
    if (typeof value === "function") Object.assign(target, { [name]: value });
  }
  return target;
}

/** The package's own implementation, the baseline every fork is compared with. */
export async function referenceTarget(): Promise<AuditTarget> {
  return targetFromModule("reference", (await import("../../index.js")) as Record<string, unknown>);
}

export async function loadTarget(specifier: string): Promise<AuditTarget> {
  const url = pathToFileURL(resolve(specifier)).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_UNKNOWN_FILE_EXTENSION") throw error;
    const { tsImport } = await import("tsx/esm/api");
    module = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
  return targetFromModule(specifier, module);
}
