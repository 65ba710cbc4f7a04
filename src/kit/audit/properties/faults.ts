/**
 * Fault classes: with an injected `fsApi` whose n-th `lstat` or `realpath` fails with EACCES, EIO,
 * ELOOP or ENAMETOOLONG, nothing is accepted. Only ENOENT may mean "missing"; any other failure must
 * come out of `workspacePath` as that same error code (never swallowed into a walk up or an "allowed"),
 * and out of a tool as an `isError` result.
 * A fork that ignores the injected `fsApi` never meets the fault, and passes vacuously for that run.
 */
import fc from "fast-check";
import * as fsPromises from "node:fs/promises";
import { type Probe, type ProbeConstraints, candidateText, modelledCandidate } from "../arbitraries/index.js";
import { type AuditProperty, execute, settle, toolsOf, violation } from "../runner/property.js";
import type { FsApi } from "../../../gates/workspace-path.js";
import { type ContainmentCase, caseScene, containmentCases, inCaseSandbox, probeCount } from "./containment.js";

export const FAULT_CODES = ["EACCES", "EIO", "ELOOP", "ENAMETOOLONG"] as const;

export interface Fault {
  code: (typeof FAULT_CODES)[number];
  operation: "lstat" | "realpath";
  /** Fails the n-th call (0-based) of that operation. */
  call: number;
}

export interface FaultProbe extends Probe {
  fault: Fault;
}

export type FaultCase = ContainmentCase<FaultProbe>;

const fault: fc.Arbitrary<Fault> = fc.record({
  code: fc.constantFrom(...FAULT_CODES),
  operation: fc.constantFrom("lstat" as const, "realpath" as const),
  call: fc.nat({ max: 4 }),
});

/** Each probe of a containment case with a fault of its own. */
export function faultCases(constraints: ProbeConstraints = {}): fc.Arbitrary<FaultCase> {
  return containmentCases(modelledCandidate(), constraints).chain((aimed) =>
    fc
      .array(fault, { minLength: aimed.probes.length, maxLength: aimed.probes.length })
      .map((faults) => ({ ...aimed, probes: aimed.probes.map((probe, index) => ({ ...probe, fault: faults[index] ?? { code: "EIO", operation: "lstat", call: 0 } })) })),
  );
}

const faultCase = faultCases();

/** The real `lstat`/`realpath`, except for one call that fails with the fault's code. */
export function faultyFs(fault: Fault): { fsApi: FsApi; fired: () => boolean } {
  let calls = 0;
  let fired = false;
  const maybeFail = (operation: Fault["operation"], path: unknown) => {
    if (operation !== fault.operation || calls++ !== fault.call) return;
    fired = true;
    throw Object.assign(new Error(`${fault.code}: injected fault, ${operation} '${String(path)}'`), { code: fault.code, syscall: operation });
  };
  const fsApi = {
    lstat: async (path: string) => {
      maybeFail("lstat", path);
      return fsPromises.lstat(path);
    },
    realpath: async (path: string) => {
      maybeFail("realpath", path);
      return fsPromises.realpath(path);
    },
  } as FsApi;
  // A counterexample names it as its setup says it in words: `workspacePath(…, fsApi)`.
  Object.assign(fsApi, { [fc.toStringMethod]: () => "fsApi" });
  return { fsApi, fired: () => fired };
}

/** A case with its faults: each call's `fsApi` said in words, as the calls name it. */
const renderFault = (value: FaultCase) =>
  caseScene(
    value,
    value.probes.map(({ fault: { call, operation, code } }, index) => `fsApi of call ${index + 1}: node:fs/promises, but its ${ordinal(call + 1)} ${operation} fails with ${code}`),
  );

const ordinal = (n: number) => `${n}${n % 10 === 1 && n % 100 !== 11 ? "st" : n % 10 === 2 && n % 100 !== 12 ? "nd" : n % 10 === 3 && n % 100 !== 13 ? "rd" : "th"}`;

export const faultsWorkspacePath: AuditProperty<FaultCase> = {
  id: "faults.workspacePath",
  gate: "workspacePath",
  kind: "guarantee",
  title: "an fs error other than ENOENT propagates out of workspacePath unchanged",
  needs: ["workspacePath"],
  consequence: "hardening broken",
  threat: () => "a concurrent process",
  arbitrary: faultCase,
  casesIn: probeCount,
  render: renderFault,
  async check(target, value) {
    await inCaseSandbox(target, value, async (box, root) => {
      for (const { candidate: spec, creating, fault: injected } of value.probes) {
        const { fsApi, fired } = faultyFs(injected);
        const answer = await settle(target.workspacePath!(root, candidateText(box, spec), creating, fsApi));
        if (!fired()) continue;
        if (answer.ok) violation(`accepted ${String(answer.value)} although ${injected.operation} failed with ${injected.code}`);
        const code = (answer.error as NodeJS.ErrnoException | undefined)?.code;
        if (code !== injected.code) violation(`${injected.code} from ${injected.operation} came out as ${String(code ?? answer.error)}`);
      }
    });
  },
};

export const faultsTools: AuditProperty<FaultCase> = {
  id: "faults.tools",
  gate: "workspacePath",
  kind: "guarantee",
  title: "a tool whose path check meets an fs fault answers isError",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "a concurrent process",
  arbitrary: faultCase,
  casesIn: probeCount,
  render: renderFault,
  async check(target, value) {
    await inCaseSandbox(target, value, async (box, root) => {
      for (const { candidate: spec, creating, fault: injected } of value.probes) {
        const { fsApi, fired } = faultyFs(injected);
        const tools = toolsOf(target, root, { fsApi });
        const path = candidateText(box, spec);
        const result = creating ? await execute(tools.write, { path, content: "fault probe" }) : await execute(tools.read, { path });
        if (fired() && result.isError !== true)
          violation(`answered success (${String(result.content).slice(0, 120)}) although ${injected.operation} failed with ${injected.code}`);
      }
    });
  },
};
