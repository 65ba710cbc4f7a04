/**
 * Suppressions: findings a team has accepted one by one, each with its reason, read from a file the
 * command line names (`--suppressions FILE`), never from anywhere the audited agent could write.
 *
 * Promises: the file is `{ "suppressions": [{ "fingerprint", "reason", "expires"? }] }`; an entry names
 * one finding by its fingerprint (sarif.ts, `findingFingerprint`: the target, the rule and the
 * consequence, the same at every seed), says why in a reason that is not blank, and may end on a date
 * (`expires`, YYYY-MM-DD: it applies through that day, UTC). A file of any other shape (an unknown
 * field, a fingerprint that is not 32 hex digits, a date that does not exist, one fingerprint twice) is
 * refused whole, naming the file, the entry and the field. An entry that names an escape sets it aside
 * only with an expiry: an escape may be accepted for a while, never for good. Judging a run's findings
 * says which entries applied, which expired, which were refused and which matched nothing.
 * Does not promise: that a reason is true; reviewing the file is the team's.
 */
import { readFile } from "node:fs/promises";
import { CONSEQUENCES, type Consequence } from "./findings.js";

export interface Suppression {
  fingerprint: string;
  reason: string;
  /** The last day (UTC, YYYY-MM-DD) it applies. */
  expires?: string;
}

export interface SuppressionsFile {
  file: string;
  entries: readonly Suppression[];
}

/** A suppressions file that cannot be used as it is. */
export class SuppressionsError extends Error {}

const FINGERPRINT = /^[0-9a-f]{32}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export async function readSuppressions(file: string): Promise<SuppressionsFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new SuppressionsError(`cannot read --suppressions ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseSuppressions(file, text);
}

export function parseSuppressions(file: string, text: string): SuppressionsFile {
  const refuse = (why: string): never => {
    throw new SuppressionsError(`--suppressions ${file}: ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return refuse(`not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.suppressions)) return refuse('expected { "suppressions": [ … ] }');
  const extra = Object.keys(parsed).filter((key) => key !== "suppressions");
  if (extra.length > 0) refuse(`unknown field ${extra.map((key) => JSON.stringify(key)).join(", ")}`);
  const seen = new Set<string>();
  const entries = parsed.suppressions.map((entry: unknown, index): Suppression => {
    const at = `entry ${index + 1}`;
    if (!isRecord(entry)) return refuse(`${at} is not an object`);
    const unknown = Object.keys(entry).filter((key) => !["fingerprint", "reason", "expires"].includes(key));
    if (unknown.length > 0) refuse(`${at}: unknown field ${unknown.map((key) => JSON.stringify(key)).join(", ")} (fields: fingerprint, reason, expires)`);
    const { fingerprint, reason, expires } = entry;
    if (typeof fingerprint !== "string" || !FINGERPRINT.test(fingerprint)) refuse(`${at}: fingerprint must be the 32 hex digits a report prints, got ${JSON.stringify(fingerprint)}`);
    if (typeof reason !== "string" || reason.trim() === "") refuse(`${at}: reason must say why the finding is accepted`);
    if (expires !== undefined && (typeof expires !== "string" || !isDate(expires))) refuse(`${at}: expires must be a date, YYYY-MM-DD, got ${JSON.stringify(expires)}`);
    if (seen.has(fingerprint as string)) refuse(`${at}: fingerprint ${String(fingerprint)} is given twice`);
    seen.add(fingerprint as string);
    return { fingerprint: fingerprint as string, reason: reason as string, ...(expires === undefined ? {} : { expires: expires as string }) };
  });
  return { file, entries };
}

/** What the entries did to one run's findings. */
export interface SuppressionOutcome {
  file: string;
  /** Entries that set a finding of this run aside. */
  applied: Suppression[];
  /** Entries past their date: the finding they name counts again. */
  expired: Suppression[];
  /** Entries that name an escape and have no expiry: not applied. */
  refused: Suppression[];
  /** Entries that matched no finding of this run. */
  unused: Suppression[];
}

/** A finding as an entry names it. */
export interface Finding {
  fingerprint: string;
  consequence: Consequence;
}

/** Which entries set aside which of `findings` on `today` (YYYY-MM-DD, UTC). */
export function judgeSuppressions({ file, entries }: SuppressionsFile, findings: readonly Finding[], today: string): SuppressionOutcome {
  const outcome: SuppressionOutcome = { file, applied: [], expired: [], refused: [], unused: [] };
  for (const entry of entries) {
    const finding = findings.find((candidate) => candidate.fingerprint === entry.fingerprint);
    if (entry.expires !== undefined && entry.expires < today) outcome.expired.push(entry);
    else if (finding === undefined) outcome.unused.push(entry);
    else if (CONSEQUENCES[finding.consequence].tier === "escape" && entry.expires === undefined) outcome.refused.push(entry);
    else outcome.applied.push(entry);
  }
  return outcome;
}

/** Today's date as entries write it. */
export function today(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (match === null) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
