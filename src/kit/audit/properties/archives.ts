/**
 * `containment.extract`: a tool that extracts an archive (catalog.ts, `extract`) changes nothing
 * outside the workspace and brings nothing in, whatever the archive's entries say. Each run writes a
 * tar a call into the workspace (`archive-1.tar`, …), built by the audit (arbitraries/archives.ts):
 * safe entries, then one class of hostile entries (a name that climbs out or is absolute, a link out
 * and an entry written through it, a hard link to a file outside, a directory entry over a link),
 * every class in every run. The operation's tools, in turn, extract each into a directory inside the
 * root (new, or the root itself) or at a hostile path, the archive named by its own path or a hostile
 * one. After each call the canaries (content, mode, owner, a file's modification time, nothing
 * added) must be as they were and no answer may hold the secret; after all calls no file inside may
 * hold it (a hard link to an outside file is one). A refusal, or an extraction of the safe entries
 * only, keeps every rule. Shrinking leaves out every call and entry the failure does not need: the
 * counterexample is the bad entry, or the link and the entry written through it.
 */
import fc from "fast-check";
import { lstatSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ARCHIVE_ATTACKS, type Candidate, allOf, archiveEntries, candidate, candidateText, entriesIn, entryText, workspaceRoot } from "../arbitraries/index.js";
import { type AuditProperty, violation } from "../runner/property.js";
import { type CallWatch, paceOf, watchCalls } from "../runner/watch.js";
import { type ContainmentCase, caseScene, findFile, inCaseSandbox, probeCount } from "./containment.js";
import { type Call, TOOL_TREE_SCALE, askInTurn, asker, callName, refuseSecrets, refuseWaits, shown } from "./operations.js";
import { containmentId, operation } from "../../operations/catalog.js";
import { type OperationTool, foldCases } from "../../operations/surface.js";
import { optionOf } from "../../operations/classify.js";
import { offeredTools, surfaceOf } from "../../operations/target.js";
import { SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import { type TreeEntry, showName } from "../../sandbox/tree.js";
import { type TarEntry, tarBytes } from "../../sandbox/tar.js";

/** Where call `index` (from 0) finds its archive in the workspace: `archive-1.tar`, … */
export const archiveName = (index: number) => `archive-${index + 1}.tar`;

const EXTRACT = operation("extract");

/**
 * One call: the entries of the archive the case writes for it, the path it names the archive by (its
 * own, or a hostile path), where it extracts it, the tool (by index, in turn) and the variant of its
 * optional arguments.
 */
export interface ArchiveProbe {
  entries: readonly TarEntry[];
  /** A hostile path for the archive; none: the archive written for this call. */
  archive?: Candidate;
  destination: Candidate;
  tool: number;
  variant: number;
}

export type ArchiveCase = ContainmentCase<ArchiveProbe>;

const text = (value: string): Candidate => ({ form: "text", text: value });

/**
 * Where a call extracts: mostly a new directory one below the root, or the root itself, whose entries
 * climbing `ENTRY_CLIMBS` reach outside; at times a hostile path, at most two directories above the
 * root, so that a climbing entry still lands in the sandbox.
 */
const destination = () =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(text("out"), text("unpacked")) }, { weight: 1, arbitrary: fc.constantFrom(text(""), text(".")) }, { weight: 2, arbitrary: candidate({ maxParentSteps: 2 }) });

const probe = (entries: fc.Arbitrary<TarEntry[]>, archive: fc.Arbitrary<Candidate | undefined>): fc.Arbitrary<ArchiveProbe> =>
  fc
    .record({ entries, archive, destination: destination(), tool: fc.nat({ max: 15 }), variant: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })) })
    .map(({ archive: named, ...rest }) => ({ ...rest, ...(named === undefined ? {} : { archive: named }) }));

/**
 * A case's calls: one per class of hostile entries, each on its own archive, by construction (each
 * dropped by shrinking when the failure does not need it); then up to three drawn, an archive of any
 * class, named at times by a hostile path. The tree is the archives, one a call.
 */
export function archiveCases(): fc.Arbitrary<ArchiveCase> {
  const every = allOf(Object.values(ARCHIVE_ATTACKS).map((attack) => probe(archiveEntries(attack), fc.constant(undefined))));
  const anyClass = fc.oneof(...Object.values(ARCHIVE_ATTACKS).map((attack) => archiveEntries(attack)));
  const drawn = fc.array(probe(anyClass, fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: candidate() })), { maxLength: 3 });
  return fc.tuple(workspaceRoot(), every, drawn).map(([root, opening, more]) => {
    const probes = [...opening, ...more];
    return { root, tree: probes.map((_probe, index): TreeEntry => ({ kind: "file", at: [archiveName(index)] })), probes };
  });
}

