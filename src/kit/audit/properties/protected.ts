/**
 * `protected.<operation>`: the entries inside the workspace that the user says the target's tools
 * protect (`--protect`, the mapping's `protect`: operations/protected-paths.ts), judged per operation
 * as `containment.<operation>` judges the outside, and with the same calls of every tool of it. Each
 * run lays out every pattern's entries at the root, nested at every depth, beside their twins and
 * behind links (arbitraries/protected.ts), every protected file holding `PROTECTED_SECRET`, and aims
 * at them with every spelling the attack has, besides a drawn tree's probes.
 *
 * - `protected read`: no answer holds a protected file's content, and no call leaves it in a file
 *   that is not protected (a copy or a move out of protection).
 * - `protected changed`: no call creates, changes or removes a protected entry or anything in it.
 * - `protected revealed`: a read-only call asked again once only the protected entries changed (their
 *   contents, sizes, times, a new name in each protected directory) answers as before.
 * A target given no protected paths has nothing to judge: the properties are not applicable.
 */
import type fc from "fast-check";
import { type Dirent, lstatSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { protectedAttack } from "../arbitraries/index.js";
import { type AuditProperty, violation } from "../runner/property.js";
import { paceOf, watchCalls } from "../runner/watch.js";
import type { CallWatch } from "../runner/watch.js";
import type { WrittenFile } from "../runner/counterexample.js";
import { caseScene, inCaseSandbox, lesserCases, probeCount, treeThreat } from "./containment.js";
import { type Call, type Guarded, type OperationCase, TOOL_TREE_SCALE, askInTurn, asker, callName, callsOf, intentsOf, judgeReadOnly, operationCases, refuseSecrets, refuseWaits, shown, specialsOf } from "./operations.js";
import { OPERATIONS, type Operation } from "../../operations/catalog.js";
import { PROTECTED_SECRET, type ProtectedPattern, isProtectedPath, parseProtectPatterns } from "../../operations/protected-paths.js";

export { PROTECTED_SECRET };
import { offeredTools, surfaceOf } from "../../operations/target.js";
import { type Sandbox, perturbEntries } from "../../sandbox/sandbox.js";
import { type Tree, laidOut } from "../../sandbox/tree.js";

/** A case of the operation's, and the patterns it was drawn for. */
export type ProtectedCase = OperationCase & { protect: readonly ProtectedPattern[] };

/** The files a tree lays out where a pattern protects them, with the content the case writes into them. */
export function protectedWritten(tree: Tree, patterns: readonly ProtectedPattern[]): WrittenFile[] {
  return laidOut(tree)
    .filter((entry) => entry.kind === "file" && isProtectedPath(patterns, entry.at, false))
    .map((entry) => ({ path: entry.at.join("/"), content: `${PROTECTED_SECRET} ${entry.at.join("/")}\n` }));
}

/** A second name for a protected file would hold its content where nothing protects it: a drawn tree lays out none. */
const noHardlinkToProtected = (tree: Tree, patterns: readonly ProtectedPattern[]): Tree =>
  tree.filter((entry) => entry.kind !== "hardlink" || entry.to.area !== "root" || !isProtectedPath(patterns, entry.to.path, false));

/**
 * The operation's cases, every tree opening with the attack on `patterns` (instead of the openings
 * aimed at the outside, which containment judges) and a few drawn probes besides.
 */
export function protectedCases(operation: Operation, patterns: readonly ProtectedPattern[]): fc.Arbitrary<ProtectedCase> {
  return operationCases(operation, { openings: [protectedAttack(patterns, intentsOf(operation))], maxProbes: 8 }).map((value) => ({
    ...value,
    tree: noHardlinkToProtected(value.tree, patterns),
    protect: patterns,
  }));
}

/** What a protected entry is, for comparing it before and after a call. */
type Entries = Map<string, string>;

/** One walk of the workspace, links not followed: every protected entry's state, and the first unprotected file holding protected content. */
function look(root: string, patterns: readonly ProtectedPattern[]): { entries: Entries; leaked: string | undefined; files: string[]; directories: string[] } {
  const entries: Entries = new Map();
  const files: string[] = [];
  const directories: string[] = [];
  let leaked: string | undefined;
  const walk = (names: readonly string[]) => {
    for (const dirent of readdirSync(join(root, ...names), { withFileTypes: true }) as Dirent[]) {
      const at = [...names, dirent.name];
      const path = join(root, ...at);
      const guarded = isProtectedPath(patterns, at, dirent.isDirectory());
      if (dirent.isDirectory()) {
        if (guarded) {
          entries.set(at.join("/"), "a directory");
          directories.push(path);
        }
        walk(at);
      } else if (dirent.isFile()) {
        const content = readFileSync(path, "utf8");
        if (guarded) {
          entries.set(at.join("/"), `a file holding ${JSON.stringify(content.slice(0, 80))}`);
          files.push(path);
        } else if (content.includes(PROTECTED_SECRET)) leaked ??= at.join("/");
      } else if (guarded) entries.set(at.join("/"), dirent.isSymbolicLink() ? `a link to ${readlinkSync(path)}` : "a special file");
    }
  };
  walk([]);
  return { entries, leaked, files, directories };
}

/** How the protected entries differ, a line each: `added .git/new.txt (a file holding …)`. */
function differences(before: Entries, after: Entries): string[] {
  return [
    ...[...after].filter(([path]) => !before.has(path)).map(([path, state]) => `added ${path} (${state})`),
    ...[...before].filter(([path]) => !after.has(path)).map(([path]) => `removed ${path}`),
    ...[...after].filter(([path, state]) => before.has(path) && before.get(path) !== state).map(([path, state]) => `changed ${path} (now ${state})`),
  ];
}

const PERTURBED_PROTECTED = `${PROTECTED_SECRET} perturbed: another content, another size, other times\n`;

const guardedBy = (patterns: readonly ProtectedPattern[]): Guarded => ({
  secret: PROTECTED_SECRET,
  named: "the protected entries",
  asItWas: "as the protected entries were",
  from: "of a protected entry",
  read: "protected read",
  revealed: "protected revealed",
  perturb: async (box) => {
    const { files, directories } = look(box.root, patterns);
    return perturbEntries(files, directories, PERTURBED_PROTECTED);
  },
});

const rootGone = (box: Sandbox) => lstatSync(box.root, { throwIfNoEntry: false })?.isDirectory() !== true;

/** After `call` (or all the calls: `undefined`), what it did to the protected entries and with their content. */
function judgeEffects(box: Sandbox, patterns: readonly ProtectedPattern[], before: Entries, call: Call | undefined, answered: string): Entries {
  const seen = look(box.root, patterns);
  const changed = differences(before, seen.entries);
  const who = call === undefined ? "the calls" : callName(call);
  if (changed.length > 0) violation(`${who} changed what is protected${answered}:\n  ${changed.join("\n  ")}`, "protected changed", call?.index ?? "no single call");
  if (seen.leaked !== undefined) violation(`${who} left the content of a protected entry in ${seen.leaked}, which nothing protects${answered}`, "protected read", call?.index ?? "no single call");
  return seen.entries;
}

/** Changing calls, in order, each judged by what it did to the protected entries. */
async function judgeChanging(box: Sandbox, calls: readonly Call[], watch: CallWatch, patterns: readonly ProtectedPattern[], guarded: Guarded): Promise<void> {
  const ask = asker(watch);
  let before = look(box.root, patterns).entries;
  for (const [position, call] of calls.entries()) {
    const answer = await askInTurn(ask, calls, position);
    // A call a deadline refused ends the case's calls: what they did so far was judged.
    if (answer === undefined) return;
    refuseSecrets(box, [call], [answer], "", guarded);
    refuseWaits(calls, watch);
    // A call that took the workspace away is containment's finding; nothing protected is left to judge.
    if (rootGone(box)) return;
    before = judgeEffects(box, patterns, before, call, ` (its answer: ${shown(box, answer)})`);
  }
}

const SAMPLE_PATTERNS = parseProtectPatterns([".git"], "the sample");

function protectedOf(operation: Operation): AuditProperty<ProtectedCase> {
  const cases = new WeakMap<readonly ProtectedPattern[], fc.Arbitrary<ProtectedCase>>();
  const casesFor = (patterns: readonly ProtectedPattern[]) => {
    let found = cases.get(patterns);
    if (found === undefined) cases.set(patterns, (found = protectedCases(operation, patterns)));
    return found;
  };
  return {
    id: `protected.${operation.id}`,
    gate: "workspacePath",
    kind: "guarantee",
    title: `a tool that ${operation.does} neither reads, changes nor reveals a protected entry (--protect)`,
    needs: ["createWorkspaceTools"],
    // Every rule names its consequence; what is left (a tool that throws) breaks a hardening rule.
    consequence: "hardening broken",
    threat: (value) => treeThreat(value.tree),
    lesserCases,
    notApplicable: (target) =>
      target.protect === undefined || target.protect.length === 0
        ? "no protected paths were given (--protect, or the mapping's protect)"
        : offeredTools(target).some((tool) => tool.classification.kind === "operation" && tool.classification.operation === operation.id)
          ? undefined
          : `the target offers no tool that ${operation.does}`,
    budgetScale: TOOL_TREE_SCALE,
    // What documentation and tests sample: the cases of one pattern, `.git`; a run draws the target's own.
    arbitrary: casesFor(SAMPLE_PATTERNS),
    arbitraryFor: (target) => casesFor(target.protect ?? SAMPLE_PATTERNS),
    casesIn: probeCount,
    render: (value) => {
      const scene = caseScene(value, [`protected (--protect): ${value.protect.map((pattern) => pattern.text).join(", ")}; each protected file holds ${PROTECTED_SECRET} and its path`]);
      return { ...scene, ...(scene.workspace === undefined ? {} : { workspace: { ...scene.workspace, written: protectedWritten(value.tree, value.protect) } }) };
    },
    async check(target, value) {
      await inCaseSandbox(target, value, async (box, root) => {
        for (const { path, content } of protectedWritten(value.tree, value.protect)) writeFileSync(join(box.root, path), content);
        const tools = surfaceOf(target, root).of(operation.id);
        if (tools.length === 0) throw new Error(`the target offers no tool that ${operation.does} on ${root}`);
        const calls = callsOf(operation, tools, box, value.probes, value.tree);
        const watch = watchCalls(box, paceOf(target), specialsOf(value.tree));
        const guarded = guardedBy(value.protect);
        try {
          if (operation.changes) await judgeChanging(box, calls, watch, value.protect, guarded);
          else {
            const before = look(box.root, value.protect).entries;
            await judgeReadOnly(box, calls, watch, guarded);
            if (!rootGone(box)) judgeEffects(box, value.protect, before, undefined, "");
          }
        } finally {
          await watch.stop();
        }
      });
    },
  };
}

/** One property per operation attacked by a tree, in the catalogue's order (docs/limits.md: an archive's entries are not aimed at protected entries). */
export const PROTECTED_PROPERTIES: readonly AuditProperty<ProtectedCase>[] = OPERATIONS.filter((operation) => operation.attacked === "tree").map(protectedOf);
