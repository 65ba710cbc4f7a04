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
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { PathApi } from "../../gates/is-inside.js";
import type { Tool } from "../../gates/tool.js";
import type { FsApi } from "../../gates/workspace-path.js";
import type { AgentOptions, AgentRun } from "../../index.js";
import type { ProtectedPattern } from "./protected-paths.js";
import { type OfferedTool, type Surface, moduleSurface, recorded, transcribe } from "./surface.js";

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
  /** Every tool on `root`, classified; without it, the tools `createWorkspaceTools` returns. */
  surface?: (root: string) => Surface;
  /** Every tool the target offers, classified, known without a root (an MCP server's `tools/list`). */
  readonly offered?: readonly OfferedTool[];
  /** Starts, in the background, what the roots' cases will need (an MCP server per root). */
  warm?: (roots: readonly string[]) => void;
  /** Tools the user excluded by name (`--exclude-tool`, the mapping's `exclude`), each with the reason the report repeats. */
  excluded?: ReadonlyMap<string, string>;
  /** Entries inside the workspace its tools promise never to read, change or reveal (`--protect`, the mapping's `protect`); the `protected.*` properties judge them. */
  protect?: readonly ProtectedPattern[];
  /** The median time one call of its tools took when the audit measured it (audit/pace.ts); the bounds of a call grow with it. */
  latencyMs?: number;
}

/** The target's tools on `root`, classified (surface.ts); none for a target without tools. */
export function surfaceOf(target: AuditTarget, root: string): Surface {
  if (target.surface !== undefined) return target.surface(root);
  return moduleSurface(target.createWorkspaceTools?.(root) ?? [], target.excluded, root);
}

const offeredByModule = new WeakMap<AuditTarget, readonly OfferedTool[]>();

/**
 * Every tool the target offers, classified: an MCP server's from its `tools/list`, a module's from the
 * tools its `createWorkspaceTools` returns on an empty directory made for the purpose (none when that
 * throws: the properties that call it find out why).
 */
export function offeredTools(target: AuditTarget): readonly OfferedTool[] {
  if (target.offered !== undefined) return target.offered;
  let offered = offeredByModule.get(target);
  if (offered === undefined) {
    const scratch = mkdtempSync(join(tmpdir(), "workspace-gates-surface-"));
    try {
      offered = surfaceOf(target, scratch).offered;
    } catch {
      offered = [];
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    offeredByModule.set(target, offered);
  }
  return offered;
}

export type ContractExport = "isInside" | "workspacePath" | "createWorkspaceTools" | "runAgent";

export const CONTRACT_EXPORTS: readonly ContractExport[] = ["isInside", "workspacePath", "createWorkspaceTools", "runAgent"];

/**
 * The target stopped answering in the middle of a call: its process exited, or left the call
 * unanswered. Whether that is a finding (the call kills it) or the target's own trouble is decided by
 * doing the case again on a fresh process (audit/runner/run.ts).
 */
export class TargetStopped extends Error {
  constructor(
    message: string,
    readonly how: "exited" | "hung",
  ) {
    super(message);
  }
}

/** A module that cannot be audited as it is: nothing of the contract, or a contract name that is no function. */
export class UnusableTarget extends Error {}

export function targetFromModule(label: string, module: Record<string, unknown>): AuditTarget {
  const target: AuditTarget = { label };
  const wrong: string[] = [];
  for (const name of CONTRACT_EXPORTS) {
    const value = module[name];
    if (typeof value === "function") Object.assign(target, { [name]: name === "createWorkspaceTools" ? recordedTools(value as Required<AuditTarget>["createWorkspaceTools"]) : name === "workspacePath" ? transcribed(name, value as (...args: unknown[]) => unknown) : value });
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

/**
 * Every call of the module's tools is counted in the record of the case under way (coverage,
 * surface.ts), and written with the tools' making into its transcript.
 */
function recordedTools(create: Required<AuditTarget>["createWorkspaceTools"]): Required<AuditTarget>["createWorkspaceTools"] {
  return (root, options) => {
    transcribe({ via: "export", name: "createWorkspaceTools", args: options === undefined ? [root] : [root, options] });
    const tools = create(root, options);
    return Array.isArray(tools) ? tools.map((tool) => (typeof tool?.execute === "function" && typeof tool.spec?.name === "string" ? recorded(tool) : tool)) : tools;
  };
}

/** An export whose every call is written into the transcript of the case under way. */
function transcribed(name: ContractExport, exported: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  return (...args) => {
    transcribe({ via: "export", name, args });
    return exported(...args);
  };
}

/** The package's own implementation, the baseline every fork is compared with. */
export async function referenceTarget(): Promise<AuditTarget> {
  return targetFromModule("reference", (await import("../../index.js")) as Record<string, unknown>);
}

export async function loadTarget(specifier: string): Promise<AuditTarget> {
  // Node's own error names the file that imported it: the kit's target.js, not the user's module.
  if (!existsSync(resolve(specifier))) throw new Error(`no such file: ${resolve(specifier)}`);
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
