/**
 * What a failure costs the one who runs the tools (its consequence, as observed) and what an attacker
 * needs to cause it (its threat), each a small fixed set defined once here, with the severity and the
 * CWE weaknesses code scanning ranks it by; and the `--fail-on` rule of a verdict.
 *
 * Promises: every consequence and threat has a meaning and its weaknesses; every consequence of a
 * security weakness has a GitHub `security-severity` (0.1 to 10); every consequence has a tier: an
 * escape (`outside changed`, `outside read`) fails the run whatever `--fail-on` says; harm (a protected
 * entry inside the workspace read, changed or revealed among it) and a broken
 * defence fail it by default; a departure from the chapter's conventions is a warning unless the
 * user asks for strictness (`--strict`). An unknown consequence given to `--fail-on` is a usage error
 * that lists the known ones.
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
  | "protected changed"
  | "protected read"
  | "misreported"
  | "outside revealed"
  | "protected revealed"
  | "unavailable"
  | "hardening broken"
  | "not attacked"
  | "convention differs"
  | "wording differs";

/**
 * What the verdict does with a consequence: an escape always fails the run; harm (the user lost
 * something), a broken defence (a weakness with no harm seen) and an unattacked tool fail it unless
 * `--fail-on` leaves them out; a convention (the chapter's way, departed from safely) is a warning
 * unless `--strict`.
 */
export type Tier = "escape" | "harm" | "weakness" | "convention";

export interface ConsequenceTerms {
  meaning: string;
  /** GitHub's `security-severity` (CVSS scale); none where no weakness was shown (coverage, wording). */
  securitySeverity?: number;
  weaknesses: readonly Cwe[];
  tier: Tier;
}

export const CONSEQUENCES: Readonly<Record<Consequence, ConsequenceTerms>> = {
  "outside changed": {
    meaning: "a file or directory outside the workspace was created, changed or removed (seen on the disk)",
    securitySeverity: 9.1,
    weaknesses: ["CWE-22"],
    tier: "escape",
  },
  "outside read": {
    meaning: "content from outside the workspace reached the model, in an answer or in a file inside",
    securitySeverity: 7.5,
    weaknesses: ["CWE-22", "CWE-200"],
    tier: "escape",
  },
  "approval bypassed": {
    meaning: "a call reached a tool although its approval refused it, its name was not exactly the tool's, or the run had been aborted",
    securitySeverity: 8.1,
    weaknesses: ["CWE-863"],
    tier: "harm",
  },
  "inside destroyed": {
    meaning: "a file inside the workspace lost its content to a call whose contract keeps it",
    securitySeverity: 6.5,
    weaknesses: ["CWE-706"],
    tier: "harm",
  },
  "protected changed": {
    meaning: "an entry the user protected inside the workspace (--protect) was created, changed or removed, or something was made inside it (seen on the disk)",
    securitySeverity: 8.1,
    weaknesses: ["CWE-284", "CWE-22"],
    tier: "harm",
  },
  "protected read": {
    meaning: "content of an entry the user protected inside the workspace (--protect) reached the model, in an answer or in a file it may read",
    securitySeverity: 6.5,
    weaknesses: ["CWE-284", "CWE-200"],
    tier: "harm",
  },
  misreported: {
    meaning: "a call answered success, but what it reported doing is found neither inside the workspace nor outside it (its content went into a device, a FIFO, or nowhere)",
    securitySeverity: 4.3,
    weaknesses: ["CWE-393"],
    tier: "harm",
  },
  "outside revealed": {
    meaning: "an answer told something of the outside: a name, a size, a time, whether a path exists",
    securitySeverity: 5.3,
    weaknesses: ["CWE-200", "CWE-203"],
    tier: "harm",
  },
  "protected revealed": {
    meaning: "an answer told something of an entry the user protected (--protect): the names, sizes or contents inside it",
    securitySeverity: 4.3,
    weaknesses: ["CWE-284", "CWE-203"],
    tier: "harm",
  },
  unavailable: {
    meaning: "a resource limit did not hold: a call hung, flooded its answer, outlived its timeout, or stopped the target",
    securitySeverity: 5.3,
    weaknesses: ["CWE-400"],
    tier: "harm",
  },
  "hardening broken": {
    meaning:
      "a defence broke with no harm seen: a path check accepted what it must refuse, a NUL path was taken for another, a replaced root was followed, an error was hidden, invalid input was acted on, a long read was cut without saying how much",
    securitySeverity: 3.7,
    weaknesses: ["CWE-693"],
    tier: "weakness",
  },
  "not attacked": {
    meaning: "a tool that takes a path was never called by the audit, so nothing is known of it",
    weaknesses: [],
    tier: "weakness",
  },
  "convention differs": {
    meaning:
      "a convention of the reference was departed from with no harm seen: a path it accepts was refused, a path inside was answered otherwise, a limit's notice or a cut read was written its own way, a corpus row was answered otherwise inside the root",
    weaknesses: [],
    tier: "convention",
  },
  "wording differs": {
    meaning: "a text differs from the reference's: safe, and a failure only with --conformance or --strict",
    weaknesses: [],
    tier: "convention",
  },
};

