/**
 * `workspace-gates audit [MODULE] [--time S | --runs N] [--seed N] [--shard K/N] [--json FILE] [--only ID,...] [--path P]`
 *
 * The budget is time by default (`DEFAULT_TIME_SECONDS`, shared equally by the properties; a property
 * capped by `maxRuns`, like the 10 s timeout case, runs its cases on top); `--runs N` asks for exactly
 * N cases per property instead, for replays and for shards that must add up to one run.
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
import type { AuditProperty } from "./property.js";
import { type PropertyResult, runProperty } from "./run.js";
import { SHARD_STRIDE, type Shard, parseShard, shardBlock, timedShardStart } from "./shard.js";
import { type AuditTarget, loadTarget, referenceTarget } from "./target.js";

/** Cases per property with `--runs` and no number; also the floor of the time budget, which the kill matrix holds forks to. */
export const DEFAULT_RUNS = 50;

/**
 * The default budget: what fits, with the 10 s timeout case and start-up, in under a minute on a
 * 2-core machine.
 */
export const DEFAULT_TIME_SECONDS = 40;

const USAGE = `usage: workspace-gates audit [MODULE] [--time S | --runs N] [--seed N] [--shard K/N] [--json FILE] [--baseline FILE] [--only ID[,ID...]] [--path P]

  MODULE       a .js, .mjs or .ts module exporting isInside, workspacePath and/or
               createWorkspaceTools (default: this package's implementation)
  --time S     seconds of cases, shared by the properties, each running at least the
               cases of --runs ${DEFAULT_RUNS} (default ${DEFAULT_TIME_SECONDS}; the one-case timeout property adds 10 s)
  --runs N     exactly N generated cases per property instead (some properties scale it down)
  --shard K/N  run the K-th of N disjoint blocks of cases (merge the reports with
               workspace-gates merge); with --runs, the N shards add up to one run
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
    const selected = PROPERTIES.filter((property) => options.only === undefined || options.only.includes(property.id));
    const timed = selected.filter((property) => property.maxRuns === undefined).length;
    const report: AuditReport = {
      target: target.label,
      seed: options.seed,
      runs: options.runs ?? 0,
      ...(options.runs === undefined ? { timeSeconds: options.time } : {}),
      ...(options.shard === undefined ? {} : { shard: options.shard }),
      results: [],
    };
    for (const property of selected) {
      const floor = Math.max(1, Math.round((options.runs ?? DEFAULT_RUNS) * (property.budgetScale ?? 1)));
      report.results.push(
        options.runs === undefined
          ? await runWithinTime(property, target, options.seed, options.shard === undefined ? 0 : timedShardStart(options.shard), floor, (options.time * 1_000) / Math.max(1, timed))
          : await runProperty(property, target, {
              seed: options.seed,
              ...shardBlock(floor, options.shard ?? { index: 1, count: 1 }),
              ...(options.path === undefined ? {} : { path: options.path }),
            }),
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

/**
 * A time budget that never runs fewer cases than `--runs`' default would: first exactly `floor` cases
 * (the kill matrix holds every fork to dying within those, whatever the machine's speed), then, from
 * the next case of the same stream, as many as the rest of `timeLimitMs` allows.
 */
async function runWithinTime(property: AuditProperty<unknown>, target: AuditTarget, seed: number, firstRun: number, floor: number, timeLimitMs: number): Promise<PropertyResult> {
  const first = await runProperty(property, target, { seed, firstRun, runs: floor });
  const left = timeLimitMs - first.timeMs;
  if (first.status !== "passed" || left <= 0 || property.maxRuns !== undefined) return first;
  const more = await runProperty(property, target, { seed, firstRun: firstRun + floor, runs: SHARD_STRIDE - floor, timeLimitMs: left });
  return { ...more, runs: first.runs + more.runs, timeMs: first.timeMs + more.timeMs };
}

interface AuditArgs {
  module?: string;
  /** Exactly this many cases per property; undefined for a time budget. */
  runs?: number;
  time: number;
  shard?: Shard;
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
      time: { type: "string" },
      shard: { type: "string" },
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
  if (values.runs !== undefined && values.time !== undefined) throw new UsageError("--runs and --time are two budgets: give one");
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  if (values.shard !== undefined && shard === undefined) throw new UsageError(`--shard must be K/N with 1 <= K <= N, got ${JSON.stringify(values.shard)}`);
  if (shard !== undefined && values.seed === undefined) throw new UsageError("--shard needs --seed: every shard must draw from the same stream of cases");
  return {
    ...(positionals[0] === undefined ? {} : { module: positionals[0] }),
    // A replay runs one case: it needs no budget, and must not wait for one.
    ...(values.runs !== undefined || values.path !== undefined ? { runs: positiveInteger("--runs", values.runs, DEFAULT_RUNS) } : {}),
    time: positiveInteger("--time", values.time, DEFAULT_TIME_SECONDS),
    ...(shard === undefined ? {} : { shard }),
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
