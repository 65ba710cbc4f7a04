/**
 * The gallery of real packages as data (docs/peers.json) and as docs/peers.md: per package and
 * version, which guarantees hold, which fail (with the class, the shrunk counterexample and the
 * replay) and which cannot apply. `npm run peers` writes both; a test holds the page to the data.
 */
import { PEERS } from "../fixtures/peers/catalog.js";
import type { PropertyKind } from "../src/kit/audit/runner/property.js";
import type { PropertyStatus } from "../src/kit/audit/runner/run.js";
import type { CoverageRow } from "../src/kit/audit/coverage.js";
import type { AuditTime } from "../src/kit/audit/reports/report.js";
import type { Consequence, Threat } from "../src/kit/findings/findings.js";
import { namedTwins } from "../src/kit/sandbox/root-twins.js";

export const PEERS_DATA_FILE = "docs/peers.json";
export const PEERS_PAGE_FILE = "docs/peers.md";
/** How the data spells the folder `npm run peers` installs into, a shell variable a replay can set. */
export const PEERS_VARIABLE = "$PEERS";

export interface PeerResult {
  id: string;
  kind: PropertyKind;
  status: PropertyStatus;
  /** Calls of each of the package's tools, by its own name. */
  calls: Record<string, number>;
  reason?: string;
  /** Of a failure: what it costs, and what an attacker needs for it (src/kit/findings/findings.ts). */
  consequence?: Consequence;
  threat?: Threat;
  counterexample?: string;
  replay?: string;
}

/** One TOCTOU race of an MCP server (`toctou --mcp`), with its control's verdict. */
export interface PeerRace {
  /** The calls of the write tool: new files and overwrites. */
  writeCalls: number;
  writeEscapes: number;
  swaps: number;
  /** The toctou exit code: 1 escaped, 0 clean and effective, 2 ineffective. */
  exitCode: number;
}

export interface PeerRun {
  name: string;
  version: string;
  kind: "mcp" | "helper";
  /** Why the audit could not run at all (exit 2), when it could not: such a run has no results. */
  unaudited?: string;
  /** The budget, and why, when the package had another than the gallery's: fewer runs, or the default time budget. */
  budget?: { runs: number; why: string } | { time: "default"; why: string };
  /** The audit's own verdict when it was not a pass or a failure: a target too slow to judge at its budget. */
  verdict?: string;
  /** Where the audit's time went (the JSON report's `time`), for a package audited at a time budget. */
  time?: AuditTime;
  /** Every tool the package offers, with what it was taken for and what attacked it (none for a helper without tools). */
  coverage: CoverageRow[];
  results: PeerResult[];
  race?: PeerRace;
}

export interface PeersData {
  seed: number;
  runs: number;
  /** The budget of each race, in seconds. */
  raceSeconds: number;
  peers: PeerRun[];
}

/** The bug class the catalog gives a failure, written from the package's source. */
function classOf(run: PeerRun, id: string): string | undefined {
  return PEERS.find((peer) => peer.name === run.name && peer.version === run.version)?.classes[id];
}

function raceCell(race: PeerRace | undefined): string {
  if (race === undefined) return "not applicable (no tools)";
  if (race.exitCode === 2) return `ineffective (${race.swaps} swaps)`;
  const per10k = race.writeCalls === 0 ? 0 : Math.round((race.writeEscapes / race.writeCalls) * 10_000);
  return `${per10k} (${race.writeEscapes} of ${race.writeCalls})`;
}

const ids = (results: readonly PeerResult[]) => results.map((result) => `\`${result.id}\``).join(", ") || "none";

/**
 * The failures a tool answers for: the tool a failure's reason names (`read_file (probe 2) …`, as an
 * operation's property names the one that broke its rule), or, when it names none, every tool the
 * property called.
 */
function findingsOn(run: PeerRun, tool: string): PeerResult[] {
  return run.results.filter((result) => {
    if (result.kind !== "guarantee" || result.status !== "failed") return false;
    const named = run.coverage.find((row) => (result.reason ?? "").startsWith(`${row.tool} (probe`));
    return named === undefined ? (result.calls[tool] ?? 0) > 0 : named.tool === tool;
  });
}

