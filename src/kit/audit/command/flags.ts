/**
 * The flags of `workspace-gates audit`: the usage text every `--help` and usage error prints, and
 * `parseAuditArgs`, which turns argv into the options of one audit or refuses it with a `UsageError`
 * naming the flag and the rule (a flag of a run beside `--list-tools`, two budgets, two verdicts).
 */
import { UsageError, closest, parseCommandArgs } from "../../cli-command.js";
import { DEFAULT_FAIL_ON, ESCAPES, STRICT_FAIL_ON, type Consequence, parseFailOn } from "../../findings/findings.js";
import { splitAtServerCommand } from "../../mcp/target.js";
import { PROPERTIES } from "../properties/index.js";
import { DEFAULT_CASE_TIMEOUT_MS } from "../runner/run.js";
import { type Shard, parseShard } from "../runner/shard.js";
import { type ProtectedPattern, ProtectPatternError, parseProtectPatterns } from "../../operations/protected-paths.js";
import { DEFAULT_RUNS, DEFAULT_TIME_SECONDS } from "./budget.js";

export const SYNOPSIS = "workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [flags]";

export const USAGE = `usage: workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [--time S [--max-time S] | --runs N] [--seed N]
                             [--shard K/N] [--json FILE] [--junit FILE] [--sarif FILE [--sarif-location FILE]] [--html FILE]
                             [--strict | --fail-on C[,C...] | --baseline FILE] [--suppressions FILE]
                             [--only ID[,ID...]] [--exclude-tool NAME[,NAME...]] [--path P] [--conformance]
                             [--timeout MS] [--regression-test DIR] [--protect PATTERN[,PATTERN...]]
       workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [--exclude-tool NAME[,NAME...]] --list-tools

  MODULE       a .js, .mjs or .ts module exporting isInside, workspacePath, createWorkspaceTools
               and/or runAgent (default: this package's implementation; docs/contract.md)
  --mcp -- COMMAND...
               audit the MCP server that COMMAND starts over stdio, one per workspace
               root: {root} in COMMAND is replaced by the root, or the root is appended
  --mapping FILE
               which MCP tools play read and write (default: those of
               @modelcontextprotocol/server-filesystem; format in docs/contract.md)
  --time S     seconds of cases, shared by the properties that run, each running at least the
               runs of --runs ${DEFAULT_RUNS} (default ${DEFAULT_TIME_SECONDS}; the one-case timeout property adds 10 s);
               those runs always run, so a busy machine takes longer, never judges less
  --max-time S stop the audit after S seconds of wall time, however busy the machine (default:
               no cap); a property whose runs it cut gets no verdict, and the run exits 2
  --runs N     exactly N generated runs per property instead (some properties scale it down;
               a run of a tree-based property is one tree and up to 64 probes, each a case)
  --shard K/N  run the K-th of N disjoint blocks of runs (merge the reports with
               workspace-gates merge); with --runs, the N shards add up to one run
  --seed N     fast-check seed (default: random, printed)
  --json FILE  also write the results as JSON (schemaVersion, tool version, summary counts)
  --junit FILE also write JUnit XML: one test case per property
  --sarif FILE also write SARIF 2.1.0 (GitHub code scanning): one result per failure
  --html FILE  also write a page to read in a browser, one self-contained file: the verdict by
               consequence, the coverage, each failure with its counterexample drawn and its replay
  --sarif-location FILE
               the file every SARIF result points at (default: MODULE, else the --mapping
               file, else the server's file in COMMAND, else package.json of the working
               directory, said on stderr)
  --strict     fail on departures from the chapter's conventions and wording too (by default they
               are warnings: a correct module written otherwise passes)
  --fail-on CONSEQUENCES
               the consequences whose failures fail the run (comma-separated; default:
               ${DEFAULT_FAIL_ON.join(", ")}); ${ESCAPES.join(" and ")} always do
  --suppressions FILE
               set aside the findings whose fingerprints FILE lists, each with its reason and
               an optional expiry (format in docs/contract.md); every run says what each did
  --baseline FILE
               compare with an earlier --json report (e.g. fixtures/baseline.json, the
               reference's); exit 1 only on a regression
  --only IDS   run only these properties (comma-separated); coverage then judges only the
               tools of the operations they attack
  --exclude-tool NAMES
               never call these tools of the target, and say so in every report: a tool
               that takes a path and that nothing attacked fails the audit unless excluded
  --protect PATTERNS
               entries inside the workspace the tools promise never to read, change or reveal:
               gitignore-style patterns relative to the root (comma-separated, repeatable; added to
               the mapping's protect), which the protected.* properties attack at every depth
  --path P     replay one shrunk run (with --seed and a single --only)
  --conformance
               fail the run when a text differs from the reference's (conformance properties; --strict does too)
  --timeout MS a run (a tree and all its probes) that takes longer fails as a hang (default ${DEFAULT_CASE_TIMEOUT_MS})
  --regression-test DIR
               write, for each failure, DIR/<property>.test.mjs (DIR made if missing): a node:test file that lays
               out its counterexample and makes its calls again, failing until the bug is fixed
  --list-tools start the target, print how the audit takes each tool (operation, decided by its
               name, its schema or the mapping, its argument for each role, or why none), and stop

properties: ${PROPERTIES.map((property) => property.id).join(", ")}`;

