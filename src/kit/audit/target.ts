/**
 * What the audit attacks: any module that exports some of the contract (docs/contract.md).
 *
 * Promises: `loadTarget` imports `.js`, `.mjs` and `.ts` modules (TypeScript through tsx, an optional
 * peer dependency, when Node cannot load it alone; without tsx, a clear error says to install it); a property whose export is missing is skipped, never failed. A module that
 * exports none of the contract's names as a function, or exports one of them as something else, is
 * refused (`UnusableTarget`, naming what it looked for and what it found): auditing it would check
 * nothing and pass.
 * Does not promise: that the exports behave; that is what the properties find out.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { PathApi } from "../../gates/is-inside.js";
import type { Tool } from "../../gates/tool.js";
import type { FsApi } from "../../gates/workspace-path.js";
import type { AgentOptions, AgentRun } from "../../index.js";

export interface AuditTarget {
  /** How the report names the target: the module path, or `reference`. */
  label: string;
  isInside?: (root: string, path: string, pathApi?: PathApi) => boolean;
  workspacePath?: (root: string, candidate: string, creating: boolean, fsApi?: FsApi) => Promise<string>;
  createWorkspaceTools?: (root: string, options?: object) => Tool[];
  /** The calling layer: the agent loop with its approval hook (docs/contract.md, "The calling layer"). */
  runAgent?: (prompt: string, options: AgentOptions) => Promise<AgentRun>;
  /** A target whose tools live in another process starts them on `root` now, as `createWorkspaceTools` does in process. */
  start?: (root: string) => Promise<void>;
  /** Properties that cannot apply to this kind of target (a process has no `isInside`), each with the reason. */
  notApplicable?: ReadonlyMap<string, string>;
}

export type ContractExport = "isInside" | "workspacePath" | "createWorkspaceTools" | "runAgent";

export const CONTRACT_EXPORTS: readonly ContractExport[] = ["isInside", "workspacePath", "createWorkspaceTools", "runAgent"];

/** A module that cannot be audited as it is: nothing of the contract, or a contract name that is no function. */
export class UnusableTarget extends Error {}

export function targetFromModule(label: string, module: Record<string, unknown>): AuditTarget {
  const target: AuditTarget = { label };
  const wrong: string[] = [];
  for (const name of CONTRACT_EXPORTS) {
    const value = module[name];
    if (typeof value === "function") Object.assign(target, { [name]: value });
    else if (value !== undefined) wrong.push(`${name} is ${value === null ? "null" : typeof value}, not a function`);
  }
  const looked = `looked for ${CONTRACT_EXPORTS.join(", ")}`;
  if (wrong.length > 0) throw new UnusableTarget(`${label}: ${wrong.join("; ")} (${looked})`);
  if (!CONTRACT_EXPORTS.some((name) => name in target)) {
    const found = Object.keys(module);
    throw new UnusableTarget(`${label} exports none of the contract (${looked}; found ${found.length === 0 ? "no exports" : found.join(", ")})`);
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
    const { tsImport } = await importTsx();
    module = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
  return targetFromModule(specifier, module);
}

/** The message when a `.ts` module meets a package installed without its optional peer tsx. */
export const TSX_MISSING = "install tsx to audit a .ts module (npm i -D tsx), or audit its compiled .js";

/** tsx, an optional peer: only a `.ts` module needs it, and it weighs some 11 MB with esbuild. */
async function importTsx(): Promise<typeof import("tsx/esm/api")> {
  try {
    return await import("tsx/esm/api");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") throw new Error(TSX_MISSING);
    throw error;
  }
}
