/**
 * Peers' own test tables as audit properties: `corpus.go` (Go's `os.Root` table) and `corpus.mcp` (the
 * official MCP filesystem server's boundary tests), every row replayed once against the target, in a
 * fresh sandbox per tree row.
 *
 * A row fails when the target's answer is neither upstream's nor one the kit gives and argues for
 * (docs/corpora.md), or when a call changes anything outside the tools' root. A failure names every
 * failing row with its source: "fails the official MCP filesystem server's own sibling-paths case 3".
 * The rows are data in src/kit/corpora/, compiled into the package with the audit that replays them.
 */
import fc from "fast-check";
import type { Tool } from "../../../gates/tool.js";
import { type Corpus, type CorpusRow, type Outcome, type TreeRow, PINNED_TOOL_SETS, describeRow, lexicalAnswer, replayTree } from "../../corpora/corpus.js";
import { type AuditProperty, execute, inSandbox, toolsOf, violation } from "../property.js";
import type { AuditTarget } from "../../operations/target.js";
import { GO_OS_ROOT } from "../../corpora/go-os-root.js";
import { MCP_FILESYSTEM } from "../../corpora/mcp-filesystem.js";

/** Failing rows named per source file in a report; the count says how many there are in all. */
const SHOWN_PER_FILE = 3;

/** An outcome as a verdict a row can be held to: which file an accepted call lands on, or refused. */
const verdictOf = (outcome: Outcome) => (outcome.verdict === "accepted" ? `accepted ${outcome.lands}` : "refused");

/** Upstream's verdict unless it lands outside the tools' real root (a mode the kit refuses), and the kit's. */
function acceptableTreeVerdicts(row: TreeRow, rootReal: string): Set<string> {
  const { upstream } = row;
  const landsInside = upstream.accepts && (rootReal === "" || upstream.lands.startsWith(`${rootReal}/`));
  const kit = PINNED_TOOL_SETS.map((name) => row.kit[name]).filter((answer) => answer.difference?.kind !== "bug");
  return new Set([...(upstream.accepts ? (landsInside ? [`accepted ${upstream.lands}`] : []) : ["refused"]), ...kit.map((answer) => verdictOf(answer.outcome))]);
}

/** Why `row` fails against `target` and whether its call changed the outside, or undefined when its answer is one upstream or the kit gives. */
async function failureOf(target: AuditTarget, row: CorpusRow): Promise<{ why: string; changedOutside?: true } | undefined> {
  if (row.kind === "lexical") {
    const answer = lexicalAnswer(row, target.isInside!);
    return answer === row.upstream || answer === row.kit ? undefined : { why: `isInside answered ${String(answer)}; upstream and the kit answer ${String(row.upstream)}` };
  }
  const createTools = (root: string): Tool[] =>
    Object.values(toolsOf(target, root)).map((tool) => ({ spec: tool.spec, execute: (input: unknown) => execute(tool, input) }));
  const replay = await inSandbox((box) => replayTree(row, box, createTools));
  if (replay.outsideRoot.length > 0) return { why: `${row.tool} changed ${replay.outsideRoot.join(", ")}, outside the tools' root`, changedOutside: true };
  const verdict = verdictOf(replay.outcome);
  const acceptable = acceptableTreeVerdicts(row, replay.rootReal);
  return acceptable.has(verdict) ? undefined : { why: `${row.tool} ${JSON.stringify(row.path)} ${verdict}; upstream or the kit: ${[...acceptable].join(" or ")}` };
}

function corpusProperty(corpus: Corpus, title: string, needs: AuditProperty["needs"]): AuditProperty<null> {
  return {
    id: `corpus.${corpus.id}`,
    gate: "workspacePath",
    kind: "guarantee",
    title,
    needs,
    consequence: "hardening broken",
    // The tables' trees are made of the links their authors found hard.
    threat: () => "a link inside the workspace",
    maxRuns: 1,
    arbitrary: fc.constant(null),
    render: () => `every row of ${corpus.owner} table, in order`,
    async check(target) {
      const failures = new Map<string, string[]>();
      let changedOutside = false;
      for (const row of corpus.rows) {
        const failure = await failureOf(target, row);
        if (failure === undefined) continue;
        changedOutside ||= failure.changedOutside === true;
        failures.set(row.source.file, [...(failures.get(row.source.file) ?? []), `fails ${describeRow(corpus, row)}: ${failure.why}`]);
      }
      const count = [...failures.values()].reduce((sum, lines) => sum + lines.length, 0);
      const shown = [...failures].flatMap(([file, lines]) =>
        lines.length > SHOWN_PER_FILE ? [...lines.slice(0, SHOWN_PER_FILE), `… and ${lines.length - SHOWN_PER_FILE} more rows of ${file}`] : lines,
      );
      // A row whose call changed the outside makes the whole failure that; any other breaks a hardening rule.
      if (count > 0) violation(`${count} of ${corpus.rows.length} rows:\n  ${shown.join("\n  ")}`, changedOutside ? "outsideChanged" : undefined);
    },
  };
}

export const corpusGo = corpusProperty(GO_OS_ROOT, "answers every row of Go's os.Root test table as Go or the kit does", ["createWorkspaceTools"]);
export const corpusMcp = corpusProperty(MCP_FILESYSTEM, "answers every boundary test of the official MCP filesystem server as it or the kit does", ["isInside", "createWorkspaceTools"]);