function verdictCell(row: CoverageRow): string {
  const calls = Object.entries(row.attackedBy).map(([id, count]) => `\`${id}\` (${count})`);
  switch (row.verdict) {
    case "attacked":
      return `attacked by ${calls.join(", ")}`;
    case "not attacked":
      return `**not attacked**: ${row.why}`;
    default:
      return `${row.verdict}: ${row.why}${calls.length === 0 ? "" : `; called by ${calls.join(", ")}`}`;
  }
}

function toolTable(run: PeerRun): string[] {
  if (run.coverage.length === 0) return [];
  return [
    `### \`${run.name}\` ${run.version}: ${run.coverage.length} tools`,
    "",
    "| tool | taken for | verdict (calls per property) | findings on it |",
    "|---|---|---|---|",
    ...run.coverage.map((row) => {
      // An operation's row says how the kit took the tool for it (`by name`); the verdict cell says the rest.
      const how = /^by \w+/.exec(row.why)?.[0];
      const takenFor = how === undefined ? row.plays : `${row.plays} (${how})`;
      const findings = findingsOn(run, row.tool).map((result) => `\`${result.id}\``);
      return `| \`${row.tool}\` | ${takenFor} | ${verdictCell(row).replaceAll("|", "\\|").replaceAll("\n", " ")} | ${findings.join(", ") || "none"} |`;
    }),
    "",
  ];
}

function budgets(data: PeersData): string[] {
  const budgeted = data.peers.filter((run) => run.budget !== undefined);
  if (budgeted.length === 0) return [];
  const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
  const spent = ({ time }: PeerRun) =>
    time === undefined ? "" : `; the audit took ${seconds(time.totalMs)} in all, ${time.serverStarts === undefined ? "" : `${seconds(time.serverStarts.ms)} of it starting ${time.serverStarts.count} servers (some at once), `}a call a median ${time.latencyMs} ms`;
  return [
    `Audited with another budget than ${data.runs} runs per property:`,
    "",
    ...budgeted.map((run) => `- \`${run.name}\`: ${run.budget === undefined ? "" : "runs" in run.budget ? `${run.budget.runs} runs` : "the audit's default time budget (`--time 40`)"}, ${run.budget?.why}${spent(run)}${run.verdict === undefined ? "" : `; its verdict: ${run.verdict}`}`),
    "",
  ];
}

