/**
 * docs/corpora.md, rendered from a replay: per corpus and tool set, how many rows agree with upstream,
 * and for every row where a tool set differs, the request, both answers and the reason the row carries.
 *
 * Promises: `observeCorpora` replays every row on every named tool set in a fresh sandbox each (the
 * same `replayTree` the tests and the audit use), and `renderCorporaDoc` is a function of those
 * observations and the rows alone, so a test can hold the committed file to a new replay.
 */
import { isInside } from "../../gates/is-inside.js";
import type { ToolSet } from "../sandbox/tool-sets.js";
import { createSandbox } from "../sandbox/sandbox.js";
import { type Corpus, type CorpusRow, type Difference, type Outcome, type PinnedToolSet, PINNED_TOOL_SETS, agrees, lexicalAnswer, replayTree } from "./corpus.js";

export const CORPORA_DOC = "docs/corpora.md";

/** What each tool set answered, by row id; lexical rows answer once for all (isInside is shared). */
export type Observations = ReadonlyMap<string, Readonly<Record<PinnedToolSet, boolean | Outcome>>>;

export async function observeCorpora(corpora: readonly Corpus[], toolSets: ReadonlyMap<string, ToolSet>): Promise<Observations> {
  const observed = new Map<string, Record<PinnedToolSet, boolean | Outcome>>();
  for (const corpus of corpora)
    for (const row of corpus.rows) {
      if (row.kind === "lexical") {
        const answer = lexicalAnswer(row, isInside);
        observed.set(row.id, { chapter: answer, verified: answer });
        continue;
      }
      const answers = {} as Record<PinnedToolSet, Outcome>;
      for (const name of PINNED_TOOL_SETS) {
        const box = await createSandbox("workspace-gates-corpora-");
        try {
          answers[name] = (await replayTree(row, box, toolSets.get(name)!.create)).outcome;
        } finally {
          await box.dispose();
        }
      }
      observed.set(row.id, answers);
    }
  return observed;
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
// Escaped like a JS string, non-ASCII included, so `e\u0301` and `\u00e9` read as the two names they are.
const code = (text: string) =>
  `\`${JSON.stringify(text)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)}\``;

function answerText(answer: boolean | Outcome): string {
  if (typeof answer === "boolean") return answer ? "inside" : "outside";
  if (answer.verdict === "accepted") return `accepts, lands on ${code(answer.lands)}`;
  return answer.verdict === "escape" ? "refuses (escape)" : `refuses (${cell(answer.message)})`;
}

function upstreamText(row: CorpusRow): string {
  if (row.kind === "lexical") return answerText(row.upstream);
  return row.upstream.accepts ? `accepts, lands on ${code(row.upstream.lands)}` : `refuses (${cell(row.upstream.reason)})`;
}

function differenceText(difference: Difference | undefined): string {
  if (difference === undefined) return "(no reason recorded)";
  if (difference.kind === "design") return `design: ${difference.argument}`;
  return `${difference.kind}: ${difference.issue}`;
}

function requestText(row: CorpusRow): string {
  if (row.kind === "lexical") return `isInside(${row.roots.map(code).join(" or ")}, ${code(row.path)}, ${row.flavour})`;
  return `${row.tool} ${code(row.path)}${row.root === "" ? "" : `, root ${code(row.root)}`}`;
}

function reasonsOf(row: CorpusRow, answers: Readonly<Record<PinnedToolSet, boolean | Outcome>>): string {
  if (row.kind === "lexical") return differenceText(row.difference);
  const reasons = PINNED_TOOL_SETS.filter((name) => !agrees(row, answers[name])).map((name) => ({ name, text: differenceText(row.kit[name].difference) }));
  if (reasons.length === PINNED_TOOL_SETS.length && reasons.every((reason) => reason.text === reasons[0]?.text)) return cell(reasons[0]?.text ?? "");
  return reasons.map((reason) => `${reason.name}: ${cell(reason.text)}`).join("<br>");
}

function corpusSection(corpus: Corpus, observed: Observations): string {
  const answersOf = (row: CorpusRow) => {
    const answers = observed.get(row.id);
    if (answers === undefined) throw new Error(`no observation for ${row.id}`);
    return answers;
  };
  const files = [...new Map(corpus.rows.map((row) => [row.source.file, row.source.commit])).entries()];
  const counts = PINNED_TOOL_SETS.map((name) => {
    const agreeing = corpus.rows.filter((row) => agrees(row, answersOf(row)[name])).length;
    return `| ${name} | ${corpus.rows.length} | ${agreeing} | ${corpus.rows.length - agreeing} |`;
  });
  const differing = corpus.rows.filter((row) => PINNED_TOOL_SETS.some((name) => !agrees(row, answersOf(row)[name])));
  const lines = [
    `## ${corpus.owner.replace(/'s own$/, "").replace(/^./, (first) => first.toUpperCase())} (\`corpus.${corpus.id}\`)`,
    "",
    `Rows from ${corpus.repository}: ${files.map(([file, commit]) => `\`${file}\` @ \`${commit.slice(0, 12)}\``).join(", ")}.`,
    "",
    "| tool set | rows | agree with upstream | differ |",
    "|---|---|---|---|",
    ...counts,
    "",
    `### Every difference (${differing.length} rows)`,
    "",
    "| row | upstream test | request | upstream | chapter | verified | why |",
    "|---|---|---|---|---|---|---|",
    ...differing.map((row) => {
      const answers = answersOf(row);
      return `| ${row.id} | ${cell(row.source.test)} | ${cell(requestText(row))} | ${upstreamText(row)} | ${answerText(answers.chapter)} | ${answerText(answers.verified)} | ${reasonsOf(row, answers)} |`;
    }),
  ];
  if (corpus.notCarried.length > 0)
    lines.push("", "### Not carried over", "", ...corpus.notCarried.map(({ source, reason }) => `- \`${source.file}\` "${source.test}": ${reason}.`));
  return lines.join("\n");
}

