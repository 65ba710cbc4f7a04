/**
 * Permission faults with real semantics: a directory halfway down the candidate's path is mode 000 (not
 * searchable) or 0311 (searchable, not readable), served through memfs as `fsApi`. memfs enforces
 * modes for every user, so this runs the same as root in CI, where the disk would let root through.
 *
 * - mode 000: every lookup below the directory fails with EACCES, so `workspacePath` must reject with
 *   EACCES: never accept (a target that takes EACCES for "missing" walks up and approves the parent),
 *   never call it missing.
 * - mode 0311: lookups through it work, so the answer must be the one given without the mode.
 * A target that ignores the injected `fsApi` looks on the real disk, finds nothing there, and fails.
 * Refusing with mode 0311 what it accepts without the mode (it reads a directory it only needs to
 * search) is over-strict, a departure from the chapter's convention; any other difference breaks the
 * defence.
 * Not applicable where memfs is not installed (a development dependency): the audit says so.
 */
import fc from "fast-check";
import { type AuditProperty, settle, violation } from "../runner/property.js";
import type { FsApi } from "../../../gates/workspace-path.js";
import { memfsMissing, memfsWorld } from "../../memfs/world.js";

export const PERMISSION_MODES = [0o000, 0o311] as const;

export interface PermissionCase {
  /** Real directories from the root down to the leaf's directory. */
  chain: readonly string[];
  /** How many of them, from the top, carry `mode` (at least one). */
  lockedDepth: number;
  mode: (typeof PERMISSION_MODES)[number];
  leaf: "missing" | "file" | "link to outside" | "link inside";
  creating: boolean;
  absolute: boolean;
}

const permissionCase: fc.Arbitrary<PermissionCase> = fc
  .record({
    chain: fc.array(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 3 }),
    lockedDepth: fc.nat({ max: 2 }),
    mode: fc.constantFrom(...PERMISSION_MODES),
    leaf: fc.constantFrom("missing" as const, "file" as const, "link to outside" as const, "link inside" as const),
    creating: fc.boolean(),
    absolute: fc.boolean(),
  })
  .map((value) => ({ ...value, lockedDepth: Math.min(value.lockedDepth, value.chain.length - 1) }));

const LEAF_LINES: Record<PermissionCase["leaf"], (at: string) => string[]> = {
  missing: () => [],
  file: (at) => [at],
  "link to outside": (at) => [`${at} => $ABS/outside/secret.txt`],
  "link inside": (at) => [`${at} => $ABS/ws/inside.txt`],
};

function treeOf({ chain, leaf }: PermissionCase): string[] {
  return ["ws/inside.txt", "outside/secret.txt", `ws/${chain.join("/")}/`, ...LEAF_LINES[leaf](`ws/${chain.join("/")}/x`)];
}

const lockedDirectory = ({ chain, lockedDepth }: PermissionCase) => `ws/${chain.slice(0, lockedDepth + 1).join("/")}`;

/** The answer as a comparable line: the path, or the error's code (or message when it has none). */
const outcome = (answer: Awaited<ReturnType<typeof settle<string>>>) =>
  answer.ok ? `accepted ${String(answer.value)}` : `rejected ${String((answer.error as NodeJS.ErrnoException | undefined)?.code ?? (answer.error as Error | undefined)?.message ?? answer.error)}`;

async function answerIn(target: Parameters<AuditProperty["check"]>[0], value: PermissionCase, withMode: boolean): Promise<string> {
  const world = await memfsWorld(treeOf(value), withMode ? [[lockedDirectory(value), value.mode]] : []);
  try {
    const root = `${world.base}/ws`;
    const candidate = `${value.absolute ? `${root}/` : ""}${value.chain.join("/")}/x`;
    return outcome(await settle(target.workspacePath!(root, candidate, value.creating, world.fs as FsApi)));
  } finally {
    await world.dispose();
  }
}

export const faultsPermissions: AuditProperty<PermissionCase> = {
  id: "faults.permissions",
  gate: "workspacePath",
  kind: "guarantee",
  title: "a directory the process may not search, halfway down the path, is EACCES, never missing or allowed",
  needs: ["workspacePath"],
  consequence: "hardening broken",
  threat: () => "a concurrent process",
  notApplicable: memfsMissing,
  arbitrary: permissionCase,
  render: (value) =>
    `tree (memfs):\n  ${treeOf(value).join("\n  ")}\n  ${lockedDirectory(value)} mode ${value.mode.toString(8).padStart(4, "0")}\ncandidate: ${value.absolute ? "$ROOT/" : ""}${value.chain.join("/")}/x (creating: ${value.creating})`,
  async check(target, value) {
    const answer = await answerIn(target, value, true);
    if (value.mode === 0o000) {
      if (answer !== "rejected EACCES") violation(`${answer}, although ${lockedDirectory(value)} cannot be searched (EACCES)`);
      return;
    }
    const unlocked = await answerIn(target, value, false);
    const overStrict = answer.startsWith("rejected") && unlocked.startsWith("accepted");
    if (answer !== unlocked) violation(`${answer} with ${lockedDirectory(value)} searchable but not readable; without the mode: ${unlocked}`, overStrict ? "convention differs" : undefined);
  },
};
