/**
 * Precision: `workspacePath` agrees with the reference resolver (reference-resolver.ts) on every
 * generated tree, so it neither accepts what the reference refuses nor refuses a legitimate path such as `..foo`
 * or a link that stays inside; an accepted path must be exactly the lexically resolved candidate,
 * against the root's real path whatever spelling of it the implementation was handed.
 *
 * Accepting what the reference refuses, or answering a path that does not resolve inside, breaks a
 * defence. Refusing what it accepts (over-strict), or answering another path that resolves inside
 * (the real path instead of the lexical one), departs from the reference's convention with no harm:
 * a warning unless `--strict`.
 */
import { candidateText, modelledCandidate } from "../arbitraries/index.js";
import { predictWorkspacePath, snapshotTree } from "../reference-resolver.js";
import { type AuditProperty, Departures, isUnder, settle, violation } from "../runner/property.js";
import { type ContainmentCase, canonicalExisting, caseScene, containmentCases, inCaseSandbox, lesserCases, probeCount, treeThreat } from "./containment.js";

export const precisionWorkspacePath: AuditProperty<ContainmentCase> = {
  id: "precision.workspacePath",
  gate: "workspacePath",
  kind: "guarantee",
  title: "workspacePath accepts exactly what the reference resolver accepts, at the same path",
  needs: ["workspacePath"],
  consequence: "hardening broken",
  threat: (value) => treeThreat(value.tree),
  lesserCases,
  arbitrary: containmentCases(modelledCandidate()),
  casesIn: probeCount,
  render: (value) => caseScene(value),
  async check(target, value) {
    const departures = new Departures();
    await inCaseSandbox(target, value, async (box, root) => {
      // workspacePath changes nothing, so one snapshot of the tree predicts every probe.
      const snapshot = await snapshotTree(box.base);
      for (const { candidate: spec, creating } of value.probes) {
        const text = candidateText(box, spec);
        const expected = predictWorkspacePath(snapshot, box.root, text, creating);
        if (expected.kind === "unknown") continue;
        const actual = await settle(target.workspacePath!(root, text, creating));
        if (expected.kind === "accept" && !actual.ok)
          departures.note(box, `refused a legitimate path ${JSON.stringify(text)} (the reference resolver accepts it as ${expected.path}): ${String(actual.error)}`);
        if (expected.kind === "accept" && actual.ok && actual.value !== expected.path) {
          const real = typeof actual.value === "string" ? await canonicalExisting(actual.value) : undefined;
          const answered = `accepted ${JSON.stringify(text)}, but answered ${String(actual.value)} instead of ${expected.path}`;
          if (real === undefined || !isUnder(box.root, real)) violation(`${answered}, which does not resolve inside the workspace`);
          departures.note(box, `${answered} (both inside the workspace)`);
        }
        if (expected.kind === "refuse" && actual.ok)
          violation(`accepted ${JSON.stringify(text)} as ${String(actual.value)}, which the reference resolver refuses (${expected.reason})`);
      }
    });
    departures.settle();
  },
};
