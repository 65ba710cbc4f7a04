/**
 * Peers' own test tables as audit properties: `corpus.go` (Go's `os.Root` table) and `corpus.mcp` (the
 * official MCP filesystem server's boundary tests), every row replayed once against the target, in a
 * fresh sandbox per tree row.
 *
 * A row fails when the target's answer is neither upstream's nor one the kit gives and argues for
 * (docs/corpora.md), or when a call changes anything outside the tools' root. A failure names every
 * failing row with its source: "fails the official MCP filesystem server's own sibling-paths case 3".
 * A row refused where upstream or the kit accepts (a lexical row: an inside path called outside), or
 * accepted at another file inside the tools' root, departs from a convention of the table (a warning
 * unless `--strict`); one accepted outside the tools' root (a lexical row: an outside path called
 * inside) breaks a defence; one that changed the outside is an escape. The failure takes the gravest
 * consequence of its rows, and each row says which it showed.
 * The rows are data in src/kit/corpora/, compiled into the package with the audit that replays them.
 */
import fc from "fast-check";
import type { Tool } from "../../../gates/tool.js";
import { type Corpus, type CorpusRow, type Outcome, type TreeRow, PINNED_TOOL_SETS, describeRow, lexicalAnswer, replayTree } from "../../corpora/corpus.js";
import { type AuditProperty, execute, inSandbox, toolsOf, violation } from "../runner/property.js";
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

/** How grave a failing row is: a departure from the table's convention, a broken defence, an escape. */
type RowFailure = { why: string; breach: "convention differs" | "hardening broken" | "outsideChanged" };

/** Why `row` fails against `target` and how gravely, or undefined when its answer is one upstream or the kit gives. */
async function failureOf(target: AuditTarget, row: CorpusRow): Promise<RowFailure | undefined> {
  if (row.kind === "lexical") {
    const answer = lexicalAnswer(row, target.isInside!);
    if (answer === row.upstream || answer === row.kit) return undefined;
    return { why: `isInside answered ${String(answer)}; upstream and the kit answer ${String(row.upstream)}`, breach: answer ? "hardening broken" : "convention differs" };
  }
  const createTools = (root: string): Tool[] =>
    Object.values(toolsOf(target, root)).map((tool) => ({ spec: tool.spec, execute: (input: unknown) => execute(tool, input) }));
  const replay = await inSandbox((box) => replayTree(row, box, createTools));
  if (replay.outsideRoot.length > 0) return { why: `${row.tool} changed ${replay.outsideRoot.join(", ")}, outside the tools' root`, breach: "outsideChanged" };
  const verdict = verdictOf(replay.outcome);
  const acceptable = acceptableTreeVerdicts(row, replay.rootReal);
  if (acceptable.has(verdict)) return undefined;
  const { outcome } = replay;
  const inside = outcome.verdict !== "accepted" || replay.rootReal === "" || outcome.lands.startsWith(`${replay.rootReal}/`);
  return { why: `${row.tool} ${JSON.stringify(row.path)} ${verdict}; upstream or the kit: ${[...acceptable].join(" or ")}`, breach: inside ? "convention differs" : "hardening broken" };
}

/** The breaches, gravest first. */
const GRAVITY: readonly RowFailure["breach"][] = ["outsideChanged", "hardening broken", "convention differs"];

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
      let gravest: RowFailure["breach"] | undefined;
      for (const row of corpus.rows) {
        const failure = await failureOf(target, row);
        if (failure === undefined) continue;
        if (gravest === undefined || GRAVITY.indexOf(failure.breach) < GRAVITY.indexOf(gravest)) gravest = failure.breach;
        const breach = failure.breach === "outsideChanged" ? "outside changed" : failure.breach;
        failures.set(row.source.file, [...(failures.get(row.source.file) ?? []), `fails ${describeRow(corpus, row)}: ${failure.why} (${breach})`]);
      }
      const count = [...failures.values()].reduce((sum, lines) => sum + lines.length, 0);
      const shown = [...failures].flatMap(([file, lines]) =>
        lines.length > SHOWN_PER_FILE ? [...lines.slice(0, SHOWN_PER_FILE), `… and ${lines.length - SHOWN_PER_FILE} more rows of ${file}`] : lines,
      );
      if (count > 0) violation(`${count} of ${corpus.rows.length} rows:\n  ${shown.join("\n  ")}`, gravest);
    },
  };
}

export const corpusGo = corpusProperty(GO_OS_ROOT, "answers every row of Go's os.Root test table as Go or the kit does", ["createWorkspaceTools"]);
export const corpusMcp = corpusProperty(MCP_FILESYSTEM, "answers every boundary test of the official MCP filesystem server as it or the kit does", ["isInside", "createWorkspaceTools"]);