function verifiedOnlyRefusals(corpora: readonly Corpus[], observed: Observations): string {
  const rows = corpora.flatMap((corpus) =>
    corpus.rows.filter((row) => {
      const answers = observed.get(row.id);
      return row.kind === "tree" && answers !== undefined && (answers.chapter as Outcome).verdict === "accepted" && (answers.verified as Outcome).verdict !== "accepted";
    }),
  );
  return [
    "## What the verified tools refuse that the chapter's accept",
    "",
    "Every such row, from both corpora (SECURITY.md states each refusal with its test):",
    "",
    ...rows.map((row) => `- ${row.id} (${cell(row.source.test)}): ${cell(requestText(row))}. ${row.kind === "tree" ? row.kit.verified.why : ""}.`),
  ].join("\n");
}

export function renderCorporaDoc(corpora: readonly Corpus[], observed: Observations): string {
  return `${[
    "# Peers' own tests, replayed",
    "",
    "<!-- Generated by `npm run corpora-doc` from a replay of src/kit/corpora/; test/corpora.test.ts holds this file to a new replay. -->",
    "",
    "A security kit earns trust when it agrees with what the most used tools in its field test for, and",
    "explains every place where it does not. Each corpus below is a peer's own test table, carried over as",
    "data (inputs and verdicts, never code), replayed on both tool sets (`chapter`: `createWorkspaceTools`;",
    "`verified`: `createVerifiedWorkspaceTools`) and run by `workspace-gates audit` against any target as",
    "the properties `corpus.go` and `corpus.mcp`. A row agrees when both refuse, or both accept and land on",
    "the same file; string rows (`isInside`) answer the same for both tool sets. A target fails a row when",
    "it answers neither as upstream nor as the kit, or changes anything outside the tools' root.",
    "",
    ...corpora.map((corpus) => `${corpusSection(corpus, observed)}\n`),
    verifiedOnlyRefusals(corpora, observed),
  ].join("\n")}\n`;
}