export interface AuditArgs {
  module?: string;
  mcp?: { command: string[]; mapping?: string };
  /** Exactly this many runs per property; undefined for a time budget. */
  runs?: number;
  time: number;
  /** `--max-time`: the wall time, in seconds, past which no call starts. */
  maxTime?: number;
  shard?: Shard;
  seed: number;
  json?: string;
  junit?: string;
  sarif?: string;
  sarifLocation?: string;
  html?: string;
  failOn: Consequence[];
  baseline?: string;
  suppressions?: string;
  only?: string[];
  excludeTools: string[];
  path?: string;
  conformance: boolean;
  timeoutMs: number;
  /** Print how the target's tools are taken, and stop. */
  listTools: boolean;
  /** The directory each failure's regression test is written into. */
  regressionTest?: string;
  /** What `--protect` names (operations/protected-paths.ts). */
  protect?: ProtectedPattern[];
}
export function parseAuditArgs(argv: readonly string[]): AuditArgs {
  const { flags, command = [] } = splitAtServerCommand(argv);
  const { values, positionals } = parseCommandArgs({
    args: flags,
    allowPositionals: true,
    options: {
      runs: { type: "string" },
      time: { type: "string" },
      "max-time": { type: "string" },
      shard: { type: "string" },
      seed: { type: "string" },
      json: { type: "string" },
      junit: { type: "string" },
      sarif: { type: "string" },
      "sarif-location": { type: "string" },
      html: { type: "string" },
      "fail-on": { type: "string", multiple: true },
      strict: { type: "boolean" },
      baseline: { type: "string" },
      suppressions: { type: "string" },
      only: { type: "string", multiple: true },
      "exclude-tool": { type: "string", multiple: true },
      path: { type: "string" },
      conformance: { type: "boolean" },
      timeout: { type: "string" },
      mcp: { type: "boolean" },
      mapping: { type: "string" },
      "list-tools": { type: "boolean" },
      "regression-test": { type: "string" },
      protect: { type: "string", multiple: true },
    },
  });
  if (values["list-tools"] === true) refuseBesideListTools(values);
  if (values.mcp === true && positionals.length > 0) throw new UsageError(`--mcp audits a server, not a MODULE: got ${positionals.join(" ")}`);
  if (values.mcp === true && command.length === 0) throw new UsageError("--mcp needs the server's command after --, e.g. --mcp -- npx -y @modelcontextprotocol/server-filesystem {root}");
  if (values.mcp !== true && flags.length < argv.length) throw new UsageError("a command after -- is for --mcp");
  if (values.mcp !== true && values.mapping !== undefined) throw new UsageError("--mapping is for --mcp");
  if (positionals.length > 1) throw new UsageError(`expected at most one MODULE, got ${positionals.join(" ")}`);
  const only = values.only?.flatMap((ids) => ids.split(",")).filter((id) => id !== "");
  const unknown = only?.filter((id) => !PROPERTIES.some((property) => property.id === id)) ?? [];
  const ids = PROPERTIES.map((property) => property.id);
  const named = (id: string) => `${id}${closest(id, ids) === undefined ? "" : ` (did you mean ${closest(id, ids)}?)`}`;
  if (unknown.length > 0) throw new UsageError(`unknown property: ${unknown.map(named).join(", ")}`);
  if (values.path !== undefined && (values.seed === undefined || only?.length !== 1))
    throw new UsageError("--path replays one run: give it with --seed and exactly one --only");
  if (values.runs !== undefined && values.time !== undefined) throw new UsageError("--runs and --time are two budgets: give one");
  const time = positiveInteger("--time", values.time, DEFAULT_TIME_SECONDS);
  const maxTime = values["max-time"] === undefined ? undefined : positiveInteger("--max-time", values["max-time"], 0);
  if (maxTime !== undefined && (values.runs !== undefined || values.path !== undefined)) throw new UsageError("--max-time caps a time budget: give it without --runs or --path");
  if (maxTime !== undefined && maxTime < time) throw new UsageError(`--max-time must be at least --time (${time}), got ${maxTime}: a cap below the budget would cut every audit`);
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  if (values.shard !== undefined && shard === undefined) throw new UsageError(`--shard must be K/N with 1 <= K <= N, got ${JSON.stringify(values.shard)}`);
  if (shard !== undefined && values.seed === undefined) throw new UsageError("--shard needs --seed: every shard must draw from the same stream of runs");
  if (values["sarif-location"] !== undefined && values.sarif === undefined) throw new UsageError("--sarif-location says where SARIF results point: give it with --sarif");
  if (values["fail-on"] !== undefined && values.baseline !== undefined)
    throw new UsageError("--fail-on and --baseline are two verdicts: give one (against a baseline, a regression and an escape fail the run)");
  if (values.strict === true && values["fail-on"] !== undefined) throw new UsageError("--strict and --fail-on are two verdicts: give one (--strict fails on every consequence)");
  return {
    ...(positionals[0] === undefined ? {} : { module: positionals[0] }),
    ...(values.mcp === true ? { mcp: { command, ...(values.mapping === undefined ? {} : { mapping: values.mapping }) } } : {}),
    // A replay is one run: it needs no budget, and must not wait for one.
    ...(values.runs !== undefined || values.path !== undefined ? { runs: positiveInteger("--runs", values.runs, DEFAULT_RUNS) } : {}),
    time,
    ...(maxTime === undefined ? {} : { maxTime }),
    ...(shard === undefined ? {} : { shard }),
    seed: values.seed === undefined ? Math.floor(Math.random() * 0x7fffffff) : integer("--seed", values.seed),
    ...(values.json === undefined ? {} : { json: values.json }),
    ...(values.junit === undefined ? {} : { junit: values.junit }),
    ...(values.sarif === undefined ? {} : { sarif: values.sarif }),
    ...(values["sarif-location"] === undefined ? {} : { sarifLocation: values["sarif-location"] }),
    ...(values.html === undefined ? {} : { html: values.html }),
    // Against a baseline every status counts, conventions included: the report says so too.
    failOn: values["fail-on"] !== undefined ? parseFailOn(values["fail-on"]) : values.strict === true || values.baseline !== undefined ? [...STRICT_FAIL_ON] : [...DEFAULT_FAIL_ON],
    ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
    ...(values.suppressions === undefined ? {} : { suppressions: values.suppressions }),
    ...(only === undefined ? {} : { only }),
    excludeTools: (values["exclude-tool"] ?? []).flatMap((names) => names.split(",")).filter((name) => name !== ""),
    ...(values.path === undefined ? {} : { path: values.path }),
    conformance: values.conformance === true || values.strict === true,
    timeoutMs: positiveInteger("--timeout", values.timeout, DEFAULT_CASE_TIMEOUT_MS),
    listTools: values["list-tools"] === true,
    ...(values["regression-test"] === undefined ? {} : { regressionTest: values["regression-test"] }),
    ...(values.protect === undefined ? {} : { protect: protectedPatterns(values.protect) }),
  };
}

/** `--protect`'s patterns; a pattern the audit cannot take as meant is a usage error naming it. */
function protectedPatterns(values: readonly string[]): ProtectedPattern[] {
  try {
    return parseProtectPatterns(values, "--protect");
  } catch (error) {
    if (error instanceof ProtectPatternError) throw new UsageError(error.message);
    throw error;
  }
}

/** The flags of a target (MODULE, --mcp, --mapping, --exclude-tool) go with --list-tools; a flag of a run would be ignored, so it is refused. */
function refuseBesideListTools(values: Record<string, unknown>): void {
  const ofTheTarget = new Set(["list-tools", "mcp", "mapping", "exclude-tool"]);
  const others = Object.keys(values).filter((flag) => !ofTheTarget.has(flag));
  if (others.length > 0) throw new UsageError(`--list-tools starts the target and stops: it takes no ${others.map((flag) => `--${flag}`).join(", ")}`);
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
