/**
 * Candidate paths, as the model would send them to a tool. A candidate is symbolic where it names a
 * place beside the workspace (an area: the root, the outside canary, a sibling derived from the root's
 * name) and becomes text only against a concrete sandbox (`candidateText`), so a shrunk counterexample
 * reads the same on every machine and every root name.
 *
 * Promises: no candidate carries more than `maxParentSteps` `..` components (by construction), so even
 * a broken implementation that opens raw paths stays inside the sandbox's guard directories. Windows
 * forms are generated as text; on POSIX they are plain names.
 * Does not promise: coverage of every path the kernel accepts. Names come from small alphabets so that
 * candidates meet the generated tree often.
 */
import fc from "fast-check";
import { basename } from "node:path";
import { CANARY_DIR, CANARY_FILE, GUARD_DEPTH, type Sandbox } from "../../sandbox/sandbox.js";
import { type Area, BOX_NAME, areaName, areaPath } from "../../sandbox/tree.js";
import { parentSteps, withClimbs } from "./climbs.js";
import { plainSegment, treeName } from "./names.js";

export type Candidate =
  | { form: "text"; text: string }
  /** The absolute path of an area, then `rest`. */
  | { form: "absolute"; area: Area; rest: string }
  /** Out of the root by `..` and into a neighbour by its name: `../<area's name>/rest`, after a detour. */
  | { form: "beside"; area: Area; detour: readonly string[]; rest: string };

export interface CandidateConstraints {
  /** The most `..` components a candidate holds (default: what the sandbox's guard directories absorb). */
  maxParentSteps?: number;
}

/** Parent steps a candidate may take, leaving room for two more through a link's text. */
export const DEFAULT_MAX_PARENT_STEPS = GUARD_DEPTH - 1;

/** The places an attack aims at: the workspace, the outside canary, the siblings derived from the root. */
export function area(): fc.Arbitrary<Area> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant("root" as const) },
    { weight: 1, arbitrary: fc.constant("outside" as const) },
    { weight: 2, arbitrary: sibling() },
  );
}

/**
 * A twin of the root: the first ones (letter case, then normalization where the name has one) each as
 * often as all the similar prefixes together, so that every transformation is met, not hoped for.
 */
export function sibling(): fc.Arbitrary<Area> {
  return fc.oneof(fc.constant("sibling0" as const), fc.constant("sibling1" as const), fc.nat({ max: 15 }).map((index): Area => `sibling${index}`));
}

/** An area other than the workspace itself. */
export function neighbourArea(): fc.Arbitrary<Area> {
  return fc.oneof({ weight: 1, arbitrary: fc.constant("outside" as const) }, { weight: 2, arbitrary: sibling() });
}

/** What a path most often ends in: a file beside it (the canary), a tree name, a new file. */
export function targetLeaf(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(CANARY_FILE, `${CANARY_DIR}/${CANARY_FILE}`) },
    { weight: 3, arbitrary: treeName() },
    { weight: 1, arbitrary: fc.constantFrom("new.txt", "") },
  );
}

/** Relative candidates like `a/../../b/secret.txt`. */
export function relativeCandidate({ maxParentSteps = DEFAULT_MAX_PARENT_STEPS }: CandidateConstraints = {}): fc.Arbitrary<string> {
  return fc
    .tuple(withClimbs(fc.array(plainSegment(), { maxLength: 5 }), { maxParentSteps }), targetLeaf())
    .map(([parts, leaf]) => [...parts, leaf].join("/"));
}

/** The direct attack on a neighbour: `../<sibling>/secret.txt`, `a/../../outside/dir/`, … */
export function besideCandidate({ maxParentSteps = DEFAULT_MAX_PARENT_STEPS }: CandidateConstraints = {}): fc.Arbitrary<Candidate> {
  return fc.record({
    form: fc.constant("beside" as const),
    area: neighbourArea(),
    // Each detour component costs one `..` on the way back; the step out of the root costs one more.
    detour: fc.array(treeName(), { maxLength: Math.max(0, maxParentSteps - 1) }),
    rest: fc.constantFrom(CANARY_FILE, `${CANARY_DIR}/${CANARY_FILE}`, "new.txt", ""),
  });
}

/** Absolute candidates into the workspace, the outside canary or a sibling. */
export function absoluteCandidate(constraints: CandidateConstraints = {}): fc.Arbitrary<Candidate> {
  return fc.record({
    form: fc.constant("absolute" as const),
    area: area(),
    rest: fc.oneof(fc.constantFrom("", CANARY_FILE, "new.txt"), relativeCandidate(constraints)),
  });
}

