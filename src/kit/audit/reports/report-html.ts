/**
 * The audit as one page a person reads (`--html FILE`), written from the JSON report as JUnit and SARIF
 * are (report-formats.ts), so that `merge` writes it for shards as `audit` does for a run.
 *
 * Promises: one self-contained file: inline CSS and SVG, system fonts, nothing fetched, no script but
 * each replay's copy button's inline handler (the page reads the same without it); every text escaped.
 * It shows the verdict (each result's word as the text report gives it, the failures by consequence,
 * with severity and whether they fail the run), the results (those not applicable to the target folded
 * under one line), the coverage
 * (each tool the target offers against each property that called it, with the calls), and each
 * failure: its rule, consequence and threat, the reason, its counterexample drawn from the case's data
 * (the workspace and its entries, the neighbours its links reach, each link that crosses the boundary
 * as an arrow from its entry to the neighbour, and each call that leaves drawn whole, over as many
 * lines as it needs), how the tools were made and what else was set up, its calls with the one the
 * rule broke at marked, and the replay command with a button that copies it; failures of one broken
 * check (their gate) grouped under it when there are two or more, with the counterexample paths they
 * share named; then the legend. A counterexample that is no case of calls is shown as its text.
 */
import { CONSEQUENCES, type Consequence } from "../../findings/findings.js";
import { type Counterexample, SPELLINGS } from "../runner/counterexample.js";
import type { JsonReport, JsonResult } from "./report.js";
import { failsRun, verdict } from "./verdict.js";
import { entryLine } from "../../sandbox/tree.js";
import { VERSION } from "../../version.js";
import { escapeMarkup } from "../../markup.js";

