/**
 * The SARIF 2.1.0 log every command of the kit writes for GitHub code scanning, and the file its
 * results point at.
 *
 * Promises: the log passes the SARIF Multitool's `validate --rule-kind "Sarif;Gh"` with no error
 * (test/support/ci-reports.ts): every rule has a short and a full description and help; every result
 * has a message, a location (a file, and the line `lineNaming` found for it, else its first) and a
 * fingerprint that two runs of the same
 * finding share (the target, the rule and the consequence; not the counterexample, which another seed
 * shrinks otherwise); a rule whose result has a consequence of a weakness carries its
 * `security-severity` and its CWE tags, as code scanning ranks alerts by them. `lineNaming` finds the
 * line of a file that names what failed: a tool where its name is written as a string (`name: "read"`
 * first), an export where it is declared or assigned (then anywhere it is written). A location under the
 * working directory is written relative to it; one elsewhere as a `file:` URI, with the working
 * directory as the checkout path. When suppressions were judged, every result has SARIF
 * `suppressions` (SARIF 2.1.0 §3.27.23: all results or none): one accepted, external suppression with
 * its justification for a finding set aside, none for the others.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { CONSEQUENCES, type Consequence, type Cwe, type Threat } from "./findings.js";
import { VERSION } from "../version.js";

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

const INFORMATION_URI = "https://www.npmjs.com/package/workspace-gates";

/** Where results point when nothing else names a file: the package of the directory the command ran in. */
export const FALLBACK_LOCATION = "package.json";

/** What the results can point at: the user's file, the module, the mapping, the MCP server's command. */
export interface FindingsSources {
  named?: string | undefined;
  module?: string | undefined;
  mapping?: string | undefined;
  /** The MCP server's command: its first word that is a file of the working directory (`server.py`, `./target/release/server`) is the server's code. */
  command?: readonly string[] | undefined;
}

/**
 * The file every result points at, the first there is of: the file the user names
 * (`--sarif-location`), the module under audit, the MCP mapping file, the first word of the MCP
 * server's command that is a regular file below the working directory, `package.json` of the working
 * directory. A result needs one: code scanning refuses a result without a location.
 */
export function findingsFile(sources: FindingsSources, cwd = process.cwd()): string {
  return findingsLocation(sources, cwd).file;
}

/** `findingsFile`, and whether it is only the fallback, which nothing of the run named (the caller says so). */
export function findingsLocation({ named, module, mapping, command }: FindingsSources, cwd = process.cwd()): { file: string; fallback: boolean } {
  const chosen = named ?? module ?? mapping ?? serverFile(command ?? [], cwd);
  const file = chosen ?? FALLBACK_LOCATION;
  const inside = relative(cwd, resolve(cwd, file));
  const path = leaves(inside) ? resolve(cwd, file) : inside;
  return { file: path.split(sep).join("/"), fallback: chosen === undefined };
}

const leaves = (inside: string) => inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside);

/**
 * The first word of a server's command that names a source file below `cwd`: a regular file whose
 * first bytes hold no NUL, so a script (`server.py`) and not a compiled binary (`./target/release/server`,
 * which code scanning could not show). A `{root}` word never does.
 */
function serverFile(command: readonly string[], cwd: string): string | undefined {
  return command.find((word) => {
    if (word.startsWith("-") || word.includes("{root}") || leaves(relative(cwd, resolve(cwd, word)))) return false;
    try {
      if (!statSync(resolve(cwd, word)).isFile()) return false;
      const head = Buffer.alloc(512);
      const descriptor = openSync(resolve(cwd, word), "r");
      try {
        return !head.subarray(0, readSync(descriptor, head, 0, head.length, 0)).includes(0);
      } finally {
        closeSync(descriptor);
      }
    } catch {
      return false;
    }
  });
}

/** What the command says when the results point at the fallback: nothing of the run named a file. */
export function fallbackLocationNote(file: string, flag: string): string {
  return `note: nothing of this run names a file of the repository (no ${flag}, module, mapping, or server file in the working directory), so every SARIF result points at ${file}; name one with ${flag} (the action's sarif-location input)`;
}

export interface SarifRule {
  id: string;
  name: string;
  title: string;
  description: string;
  help: string;
  tags: readonly string[];
  /** The consequence and weaknesses of this run's result of the rule, which rank it. */
  finding?: { consequence: Consequence; weaknesses: readonly Cwe[] };
}

export interface SarifResult {
  ruleId: string;
  level: "error" | "warning" | "note";
  message: string;
  /** The line of the location the result points at (default 1). */
  line?: number;
  consequence: Consequence;
  threat: Threat;
  weaknesses: readonly Cwe[];
  /** The target as the command names it: with the rule and the consequence, what makes a finding the same. */
  target: string;
  /** When suppressions were judged: the one that set this finding aside, or null. */
  suppression?: { justification: string; expires?: string } | null;
  properties: Record<string, unknown>;
}

