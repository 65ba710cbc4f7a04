/**
 * What a failure costs the one who runs the tools (its consequence, as observed) and what an attacker
 * needs to cause it (its threat), each a small fixed set defined once here, with the severity and the
 * CWE weaknesses code scanning ranks it by; and the `--fail-on` rule of a verdict.
 *
 * Promises: every consequence and threat has a meaning and its weaknesses; every consequence of a
 * security weakness has a GitHub `security-severity` (0.1 to 10); an escape (`outside changed`,
 * `outside read`) fails the run whatever `--fail-on` says, and an unknown consequence given to it is a
 * usage error that lists the known ones.
 */
import { UsageError } from "../cli-command.js";

/** A weakness of MITRE's CWE list, as code scanning tags it. */
export type Cwe = `CWE-${number}`;

/** What a failure means for the one who runs the tools, as observed: the escapes, then by severity. */
export type Consequence =
  | "outside changed"
  | "outside read"
  | "approval bypassed"
  | "inside destroyed"
  | "outside revealed"
  | "unavailable"
  | "hardening broken"
  | "not attacked"
  | "wording differs";

export interface ConsequenceTerms {
  meaning: string;
  /** GitHub's `security-severity` (CVSS scale); none where no weakness was shown (coverage, wording). */
  securitySeverity?: number;
  weaknesses: readonly Cwe[];
  /** Seen on the disk or in an answer: the boundary broke. Always fails the run. */
  escape: boolean;
}

export const CONSEQUENCES: Readonly<Record<Consequence, ConsequenceTerms>> = {
  "outside changed": {
    meaning: "a file or directory outside the workspace was created, changed or removed (seen on the disk), or a write answered success and left nothing inside",
    securitySeverity: 9.1,
    weaknesses: ["CWE-22"],
    escape: true,
  },
  "outside read": {
    meaning: "content from outside the workspace reached the model, in an answer or in a file inside",
    securitySeverity: 7.5,
    weaknesses: ["CWE-22", "CWE-200"],
    escape: true,
  },
  "approval bypassed": {
    meaning: "a call reached a tool although its approval refused it, its name was not exactly the tool's, or the run had been aborted",
    securitySeverity: 8.1,
    weaknesses: ["CWE-863"],
    escape: false,
  },
  "inside destroyed": {
    meaning: "a file inside the workspace lost its content to a call whose contract keeps it",
    securitySeverity: 6.5,
    weaknesses: ["CWE-706"],
    escape: false,
  },
  "outside revealed": {
    meaning: "an answer told something of the outside: a name, a size, a time, whether a path exists",
    securitySeverity: 5.3,
    weaknesses: ["CWE-200", "CWE-203"],
    escape: false,
  },
  unavailable: {
    meaning: "a resource limit did not hold: a call hung, flooded its answer, outlived its timeout, or stopped the target",
    securitySeverity: 5.3,
    weaknesses: ["CWE-400"],
    escape: false,
  },
  "hardening broken": {
    meaning:
      "a rule this kit holds tools to broke with no harm seen: a path check answered wrongly, a NUL path was taken for another, a replaced root was followed, an error was hidden, invalid input was accepted, a read was cut wrongly",
    securitySeverity: 3.7,
    weaknesses: ["CWE-693"],
    escape: false,
  },
  "not attacked": {
    meaning: "a tool that takes a path was never called by the audit, so nothing is known of it",
    weaknesses: [],
    escape: false,
  },
  "wording differs": {
    meaning: "a text differs from the reference's: safe, and a failure only with --conformance",
    weaknesses: [],
    escape: false,
  },
};

/** What the attacker needs for the failure, least first. */
export type Threat = "the model's input alone" | "a link inside the workspace" | "the root replaced" | "a concurrent process";

export const THREATS: Readonly<Record<Threat, { meaning: string; weaknesses: readonly Cwe[] }>> = {
  "the model's input alone": { meaning: "any tool input the model emits, and nothing else", weaknesses: [] },
  "a link inside the workspace": { meaning: "a symlink or a hardlink inside the workspace: a checked-out repository holds one, or bash made it", weaknesses: ["CWE-59"] },
  "the root replaced": { meaning: "the workspace root replaced by a symlink after the tools were created (bash can do it)", weaknesses: ["CWE-367"] },
  "a concurrent process": {
    meaning: "another process changing the filesystem while a call runs: a swap between the check and the use, an entry that fails or turns unreadable",
    weaknesses: ["CWE-367"],
  },
};

/** The weaknesses a failure shows: its consequence's, its threat's and the property's own, each once. */
export function weaknessesOf(consequence: Consequence, threat: Threat, own: readonly Cwe[] = []): Cwe[] {
  return [...new Set([...CONSEQUENCES[consequence].weaknesses, ...THREATS[threat].weaknesses, ...own])];
}

/** A failure's consequence (with any other its run showed) and the threat it needs, a line each, as every report writes them. */
export function findingLines(finding: { consequence?: Consequence; alsoSeen?: readonly Consequence[]; threat?: Threat }): string[] {
  const also = finding.alsoSeen === undefined ? "" : ` (its run also showed: ${finding.alsoSeen.join(", ")})`;
  return [...(finding.consequence === undefined ? [] : [`consequence: ${finding.consequence}${also}`]), ...(finding.threat === undefined ? [] : [`threat: ${finding.threat}`])];
}

export const ESCAPES: readonly Consequence[] = (Object.keys(CONSEQUENCES) as Consequence[]).filter((consequence) => CONSEQUENCES[consequence].escape);

/**
 * What fails the run unless `--fail-on` says otherwise: every consequence a guarantee's failure can
 * have. A gate that let one through by default would be green for a reason its user never chose;
 * wording is not a guarantee's, and `--conformance` decides it.
 */
export const DEFAULT_FAIL_ON: readonly Consequence[] = (Object.keys(CONSEQUENCES) as Consequence[]).filter((consequence) => consequence !== "wording differs");

/**
 * The consequences `--fail-on` names (comma-separated, each spelt as reports write it or with `-`
 * for the spaces), with the escapes added: no list can switch them off.
 */
export function parseFailOn(values: readonly string[]): Consequence[] {
  const named = values.flatMap((value) => value.split(",")).map((name) => name.trim().replaceAll("-", " ")).filter((name) => name !== "");
  if (named.length === 0) throw new UsageError(`--fail-on needs at least one consequence: ${DEFAULT_FAIL_ON.join(", ")}`);
  const unknown = named.filter((name) => !DEFAULT_FAIL_ON.includes(name as Consequence));
  if (unknown.includes("wording differs")) throw new UsageError("--fail-on: wording differs is not a guarantee's consequence; --conformance makes differing texts fail the run");
  if (unknown.length > 0)
    throw new UsageError(`--fail-on: unknown consequence ${unknown.map((name) => JSON.stringify(name)).join(", ")}; the consequences are ${DEFAULT_FAIL_ON.join(", ")}`);
  return DEFAULT_FAIL_ON.filter((consequence) => ESCAPES.includes(consequence) || named.includes(consequence));
}