/** What the attacker needs for the failure, least first. */
export type Threat = "the model's input alone" | "a link inside the workspace" | "a special file inside the workspace" | "the root replaced" | "a concurrent process";

export const THREATS: Readonly<Record<Threat, { meaning: string; weaknesses: readonly Cwe[] }>> = {
  "the model's input alone": { meaning: "any tool input the model emits, and nothing else", weaknesses: [] },
  "a link inside the workspace": { meaning: "a symlink or a hardlink inside the workspace: a checked-out repository holds one, or bash made it", weaknesses: ["CWE-59"] },
  "a special file inside the workspace": {
    meaning: "a FIFO, a socket or a device inside the workspace: bash made it (mkfifo needs no privilege), or another process did",
    weaknesses: ["CWE-67"],
  },
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

const ALL = Object.keys(CONSEQUENCES) as Consequence[];

/** A departure from the chapter's conventions: safe, and a warning unless the user asks for strictness. */
export const isConvention = (consequence: Consequence | undefined): boolean => consequence !== undefined && CONSEQUENCES[consequence].tier === "convention";

const TIER_ORDER: readonly Tier[] = ["escape", "harm", "weakness", "convention"];

/** Whether `one` is of a graver tier than `other` (an escape than harm, harm than a broken defence, any of them than a convention). */
export const graverTier = (one: Consequence, other: Consequence): boolean => TIER_ORDER.indexOf(CONSEQUENCES[one].tier) < TIER_ORDER.indexOf(CONSEQUENCES[other].tier);

export const ESCAPES: readonly Consequence[] = ALL.filter((consequence) => CONSEQUENCES[consequence].tier === "escape");

/**
 * Every consequence a guarantee's failure can have, conventions included: what `--strict` and a
 * comparison with a baseline fail on. Wording is not a guarantee's: `--conformance` decides it.
 */
export const STRICT_FAIL_ON: readonly Consequence[] = ALL.filter((consequence) => consequence !== "wording differs");

/**
 * What fails the run unless `--fail-on` or `--strict` says otherwise: every consequence but a
 * convention's. A correct module written otherwise than the chapter passes; a weakness with no harm
 * seen still fails, since the next tree may show the harm.
 */
export const DEFAULT_FAIL_ON: readonly Consequence[] = STRICT_FAIL_ON.filter((consequence) => CONSEQUENCES[consequence].tier !== "convention");

/**
 * The consequences `--fail-on` names (comma-separated, each spelt as reports write it or with `-`
 * for the spaces), with the escapes added: no list can switch them off.
 */
export function parseFailOn(values: readonly string[]): Consequence[] {
  const named = values.flatMap((value) => value.split(",")).map((name) => name.trim().replaceAll("-", " ")).filter((name) => name !== "");
  if (named.length === 0) throw new UsageError(`--fail-on needs at least one consequence: ${STRICT_FAIL_ON.join(", ")}`);
  const unknown = named.filter((name) => !STRICT_FAIL_ON.includes(name as Consequence));
  if (unknown.includes("wording differs")) throw new UsageError("--fail-on: wording differs is not a guarantee's consequence; --conformance makes differing texts fail the run");
  if (unknown.length > 0)
    throw new UsageError(`--fail-on: unknown consequence ${unknown.map((name) => JSON.stringify(name)).join(", ")}; the consequences are ${STRICT_FAIL_ON.join(", ")}`);
  return STRICT_FAIL_ON.filter((consequence) => ESCAPES.includes(consequence) || named.includes(consequence));
}
