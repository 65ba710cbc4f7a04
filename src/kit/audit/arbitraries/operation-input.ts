/**
 * The input of one call of an operation (operations/catalog.ts), aimed at a tree: a candidate for each
 * path role, and a pattern for the operations that take one. Content and edits are the property's to
 * choose (markers it can find again), so they are not drawn.
 *
 * Promises: every candidate comes from the arbitrary it is given (so it keeps that arbitrary's
 * bounds), or names an entry of the tree as it is; a move's or a copy's source, and an edit's path,
 * name an entry of the tree three times in four (what does not exist tests nothing); a list of paths holds one to
 * three; the aim's candidate, when there is one, takes a path role (for a move, the end it names, or
 * either).
 */
import fc from "fast-check";
import type { Candidate } from "./candidates.js";
import { CANARY_DIR, CANARY_FILE, PERTURBED_NAME } from "../../sandbox/sandbox.js";
import { type Tree, laidOut } from "../../sandbox/tree.js";
import type { Aim } from "./trees.js";
import type { Role } from "../../operations/catalog.js";

export interface OperationProbe {
  path?: Candidate;
  paths?: readonly Candidate[];
  source?: Candidate;
  destination?: Candidate;
  pattern?: string;
}

export interface PatternConstraints {
  /** What the pattern is matched against: names (a glob) or content (a regular expression). */
  against?: "names" | "content";
}

/**
 * Patterns a search is asked: ones that match the tree's names, the canaries' names or their content,
 * and ones that break naive glob or regular-expression handling (an unclosed class or brace, a lone
 * backslash, a climb, stacked stars), which a server must refuse or answer, never die of.
 */
export function searchPattern({ against = "names" }: PatternConstraints = {}): fc.Arbitrary<string> {
  const matching =
    against === "names"
      ? fc.constantFrom("*", "**", "**/*", "*.txt", `**/${CANARY_FILE}`, "secret*", `**/${PERTURBED_NAME}`, `**/${CANARY_DIR}/**`, ".*", "a*", "**/a")
      : fc.constantFrom("CANARY", "SECRET", "secret", ".", "file", "^", "[a-z]+", "perturbed");
  const breaking = fc.constantFrom("[", "**/[a-", "{", "{a,b", "(", "\\", "../*", "../**/*", "/**", "**/../**", "*".repeat(64), "{a,{b,{c,{d,{e}}}}}", "[[:alpha:]", "(?<", ")", "+");
  return fc.oneof({ weight: 3, arbitrary: matching }, { weight: 1, arbitrary: breaking });
}

/** One call's input for an operation with these roles; `aim`, when given, gives its candidate to one path role. */
export function operationProbe(
  roles: readonly Role[],
  aimed: fc.Arbitrary<Candidate>,
  aim: Aim | undefined,
  tree: Tree,
  constraints: PatternConstraints = {},
): fc.Arbitrary<OperationProbe> {
  const attacked = aim?.end !== undefined && roles.includes(aim.end) ? aim.end : roles[firstPathRole(roles)];
  const or = (role: Role, arbitrary = aimed) => (aim !== undefined && role === attacked ? fc.constant(aim.candidate) : arbitrary);
  const entries = laidOut(tree).map((entry): Candidate => ({ form: "text", text: entry.at.join("/") }));
  const existing = entries.length === 0 ? aimed : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...entries) }, { weight: 1, arbitrary: aimed });
  const fields: { [K in keyof OperationProbe]-?: fc.Arbitrary<OperationProbe[K]> } = {
    // An edit reads the file first: a path that names nothing tests nothing.
    path: or("path", roles.includes("oldText") ? existing : aimed),
    paths: aim === undefined ? fc.array(aimed, { minLength: 1, maxLength: 3 }) : fc.array(aimed, { maxLength: 2 }).map((rest) => [aim.candidate, ...rest]),
    source: or("source", existing),
    destination: or("destination"),
    pattern: searchPattern(constraints),
  };
  const drawn = Object.fromEntries(roles.filter((role): role is keyof OperationProbe => role in fields).map((role) => [role, fields[role]]));
  const probe = fc.record(drawn) as fc.Arbitrary<OperationProbe>;
  // A move's aim that names no end is as dangerous at either: which end takes it is drawn.
  if (aim !== undefined && aim.end === undefined && roles.includes("source") && roles.includes("destination"))
    return fc.tuple(probe, existing, fc.boolean()).map(([drawnProbe, other, atSource]) => (atSource ? drawnProbe : { ...drawnProbe, source: other, destination: aim.candidate }));
  return probe;
}

function firstPathRole(roles: readonly Role[]): number {
  return roles.findIndex((role) => role === "path" || role === "source");
}