/** The calls of a case, one per probe but for one that would repeat a call made already (`foldCases`). */
function extractionCalls(tools: readonly OperationTool[], box: Sandbox, probes: readonly ArchiveProbe[]): Call[] {
  const made = new Set<string>();
  const calls: Call[] = [];
  let folded = 0;
  for (const probe of probes) {
    const tool = tools[probe.tool % tools.length] as OperationTool;
    const option = optionOf(tool.classification.plan, probe.variant);
    const asked = { archive: probe.archive === undefined ? archiveName(calls.length + folded) : candidateText(box, probe.archive), destination: candidateText(box, probe.destination) };
    const key = JSON.stringify([tool.name, asked, option]);
    if (made.has(key)) {
      foldCases(1);
      folded += 1;
      continue;
    }
    made.add(key);
    calls.push({ index: calls.length, tool, input: { ...asked, ...(option === undefined ? {} : { variant: probe.variant }) } });
  }
  return calls;
}

/** Each call in turn, the canaries compared after each, then what the workspace holds. */
async function judgeExtractions(box: Sandbox, calls: readonly Call[], watch: CallWatch): Promise<void> {
  const ask = asker(watch);
  for (const [position, call] of calls.entries()) {
    const answer = await askInTurn(ask, calls, position);
    // A call a deadline refused ends the case's calls: what they did so far is still judged.
    if (answer === undefined) break;
    refuseSecrets(box, [call], [answer], "");
    refuseWaits(calls, watch);
    const did = `${callName(call)} extracted ${call.input.archive} into ${JSON.stringify(call.input.destination)} (its answer: ${shown(box, answer)})`;
    const outside = await box.canaryChanges();
    if (outside.length > 0) violation(`${did} and changed outside the workspace:\n  ${outside.join("\n  ")}`, "outsideChanged", call.index);
    if (!lstatSync(box.root, { throwIfNoEntry: false })?.isDirectory()) violation(`${did} and took the workspace itself away`, "insideDestroyed", call.index);
  }
  const imported = findFile(box.root, (content) => content.includes(SECRET));
  if (imported !== undefined) violation(`a file inside the workspace now holds content from outside: ${imported}`, "secretImported", "no single call");
}

/** How a counterexample says what each archive holds: a line naming it, then an entry a line (arbitraries/archives.ts, `entryText`). */
export function archiveSetup({ root, probes }: ArchiveCase): string[] {
  return probes.flatMap((probe, index) => [`${showName(`${root.name}/${archiveName(index)}`)} is a tar the audit wrote, holding in order:`, ...probe.entries.map((entry) => `  ${entryText(entry)}`)]);
}

export const containmentExtract: AuditProperty<ArchiveCase> = {
  id: containmentId("extract"),
  gate: "workspacePath",
  kind: "guarantee",
  title: "a tool that extracts an archive returns nothing from outside, changes nothing outside and brings nothing in from outside, whatever its entries name",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  // The archive is what the attacker wrote; its links are the attack's, not the workspace's.
  threat: (value) => (value.probes.some((probe) => probe.entries.some((entry) => entry.kind === "symlink" || entry.kind === "hardlink")) ? "a link inside the workspace" : "the model's input alone"),
  weaknesses: ["CWE-22"],
  notApplicable: (target) =>
    offeredTools(target).some((tool) => tool.classification.kind === "operation" && tool.classification.operation === "extract") ? undefined : `the target offers no tool that ${EXTRACT.does}`,
  budgetScale: TOOL_TREE_SCALE,
  arbitrary: archiveCases(),
  casesIn: probeCount,
  render: (value) => caseScene(value, archiveSetup(value)),
  async check(target, value) {
    await inCaseSandbox(target, value, async (box, root) => {
      for (const [index, probe] of value.probes.entries()) await writeFile(join(box.root, archiveName(index)), tarBytes(entriesIn(probe.entries, dirname(box.outside))));
      const tools = surfaceOf(target, root).of("extract");
      if (tools.length === 0) throw new Error(`the target offers no tool that ${EXTRACT.does} on ${root}`);
      const calls = extractionCalls(tools, box, value.probes);
      const watch = watchCalls(box, paceOf(target), "");
      try {
        await judgeExtractions(box, calls, watch);
      } finally {
        await watch.stop();
      }
    });
  },
};