export function renderPeers(data: PeersData): string {
  const guarantees = (run: PeerRun) => run.results.filter((result) => result.kind === "guarantee");
  const controls = data.peers.filter((run) => run.unaudited === undefined && guarantees(run).every((result) => result.status !== "failed"));
  const findings = data.peers.flatMap((run) => guarantees(run).filter((result) => result.status === "failed").map((result) => ({ run, result })));
  const lines = [
    "# Peers: the audit on real packages",
    "",
    `Generated by \`npm run peers\` from \`${PEERS_DATA_FILE}\` (seed ${data.seed}, up to ${data.runs} runs per property); do not edit.`,
    "The packages are installed, pinned, into a folder of their own, never into this package's dependencies;",
    "MCP servers are audited over stdio with `audit --mcp`, containment helpers through the thin adapters in",
    "`fixtures/peers/adapters`, which map the contract onto the package's own calls and check nothing themselves",
    "(each states in its header what the mapping cannot express). The gallery needs the npm registry, so",
    "`npm test` does not run it; `npm run test:registry` drives each adapter through one planted escape the",
    "package must refuse, so an adapter that went around the package's own check would fail there.",
    "",
    "A finding here is a security report about someone else's package: it goes to the maintainer's security",
    "contact before a release of this package publishes it (SECURITY.md). Each is stated as its class, what it",
    "costs and what an attacker needs for it (docs/contract.md, \"What a failure costs\"), and the minimal",
    "counterexample the audit shrank it to, with the command that replays it once `npm run peers` has",
    `installed the package; set \`${PEERS_VARIABLE.slice(1)}\` to the folder it installs into (\`$TMPDIR/workspace-gates-peers\`) first.`,
    "",
    "In a counterexample and a reason, `ws` is the workspace root, `$BOX` the sandbox around it, and `siblingN` the N-th",
    `twin of the root: ${namedTwins("ws").map((name, index) => `sibling${index} = \`${name}\``).join(", ")}.`,
    "",
    `| package | version | reached as | guarantees that hold | guarantees that fail | not applicable | TOCTOU race: write escapes per 10,000 calls (${data.raceSeconds} s) |`,
    "|---|---|---|---|---|---|---|",
    ...data.peers.map((run) => {
      const reached = run.kind === "mcp" ? "MCP server (stdio)" : "adapter module";
      if (run.unaudited !== undefined) return `| \`${run.name}\` | ${run.version} | ${reached} | not audited: ${run.unaudited} | | | |`;
      const held = guarantees(run).filter((result) => result.status === "passed");
      const failed = guarantees(run).filter((result) => result.status === "failed");
      const inapplicable = run.results.filter((result) => result.status === "not-applicable");
      return `| \`${run.name}\` | ${run.version} | ${reached} | ${ids(held)} | ${ids(failed)} | ${ids(inapplicable)} | ${raceCell(run.race)} |`;
    }),
    "",
    "Known limits (`limits.*`) are not findings: every path check fails them by design (SECURITY.md).",
    "The race column is `toctou --mcp` (docs/contract.md): a racer swaps a directory on the written path,",
    "or the written file itself, for a symlink to outside and back, while write calls make new files and",
    "overwrite existing ones (reads and mkdir are raced too; docs/toctou.md). A count is a lower bound on",
    "this machine, not a rate to compare across machines, and \"ineffective\" means the racer or its",
    "control race could not show a window.",
    "",
    ...budgets(data),
    "## Tools, one row each",
    "",
    "Every tool a package offers (an MCP server's `tools/list`, an adapter's tools), with the operation the",
    "audit took it for and how (`by name`, `by schema`, `by mapping`), the properties that called it and how",
    "often, or why none did, and the failures it answers for: the tool a failure names (an operation's",
    "property names the tool that broke its rule), or every tool the failing property called when it names none.",
    "",
    ...data.peers.flatMap(toolTable),
    "## Negative controls",
    "",
    "A package that fails none of the guarantees it was asked is a negative control: the properties that",
    "report the other packages' escapes pass it, so they do not flag a check that holds.",
    "",
    ...(controls.length === 0 ? ["None."] : controls.map((run) => `- \`${run.name}\` ${run.version}: holds ${ids(guarantees(run).filter((result) => result.status === "passed"))}`)),
    "",
    "## Findings",
    "",
    ...(findings.length === 0 ? ["None."] : []),
    ...findings.flatMap(({ run, result }) => [
      `### \`${run.name}\` ${run.version}: \`${result.id}\``,
      "",
      `- class: ${classOf(run, result.id) ?? "not yet classified"}`,
      `- consequence: ${result.consequence ?? "not recorded"}; threat: ${result.threat ?? "not recorded"}`,
      `- broken: ${(result.reason ?? "").split("\n").map((line) => line.trim()).filter((line) => line !== "").join(" ")}`,
      "- counterexample:",
      "",
      "  ```text",
      ...(result.counterexample ?? "(none)").split("\n").map((line) => `  ${line}`),
      "  ```",
      "",
      `- replay: \`${result.replay ?? "(none)"}\``,
      "",
    ]),
    "## Not applicable, and why",
    "",
    ...data.peers.flatMap((run) =>
      run.results.filter((result) => result.status === "not-applicable").map((result) => `- \`${run.name}\`, \`${result.id}\`: ${result.reason ?? ""}`),
    ),
  ];
  return `${lines.join("\n")}\n`;
}