/** Windows spellings: separators, drives, drive-relative, UNC and device prefixes, at most two `..`. */
export function windowsCandidate({ maxParentSteps = 2 }: CandidateConstraints = {}): fc.Arbitrary<string> {
  const spellings = [
    "..\\outside\\secret.txt",
    "..\\ws-other\\secret.txt",
    "a\\..\\..\\outside\\secret.txt",
    "..\\../outside/secret.txt",
    "C:\\Windows\\win.ini",
    "D:\\x",
    "C:foo",
    "c:/x",
    "\\\\server\\share\\x",
    "\\\\?\\C:\\x",
    "\\\\.\\C:\\x",
    "\\\\?\\UNC\\server\\share\\x",
    "\\",
    "WS\\A",
  ].filter((text) => parentSteps(text) <= maxParentSteps);
  return fc.oneof(
    fc.constantFrom(...spellings),
    withClimbs(fc.array(fc.oneof(treeName(), fc.constant(".")), { minLength: 1, maxLength: 4 }), { maxParentSteps: Math.min(2, maxParentSteps) }).chain((parts) =>
      fc.constantFrom(parts.join("\\"), parts.join("/"), parts.map((p, i) => (i % 2 ? `\\${p}` : `/${p}`)).join("").slice(1)),
    ),
  );
}

/**
 * NUL bytes before, inside and after names, and in front of a climb out (Node refuses NUL in paths; a
 * fork that checks up to the NUL and opens the rest, or strips it after the check, is caught here).
 */
export function nulCandidate({ maxParentSteps = DEFAULT_MAX_PARENT_STEPS }: CandidateConstraints = {}): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom("\0", "a\0", "a\0b", "x.txt\0.png"),
    fc
      .tuple(treeName(), fc.integer({ min: 0, max: maxParentSteps }), fc.constantFrom(`outside/${CANARY_FILE}`, "new.txt"))
      .map(([name, climbs, leaf]) => `${name}\0/${"../".repeat(climbs)}${leaf}`),
  );
}

/** Components over NAME_MAX and paths over PATH_MAX. */
export function longCandidate(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: 250, max: 300 }).map((length) => "a".repeat(length)),
    fc.integer({ min: 1_100, max: 1_500 }).map((count) => Array<string>(count).fill("abc").join("/")),
  );
}

const asText = (text: string): Candidate => ({ form: "text", text });

/** Every kind of candidate: relative, beside, absolute into any area, Windows, NUL, long. */
export function candidate(constraints: CandidateConstraints = {}): fc.Arbitrary<Candidate> {
  return fc.oneof(
    { weight: 6, arbitrary: relativeCandidate(constraints).map(asText) },
    { weight: 3, arbitrary: besideCandidate(constraints) },
    { weight: 2, arbitrary: windowsCandidate({ maxParentSteps: Math.min(2, constraints.maxParentSteps ?? 2) }).map(asText) },
    { weight: 3, arbitrary: nulCandidate(constraints).map(asText) },
    { weight: 1, arbitrary: longCandidate().map(asText) },
    { weight: 4, arbitrary: absoluteCandidate(constraints) },
  );
}

/** Candidates the precision oracle can model: no NUL, no over-long names. */
export function modelledCandidate(constraints: CandidateConstraints = {}): fc.Arbitrary<Candidate> {
  return fc.oneof(
    { weight: 6, arbitrary: relativeCandidate(constraints).map(asText) },
    { weight: 3, arbitrary: besideCandidate(constraints) },
    { weight: 1, arbitrary: windowsCandidate({ maxParentSteps: Math.min(2, constraints.maxParentSteps ?? 2) }).map(asText) },
    { weight: 3, arbitrary: absoluteCandidate(constraints) },
  );
}

export function candidateText(box: Sandbox, candidate: Candidate): string {
  switch (candidate.form) {
    case "text":
      return candidate.text;
    case "absolute": {
      const base = areaPath(box, candidate.area);
      return candidate.rest === "" ? base : `${base}/${candidate.rest}`;
    }
    case "beside": {
      const { detour, area: where, rest } = candidate;
      return [...detour, ...detour.map(() => ".."), "..", basename(areaPath(box, where)), ...(rest === "" ? [] : [rest])].join("/");
    }
  }
}

/**
 * A candidate as a reader sees it beside a root named `rootName`: its text quoted, an area by the name
 * its directory has (`$BOX/ws-other/secret.txt`, `"../ws-other/secret.txt"`), as counterexamples name it.
 */
export function renderCandidate(candidate: Candidate, rootName = "ws"): string {
  switch (candidate.form) {
    case "text":
      return JSON.stringify(candidate.text);
    case "absolute":
      return [BOX_NAME, areaName(candidate.area, rootName), ...(candidate.rest === "" ? [] : [candidate.rest])].join("/");
    case "beside":
      return JSON.stringify([...candidate.detour, ...candidate.detour.map(() => ".."), "..", areaName(candidate.area, rootName), ...(candidate.rest === "" ? [] : [candidate.rest])].join("/"));
  }
}
