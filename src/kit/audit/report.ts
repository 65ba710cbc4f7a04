/**
 * How an audit reads: a table for people, JSON for CI.
 *
 * Promises: one row per property (gate, property, verdict, runs, time); under each failure, the rule,
 * the reason, the shrunk counterexample and the command that replays exactly that case. Known limits
 * are listed as such and do not count as failures. The closing line has the form
 * `audit: N passed, N failed, N skipped`.
 */
import type { PropertyResult } from "./run.js";

export interface AuditReport {
  target: string;
  seed: number;
  runs: number;
  results: PropertyResult[];
}

export interface JsonReport {
  target: string;
  seed: number;
  runs: number;
  results: {
    id: string;
    gate: string;
    kind: "guarantee" | "limit";
    title: string;
    status: PropertyResult["status"];
    runs: number;
    timeMs: number;
    counterexample?: string;
    reason?: string;
    replay?: string;
  }[];
}

/** How to run the audit again, e.g. `npx workspace-gates audit` or `npm run audit --`. */
export type ReplayPrefix = string;

/** The words that name the target on the command line: `[]`, `[MODULE]`, or `--mcp -- COMMAND...`. */
export type TargetWords = readonly string[];

export function replayCommand(prefix: ReplayPrefix, target: TargetWords, result: PropertyResult): string | undefined {
  if (result.status !== "failed") return undefined;
  // Whatever follows `--` belongs to the server's command, so it ends the line.
  const cut = target.includes("--") ? target.indexOf("--") : target.length;
  const parts = [prefix, ...target.slice(0, cut), "--only", result.id, "--seed", String(result.seed)];
  if (result.path !== undefined) parts.push("--path", result.path);
  return [...parts, ...target.slice(cut)].map((word, index) => (index === 0 ? word : shellWord(word))).join(" ");
}

export function isRegression(result: PropertyResult): boolean {
  return result.status === "failed" && result.kind === "guarantee";
}

export function toJson(report: AuditReport, prefix: ReplayPrefix, target: TargetWords): JsonReport {
  return {
    target: report.target,
    seed: report.seed,
    runs: report.runs,
    results: report.results.map((result) => {
      const replay = replayCommand(prefix, target, result);
      return {
        id: result.id,
        gate: result.gate,
        kind: result.kind,
        title: result.title,
        status: result.status,
        runs: result.runs,
        timeMs: result.timeMs,
        ...(result.counterexample === undefined ? {} : { counterexample: result.counterexample }),
        ...(result.reason === undefined ? {} : { reason: result.reason }),
        ...(replay === undefined ? {} : { replay }),
      };
    }),
  };
}

export function renderText(report: AuditReport, prefix: ReplayPrefix, target: TargetWords): string {
  const lines = [`workspace-gates audit of ${report.target} (seed ${report.seed}, ${report.runs} runs per property)`, ""];
  const rows = report.results.map((result) => [result.gate, result.id, verdict(result), String(result.runs), `${(result.timeMs / 1000).toFixed(1)}s`]);
  const header = ["gate", "property", "verdict", "runs", "time"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const format = (row: string[]) => row.map((cell, column) => (column >= 3 ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number))).join("  ").trimEnd();
  lines.push(format(header));
  for (const [index, result] of report.results.entries()) {
    lines.push(format(rows[index] as string[]));
    if (result.status === "failed") lines.push(...failureDetail(result, replayCommand(prefix, target, result)));
    if (result.status === "skipped") lines.push(`    needs ${result.missing?.join(", ")}, which the module does not export`);
    if (result.status === "not applicable") lines.push(`    ${result.reason ?? ""}`);
  }
  const count = (predicate: (result: PropertyResult) => boolean) => report.results.filter(predicate).length;
  const limits = report.results.filter((result) => result.kind === "limit" && result.status === "failed").map((result) => result.id);
  lines.push("");
  if (limits.length > 0) lines.push(`known limits (fail by design, see SECURITY.md): ${limits.join(", ")}`);
  lines.push(
    `audit: ${count((r) => r.status === "passed")} passed, ${count(isRegression)} failed, ${count((r) => r.status === "skipped")} skipped` +
      (count((r) => r.status === "not applicable") > 0 ? `, ${count((r) => r.status === "not applicable")} not applicable` : ""),
  );
  return `${lines.join("\n")}\n`;
}

function verdict(result: PropertyResult): string {
  if (result.kind === "limit") return result.status === "failed" ? "known limit" : result.status === "passed" ? "passed (limit closed)" : result.status;
  return result.status === "failed" ? "FAILED" : result.status;
}

function failureDetail(result: PropertyResult, replay: string | undefined): string[] {
  const indent = (text: string) => text.split("\n").map((line) => `      ${line}`);
  return [
    `    rule: ${result.title}`,
    `    broken: ${result.reason ?? "(no reason given)"}`.split("\n").join("\n      "),
    "    counterexample:",
    ...indent(result.counterexample ?? "(none)"),
    ...(replay === undefined ? [] : [`    replay: ${replay}`]),
  ];
}

function shellWord(text: string): string {
  return /^[\w./@:-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
