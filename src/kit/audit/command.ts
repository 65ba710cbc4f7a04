/**
 * `workspace-gates audit [MODULE] [--runs N] [--seed N] [--json FILE] [--only ID,...] [--path P]`
 *
 * Promises: exit 0 when every guarantee holds (known limits may fail), 1 when any guarantee fails,
 * 2 when the audit cannot run (bad flag, unknown property, a module that fails to load, an unreadable
 * baseline). With `--baseline FILE` the verdict is the comparison instead: exit 1 exactly when a
 * property the baseline passed fails here (a regression), 0 otherwise. Without
 * MODULE it audits the package's own implementation. A failure prints a replay command; with the
 * printed `--seed` and `--path` it runs exactly the shrunk case again.
 */
import { writeFile } from "node:fs/promises";
import { type CliCommand, UsageError, parseCommandArgs } from "../cli-command.js";
import { PROPERTIES } from "./properties/index.js";
import { compareWithBaseline, readBaseline, renderComparison } from "./baseline.js";
import { type AuditReport, isRegression, renderText, toJson } from "./report.js";
import { runProperty } from "./run.js";
import { type AuditTarget, loadTarget, referenceTarget } from "./target.js";

export const DEFAULT_RUNS = 50;

const USAGE = `usage: workspace-gates audit [MODULE] [--runs N] [--seed N] [--json FILE] [--baseline FILE] [--only ID[,ID...]] [--path P]

  MODULE       a .js, .mjs or .ts module exporting isInside, workspacePath,
               createWorkspaceTools and/or runAgent (default: this package's implementation)
  --runs N     generated cases per property (default ${DEFAULT_RUNS}; some properties scale it down)
  --seed N     fast-check seed (default: random, printed)
  --json FILE  also write the results as JSON
  --baseline FILE
               compare with an earlier --json report (e.g. fixtures/baseline.json, the
               reference's); exit 1 only on a regression
  --only IDS   run only these properties (comma-separated)
  --path P     replay one shrunk case (with --seed and a single --only)

properties: ${PROPERTIES.map((property) => property.id).join(", ")}`;

export const auditCommand: CliCommand = {
  name: "audit",
  summary: "run every property against an implementation and report what it fails",
  usage: USAGE,
  async run(argv, io) {
    const options = parseAuditArgs(argv);
    let target: AuditTarget;
    try {
      target = options.module === undefined ? await referenceTarget() : await loadTarget(options.module);
    } catch (error) {
      io.stderr(`audit: cannot load ${options.module ?? "the reference"}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
    let baseline: { file: string; statuses: Awaited<ReturnType<typeof readBaseline>> } | undefined;
    if (options.baseline !== undefined) {
      try {
        baseline = { file: options.baseline, statuses: await readBaseline(options.baseline) };
      } catch (error) {
        io.stderr(`audit: ${error instanceof Error ? error.message : String(error)}\n`);
        return 2;
      }
    }
    const report: AuditReport = { target: target.label, seed: options.seed, runs: options.runs, results: [] };
    for (const property of PROPERTIES) {
      if (options.only !== undefined && !options.only.includes(property.id)) continue;
      const runs = Math.max(1, Math.round(options.runs * (property.budgetScale ?? 1)));
      report.results.push(
        await runProperty(property, target, { seed: options.seed, runs, ...(options.path === undefined ? {} : { path: options.path }) }),
      );
    }
    const prefix = process.env.npm_lifecycle_event === "audit" ? "npm run audit --" : "npx workspace-gates audit";
    io.stdout(renderText(report, prefix, options.module));
    if (options.json !== undefined) await writeFile(options.json, `${JSON.stringify(toJson(report, prefix, options.module), null, 2)}\n`);
    if (baseline === undefined) return report.results.some(isRegression) ? 1 : 0;
    const comparison = compareWithBaseline(baseline.file, baseline.statuses, report.results);
    io.stdout(renderComparison(comparison));
    return comparison.regressions.length > 0 ? 1 : 0;
  },
};

interface AuditArgs {
  module?: string;
  runs: number;
  seed: number;
  json?: string;
  baseline?: string;
  only?: string[];
  path?: string;
}

function parseAuditArgs(argv: readonly string[]): AuditArgs {
  const { values, positionals } = parseCommandArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      runs: { type: "string" },
      seed: { type: "string" },
      json: { type: "string" },
      baseline: { type: "string" },
      only: { type: "string", multiple: true },
      path: { type: "string" },
    },
  });
  if (positionals.length > 1) throw new UsageError(`expected at most one MODULE, got ${positionals.join(" ")}`);
  const only = values.only?.flatMap((ids) => ids.split(",")).filter((id) => id !== "");
  const unknown = only?.filter((id) => !PROPERTIES.some((property) => property.id === id)) ?? [];
  if (unknown.length > 0) throw new UsageError(`unknown property: ${unknown.join(", ")}`);
  if (values.path !== undefined && (values.seed === undefined || only?.length !== 1))
    throw new UsageError("--path replays one case: give it with --seed and exactly one --only");
  return {
    ...(positionals[0] === undefined ? {} : { module: positionals[0] }),
    runs: positiveInteger("--runs", values.runs, DEFAULT_RUNS),
    seed: values.seed === undefined ? Math.floor(Math.random() * 0x7fffffff) : integer("--seed", values.seed),
    ...(values.json === undefined ? {} : { json: values.json }),
    ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
    ...(only === undefined ? {} : { only }),
    ...(values.path === undefined ? {} : { path: values.path }),
  };
}

function integer(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text)) throw new UsageError(`${flag} must be an integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

function positiveInteger(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = integer(flag, text);
  if (value < 1) throw new UsageError(`${flag} must be at least 1, got ${value}`);
  return value;
}