export interface SarifRun {
  rules: readonly SarifRule[];
  results: readonly SarifResult[];
  /** As `findingsFile` answers it. */
  location: string;
  executionSuccessful: boolean;
  /** The run's property bag: what a reader of the results should see beside them (the audit's coverage). */
  properties?: Record<string, unknown>;
}

/** The tag code scanning shows a CWE by, as CodeQL writes it: `external/cwe/cwe-022`. */
export function cweTag(cwe: Cwe): string {
  return `external/cwe/cwe-${cwe.slice("CWE-".length).padStart(3, "0")}`;
}

/** The fingerprint two runs of one finding share. */
export function findingFingerprint(target: string, ruleId: string, consequence: Consequence): string {
  return createHash("sha256").update(JSON.stringify([target, ruleId, consequence])).digest("hex").slice(0, 32);
}

function suppressionsOf(suppression: SarifResult["suppression"]): object[] {
  if (suppression === undefined || suppression === null) return [];
  const { justification, expires } = suppression;
  return [{ kind: "external", status: "accepted", justification, ...(expires === undefined ? {} : { properties: { expires } }) }];
}

/** What a result is about, as a file may name it: a tool of the target (by its name, a string), or an export of a module (an identifier). */
export interface Named {
  name: string;
  kind: "tool" | "export";
}

/**
 * The first line of `text` that names one of `names`, tried in order, each by its surest spelling
 * first; none when no line does. Comment lines are passed over: a comment that mentions a tool is not
 * where it is made.
 */
export function lineNaming(text: string, names: readonly Named[]): { line: number; name: string } | undefined {
  const lines = text.split("\n").map((line) => (/^\s*(?:\*|\/\/|\/\*)/.test(line) ? "" : line));
  for (const { name, kind } of names) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const spellings =
      kind === "tool"
        ? [new RegExp(`\\bname\\s*:\\s*["'\`]${escaped}["'\`]`), new RegExp(`["'\`]${escaped}["'\`]`)]
        : [new RegExp(`\\b(?:function|const|let|var|class)\\s+${escaped}\\b`), new RegExp(`^\\s*(?:export\\s+)?${escaped}\\s*[:=]`), new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`)];
    for (const spelling of spellings) {
      const index = lines.findIndex((line) => spelling.test(line));
      if (index >= 0) return { line: index + 1, name };
    }
  }
  return undefined;
}

export function toSarifLog(run: SarifRun, cwd = process.cwd()): string {
  const absolute = isAbsolute(run.location);
  const physicalLocation = (line = 1) => ({
    artifactLocation: { uri: absolute ? pathToFileURL(run.location).href : run.location.split("/").map(encodeURIComponent).join("/") },
    region: { startLine: line },
  });
  const rules = run.rules.map((rule) => {
    const severity = rule.finding === undefined ? undefined : CONSEQUENCES[rule.finding.consequence].securitySeverity;
    return {
      id: rule.id,
      name: rule.name,
      shortDescription: { text: rule.title },
      fullDescription: { text: rule.description },
      help: { text: rule.help },
      helpUri: INFORMATION_URI,
      properties: {
        tags: [...(severity === undefined ? [] : ["security"]), ...(rule.finding?.weaknesses ?? []).map(cweTag), ...rule.tags],
        ...(severity === undefined ? {} : { "security-severity": severity.toFixed(1) }),
      },
    };
  });
  const results = run.results.map((result) => ({
    ruleId: result.ruleId,
    ruleIndex: run.rules.findIndex((rule) => rule.id === result.ruleId),
    level: result.level,
    message: { text: result.message },
    locations: [{ physicalLocation: physicalLocation(result.line) }],
    partialFingerprints: { "workspaceGatesFinding/v1": findingFingerprint(result.target, result.ruleId, result.consequence) },
    ...(result.suppression === undefined ? {} : { suppressions: suppressionsOf(result.suppression) }),
    properties: { consequence: result.consequence, threat: result.threat, weaknesses: result.weaknesses, ...result.properties },
  }));
  const log = {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "workspace-gates", version: VERSION, informationUri: INFORMATION_URI, rules } },
        // A location outside the working directory is an absolute URI: code scanning finds the checkout here.
        invocations: [{ executionSuccessful: run.executionSuccessful, ...(absolute ? { workingDirectory: { uri: pathToFileURL(`${cwd}/`).href } } : {}) }],
        results,
        ...(run.properties === undefined ? {} : { properties: run.properties }),
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