export function toHtml(report: JsonReport): string {
  const failed = report.results.filter((result) => result.status === "failed");
  const failing = failed.filter((result) => failsRun(result, report));
  const title = `workspace-gates audit of ${report.target}`;
  const budget = report.timeSeconds === undefined ? `--runs ${report.runs}` : `${report.timeSeconds} s`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeMarkup(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${escapeMarkup(title)}</h1>
<p class="meta">workspace-gates ${escapeMarkup(report.tool?.version ?? VERSION)} · seed ${report.seed} · ${escapeMarkup(budget)}${report.shard === undefined ? "" : ` · shard ${report.shard.index}/${report.shard.count}`}${report.interrupted === undefined ? "" : ` · <strong>interrupted: ${escapeMarkup(report.interrupted)}</strong>`}</p>
<p class="verdict ${failing.length > 0 ? "fails" : "holds"}" data-verdict>${failing.length > 0 ? `${failing.length} failure${failing.length === 1 ? "" : "s"} fail${failing.length === 1 ? "s" : ""} the run` : "nothing fails the run"}: ${escapeMarkup(counts(report))}</p>
</header>
<main>
${byConsequence(report, failed)}
${results(report)}
${coverage(report)}
<section id="findings">
<h2>Findings</h2>
${failed.length === 0 ? "<p>No property failed.</p>" : groupedFindings(report, failed)}
</section>
${report.legend === undefined ? "" : `<section id="legend"><h2>Legend</h2><pre>${escapeMarkup(report.legend.join("\n"))}</pre></section>`}
</main>
</body>
</html>
`;
}

function counts({ summary }: JsonReport): string {
  const parts: [number, string][] = [
    [summary.passed, "passed"],
    [summary.failed, "failed"],
    [summary.warnings, summary.warnings === 1 ? "warning" : "warnings"],
    [summary.suppressed, "suppressed"],
    [summary.knownLimits, summary.knownLimits === 1 ? "known limit" : "known limits"],
    [summary.conformanceDiffers, summary.conformanceDiffers === 1 ? "text differs" : "texts differ"],
    [summary.unjudged, "unjudged"],
    [summary.skipped, "skipped"],
    [summary.notApplicable, "not applicable"],
  ];
  return parts.filter(([count], index) => count > 0 || index < 2).map(([count, word]) => `${count} ${word}`).join(", ");
}

/** The failures grouped by consequence, most severe first: what each costs, and which fail the run. */
function byConsequence(report: JsonReport, failed: readonly JsonResult[]): string {
  const rows = (Object.keys(CONSEQUENCES) as Consequence[]).flatMap((consequence) => {
    const these = failed.filter((result) => result.consequence === consequence);
    if (these.length === 0) return [];
    const [fails, others] = [these.filter((result) => failsRun(result, report)), these.filter((result) => !failsRun(result, report))];
    const list = (group: readonly JsonResult[]) => group.map((result) => `<a href="#${anchor(result.id)}">${escapeMarkup(result.id)}</a> <span class="word">${escapeMarkup(verdict(result, report))}</span>`).join("<br>");
    const terms = CONSEQUENCES[consequence];
    return [
      `<tr class="${fails.length > 0 ? "fails" : "passes"}" data-consequence="${escapeMarkup(consequence)}"><th>${escapeMarkup(consequence)}</th><td>${escapeMarkup(terms.meaning)}</td><td class="n">${terms.securitySeverity?.toFixed(1) ?? "–"}</td><td>${list(fails)}</td><td>${list(others)}</td></tr>`,
    ];
  });
  if (rows.length === 0) return `<section id="verdict"><h2>Verdict by consequence</h2><p>No failure.</p></section>`;
  return `<section id="verdict"><h2>Verdict by consequence</h2>
<table><thead><tr><th>consequence</th><th>what the user lost, as observed</th><th>severity</th><th>fail the run</th><th>do not fail the run</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table></section>`;
}

function results(report: JsonReport): string {
  const row = (result: JsonResult) => {
    const word = verdict(result, report);
    const name = result.status === "failed" ? `<a href="#${anchor(result.id)}">${escapeMarkup(result.id)}</a>` : escapeMarkup(result.id);
    const why = result.status === "skipped" ? `needs ${(result.missing ?? []).join(", ")}` : result.status === "not-applicable" ? (result.reason ?? "") : "";
    return `<tr class="${failsRun(result, report) ? "fails" : result.status}"><td>${escapeMarkup(result.gate)}</td><td>${name}</td><td>${escapeMarkup(word)}</td><td class="n">${result.runs}</td><td class="n">${result.cases}</td><td class="n">${(result.timeMs / 1000).toFixed(1)} s</td><td>${escapeMarkup(why)}</td></tr>`;
  };
  const head = "<thead><tr><th>gate</th><th>property</th><th>verdict</th><th>runs</th><th>cases</th><th>time</th><th></th></tr></thead>";
  const applicable = report.results.filter((result) => result.status !== "not-applicable");
  // What cannot apply to this target weighs a line, not a row each: it was never run.
  const folded = report.results.filter((result) => result.status === "not-applicable");
  return `<section id="results"><h2>Properties</h2>
<table>${head}
<tbody>${applicable.map(row).join("\n")}</tbody></table>
${folded.length === 0 ? "" : `<details class="folded" data-folded="not-applicable"><summary>${folded.length} ${folded.length === 1 ? "property" : "properties"} not applicable to this target</summary>
<table>${head}
<tbody>${folded.map(row).join("\n")}</tbody></table></details>`}</section>`;
}

/**
 * The findings, those of one broken check (the gate whose rule they break) under one heading when
 * two or more share it, with the paths their counterexamples' calls share; a check that failed once
 * shows its finding alone. Groups keep the results' order.
 */
function groupedFindings(report: JsonReport, failed: readonly JsonResult[]): string {
  const gates = [...new Set(failed.map((result) => result.gate))];
  return gates
    .map((gate) => {
      const these = failed.filter((result) => result.gate === gate);
      const articles = these.map((result) => finding(report, result)).join("\n");
      if (these.length < 2) return articles;
      const shared = sharedPaths(these);
      return `<section class="group" data-group="${escapeMarkup(gate)}">
<h3 class="group">${these.length} failures share one broken check: <code>${escapeMarkup(gate)}</code></h3>
${shared.length === 0 ? "" : `<p class="shared" data-shared-paths="${escapeMarkup(JSON.stringify(shared))}">counterexample path${shared.length === 1 ? "" : "s"} they share: ${shared.map((path) => `<code>${escapeMarkup(path)}</code>`).join(", ")}</p>`}
${articles}
</section>`;
    })
    .join("\n");
}

/** The `path` arguments that appear in the calls of two or more of `results`' counterexamples. */
function sharedPaths(results: readonly JsonResult[]): string[] {
  const pathsOf = (result: JsonResult) => new Set((result.case?.calls ?? []).flatMap(({ call }) => [...call.matchAll(/\bpath: ("(?:[^"\\]|\\.)*")/g)].map(([, quoted = '""']) => JSON.parse(quoted) as string)));
  const sets = results.map(pathsOf);
  return [...new Set(sets.flatMap((paths) => [...paths]))].filter((path) => sets.filter((paths) => paths.has(path)).length >= 2);
}

/** Each tool against each property that called it: the calls, and the tool's coverage verdict. */
function coverage(report: JsonReport): string {
  if (report.coverage.length === 0) return `<section id="coverage"><h2>Coverage</h2><p>The target offers no tools.</p></section>`;
  const properties = [...new Set(report.coverage.flatMap((row) => Object.keys(row.attackedBy)))];
  const head = properties.map((id) => `<th class="vertical"><span>${escapeMarkup(id)}</span></th>`).join("");
  const rows = report.coverage.map((row) => {
    const cells = properties.map((id) => `<td class="n">${row.attackedBy[id] ?? ""}</td>`).join("");
    return `<tr class="${row.verdict === "not attacked" ? "fails" : ""}"><th>${escapeMarkup(row.tool)}</th><td>${escapeMarkup(row.plays)}</td><td>${escapeMarkup(row.verdict)}${row.verdict === "attacked" ? "" : `<br><small>${escapeMarkup(row.why)}</small>`}</td>${cells}</tr>`;
  });
  return `<section id="coverage"><h2>Coverage: calls of each tool, by property</h2>
<table><thead><tr><th>tool</th><th>operation</th><th>verdict</th>${head}</tr></thead>
<tbody>${rows.join("\n")}</tbody></table></section>`;
}

function finding(report: JsonReport, result: JsonResult): string {
  const example = result.case;
  return `<article id="${anchor(result.id)}" class="finding ${failsRun(result, report) ? "fails" : "passes"}" data-finding="${escapeMarkup(result.id)}">
<h3>${escapeMarkup(result.id)} <span class="word">${escapeMarkup(verdict(result, report))}</span></h3>
<p class="rule">${escapeMarkup(result.title)}</p>
<dl>
${result.consequence === undefined ? "" : `<dt>consequence</dt><dd>${escapeMarkup(result.consequence)}${result.alsoSeen === undefined ? "" : ` (its run also showed: ${escapeMarkup(result.alsoSeen.join(", "))})`}</dd>`}
${result.threat === undefined ? "" : `<dt>threat</dt><dd>${escapeMarkup(result.threat)}</dd>`}
${result.weaknesses === undefined || result.weaknesses.length === 0 ? "" : `<dt>weaknesses</dt><dd>${escapeMarkup(result.weaknesses.join(", "))}</dd>`}
</dl>
<h4>Broken</h4>
<pre class="reason">${escapeMarkup(result.reason ?? "(no reason given)")}</pre>
<h4>Counterexample${result.shrinkStopped === true ? " <small>(shrinking stopped at the deadline: a smaller case may fail too)</small>" : ""}</h4>
${example === undefined ? `<pre>${escapeMarkup(result.counterexample ?? "(none)")}</pre>` : drawnCase(example)}
${result.replay === undefined ? "" : `<h4>Replay <button type="button" class="copy" data-copies="replay" onclick="navigator.clipboard.writeText(this.closest('article').querySelector('pre.replay code').textContent)">copy</button></h4><pre class="replay"><code>${escapeMarkup(result.replay)}</code></pre>`}
</article>`;
}

function drawnCase(example: Counterexample): string {
  const { workspace } = example;
  const calls = example.calls.map((call, index) => {
    const broke = index + 1 === example.broke;
    return `<li${broke ? ' class="broke"' : ""}><code>${escapeMarkup(call.call)}</code>${broke ? ' <span class="mark">the rule broke here</span>' : ""}</li>`;
  });
  return [
    ...(workspace === undefined ? [] : [`<p class="workspace">workspace <code>${escapeMarkup(workspace.name)}</code>, ${escapeMarkup(SPELLINGS[workspace.spelling])}</p>`, treeSvg(example)]),
    ...(example.tools ?? []).map((made) => `<p>tools: <code>${escapeMarkup(made)}</code></p>`),
    ...(example.setup ?? []).map((line) => `<p class="setup">${escapeMarkup(line)}</p>`),
    calls.length === 0 ? "" : `<ol class="calls">${calls.join("")}</ol>`,
  ].join("\n");
}

const ROW = 22;
/** Room left of the workspace for the arrow of a call that leaves through one of its links. */
const LEFT = 40;
const WORKSPACE_WIDTH = 330;
const NEIGHBOUR_X = 500;
const NEIGHBOUR_WIDTH = 190;
const BOX_HEIGHT = 30;
/** Characters a label of the workspace and of a neighbour keeps before an ellipsis; the whole name is its tooltip, and in the text. */
const LABEL_CHARS = 42;
const NEIGHBOUR_CHARS = 24;
/** A call is drawn whole, over as many lines of this many characters as it needs (12px monospace, some 7.2px a character, within the 320px its box has for text). */
const CALL_LINE_CHARS = 40;
const CALL_LINE = 16;

/** A call's text in lines of `CALL_LINE_CHARS`, none lost. */
const callLines = (text: string): string[] => Array.from({ length: Math.max(1, Math.ceil(text.length / CALL_LINE_CHARS)) }, (_, line) => text.slice(line * CALL_LINE_CHARS, (line + 1) * CALL_LINE_CHARS));
const callHeight = (text: string) => BOX_HEIGHT + (callLines(text).length - 1) * CALL_LINE;

/**
 * The case's workspace as a picture: a box of its entries, one row each (a written file with the size
 * of its content); the neighbours its links and calls reach beside it (outside/ always); an arrow for
 * each link that crosses the boundary (dashed for a hardlink); and under the workspace, each call
 * whose path leaves it, with an arrow to where it leads: the link it goes through, or the neighbour.
 */
function treeSvg(example: Counterexample): string {
  const workspace = example.workspace as NonNullable<Counterexample["workspace"]>;
  const rows = [
    ...workspace.tree.map((entry) => ({ label: entryLine(entry), entry })),
    ...(workspace.written ?? []).map(({ path, content }) => ({ label: `${workspace.name}/${path} (${content.length} characters)`, entry: undefined })),
  ];
  const crossing = workspace.tree.filter((entry) => entry.crosses);
  const leaving = example.calls.flatMap((call, index) => (call.reaches === undefined ? [] : [{ call, number: index + 1 }]));
  const neighbours = [...new Set(["outside", ...crossing.map((entry) => entry.reaches ?? "outside"), ...leaving.map(({ call }) => call.reaches ?? "outside")])];
  const top = 34;
  const workspaceHeight = 30 + Math.max(1, rows.length) * ROW + 8;
  const rowY = (index: number) => top + 30 + index * ROW + 15;
  const callTexts = leaving.map(({ call, number }) => `call ${number}: ${call.call}`);
  // Each call's box is as tall as its lines: a call lies below the boxes of the calls before it.
  const callY = (index: number) => top + workspaceHeight + 16 + callTexts.slice(0, index).reduce((sum, text) => sum + callHeight(text) + 10, 0);
  const neighbourY = (index: number) => top + index * (BOX_HEIGHT + 12);
  const height = Math.max(callY(leaving.length), neighbourY(neighbours.length)) + 10;
  const width = NEIGHBOUR_X + NEIGHBOUR_WIDTH + 10;
  const right = LEFT + WORKSPACE_WIDTH;
  const label = (text: string, most = LABEL_CHARS) => (text.length > most ? `${text.slice(0, most - 1)}…` : text);
  const toNeighbour = (name: string | undefined) => neighbourY(neighbours.indexOf(name ?? "outside")) + BOX_HEIGHT / 2;
  const curve = (x1: number, y1: number, x2: number, y2: number) => `M ${x1} ${y1} C ${x1 + 60} ${y1}, ${x2 - 60} ${y2}, ${x2} ${y2}`;
  const entries = rows.map(
    (row, index) => `<text x="${LEFT + 12}" y="${rowY(index)}" class="entry${row.entry?.crosses === true ? " crossing" : ""}"><title>${escapeMarkup(row.label)}</title>${escapeMarkup(label(row.label))}</text>`,
  );
  const boxes = neighbours.map((name, index) => {
    const shown = name === "$BOX" ? "$BOX (the sandbox itself)" : name === ".." ? "above $BOX" : `${name}/`;
    return `<g data-neighbour="${escapeMarkup(name)}"><rect x="${NEIGHBOUR_X}" y="${neighbourY(index)}" width="${NEIGHBOUR_WIDTH}" height="${BOX_HEIGHT}" rx="4" class="neighbour"/><text x="${NEIGHBOUR_X + 10}" y="${neighbourY(index) + 20}"><title>${escapeMarkup(shown)}</title>${escapeMarkup(label(shown, NEIGHBOUR_CHARS))}</text></g>`;
  });
  const links = crossing.map((entry) => {
    const y = rowY(rows.findIndex((row) => row.entry === entry)) - 4;
    return `<path d="${curve(right, y, NEIGHBOUR_X, toNeighbour(entry.reaches))}" class="link${entry.kind === "hardlink" ? " hard" : ""}" marker-end="url(#arrow)" data-crosses="${escapeMarkup(entry.path)}"/>`;
  });
  const calls = leaving.map(({ call, number }, index) => {
    const y = callY(index);
    const text = callTexts[index] as string;
    const through = rows.findIndex((row) => row.entry?.path === call.through);
    // Through a link: up into the link's row from the left; straight out: to the neighbour.
    const arrow = through >= 0 ? `M ${LEFT} ${y + BOX_HEIGHT / 2} C ${LEFT - 30} ${y + BOX_HEIGHT / 2}, ${LEFT - 30} ${rowY(through) - 4}, ${LEFT + 8} ${rowY(through) - 4}` : curve(right, y + BOX_HEIGHT / 2, NEIGHBOUR_X, toNeighbour(call.reaches));
    const lines = callLines(text).map((line, at) => `<tspan x="${LEFT + 10}" dy="${at === 0 ? 0 : CALL_LINE}">${escapeMarkup(line)}</tspan>`);
    return `<g data-call="${number}"${number === example.broke ? ' class="broke"' : ""}><rect x="${LEFT}" y="${y}" width="${WORKSPACE_WIDTH}" height="${callHeight(text)}" rx="4" class="call"/><text x="${LEFT + 10}" y="${y + 20}"><title>${escapeMarkup(text)}</title>${lines.join("")}</text><path d="${arrow}" class="link call" marker-end="url(#arrow)" data-call-reaches="${escapeMarkup(call.reaches ?? "")}"/></g>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" class="tree" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeMarkup(`the workspace ${workspace.name}, the neighbours its links and calls reach`)}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="head"/></marker></defs>
<text x="${LEFT}" y="18" class="caption">the workspace</text><text x="${NEIGHBOUR_X}" y="18" class="caption">beside it, in $BOX</text>
<rect x="${LEFT}" y="${top}" width="${WORKSPACE_WIDTH}" height="${workspaceHeight}" rx="6" class="workspace"/>
<text x="${LEFT + 12}" y="${top + 20}" class="root">${escapeMarkup(label(`${workspace.name}/`))}</text>
${rows.length === 0 ? `<text x="${LEFT + 12}" y="${rowY(0)}" class="entry">(empty)</text>` : entries.join("\n")}
${boxes.join("\n")}
${links.join("\n")}
${calls.join("\n")}
</svg>`;
}

const anchor = (id: string) => `finding-${id.replace(/[^\w-]/g, "-")}`;

const STYLE = `
:root { color-scheme: light; --fail: #b42318; --warn: #b54708; --ok: #067647; --muted: #667085; --line: #d0d5dd; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #101828; background: #fcfcfd; }
header, main { max-width: 1100px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 0 0 4px; }
h4 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 14px 0 4px; }
.meta { color: var(--muted); margin: 0; }
.verdict { font-weight: 600; padding: 8px 12px; border-radius: 6px; display: inline-block; }
.verdict.fails { background: #fef3f2; color: var(--fail); }
.verdict.holds { background: #ecfdf3; color: var(--ok); }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.fails th, tr.fails td:first-child { color: var(--fail); }
th.vertical { height: 120px; white-space: nowrap; vertical-align: bottom; }
th.vertical span { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: normal; font-size: 12px; }
.word { font-size: 12px; font-weight: 600; color: var(--muted); }
article.finding { border: 1px solid var(--line); border-left: 4px solid var(--fail); border-radius: 6px; padding: 12px 16px; margin: 16px 0; background: #fff; }
article.finding.passes { border-left-color: var(--warn); }
.rule { margin: 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0 12px; margin: 8px 0; }
dt { color: var(--muted); }
dd { margin: 0; }
pre { background: #f2f4f7; padding: 8px 10px; border-radius: 4px; overflow-x: auto; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-all; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; word-break: break-all; }
ol.calls li { margin: 2px 0; }
ol.calls li.broke { background: #fef3f2; }
.mark { color: var(--fail); font-weight: 600; font-size: 12px; }
.setup { color: #344054; font-style: italic; }
details.folded { margin: 8px 0; color: var(--muted); }
details.folded summary { cursor: pointer; }
section.group { border-left: 3px solid var(--line); padding-left: 12px; margin: 16px 0; }
h3.group { font-size: 15px; color: #344054; }
p.shared { margin: 0 0 8px; }
button.copy { font: 12px system-ui, sans-serif; text-transform: none; letter-spacing: 0; margin-left: 8px; padding: 1px 8px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
svg.tree { display: block; max-width: 100%; height: auto; margin: 6px 0; }
svg.tree text { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; fill: #101828; }
svg.tree text.caption { font: 12px system-ui, sans-serif; fill: var(--muted); }
svg.tree text.root { font-weight: 700; }
svg.tree text.crossing { fill: var(--fail); }
svg.tree rect.workspace { fill: #eff8ff; stroke: #84caff; }
svg.tree rect.neighbour { fill: #fff6ed; stroke: #fdb022; }
svg.tree path.link { fill: none; stroke: var(--fail); stroke-width: 1.6; }
svg.tree path.link.hard { stroke-dasharray: 5 3; }
svg.tree path.head { fill: var(--fail); }
svg.tree rect.call { fill: #f9fafb; stroke: #98a2b3; }
svg.tree g.broke rect.call { fill: #fef3f2; stroke: var(--fail); }
svg.tree path.link.call { stroke: #7a271a; }
svg.tree g[data-call] text { white-space: pre; }
`;
