/**
 * `workspace-gates toctou --svg FILE`: the deterministic run's timeline as a picture, drawn from the
 * run's own events (`DeterministicScenario.timeline`), one lane per tool call on one time scale: the
 * call, the check the trap saw, the attacker's swap right after it, and the tool's answer, with the
 * window between check and answer shaded and the verdict beside it.
 *
 * Promises: a standalone SVG document (no script, no external reference) whose every mark carries its
 * step in `data-step` and every lane its tool and outcome in `data-tool` and `data-outcome`, so a
 * browser test can read the picture back; all text is XML-escaped.
 * Does not promise: that the times mean anything beyond their order: they are one run's, on one machine.
 */
import type { DeterministicReport, DeterministicScenario, TimelineEvent } from "./deterministic.js";
import { escapeMarkup } from "../markup.js";

const WIDTH = 880;
const MARGIN = 24;
const PLOT_LEFT = 40;
const PLOT_RIGHT = WIDTH - 40;
const TITLE_HEIGHT = 56;
const LANE_HEIGHT = 196;
const FOOTER_HEIGHT = 36;

const COLOURS = { call: "#555", check: "#1f6feb", swap: "#d1242f", contained: "#1a7f37" };
const LABELS: Record<TimelineEvent["step"], string> = { call: "call", check: "check", swap: "swap", answer: "use, then answer" };
/** Where each step's label sits, relative to the axis: a row of its own, so labels never overlap however close the times. */
const LABEL_OFFSET: Record<TimelineEvent["step"], number> = { call: -62, swap: -28, check: 24, answer: 58 };

export function renderTimelineSvg(report: DeterministicReport): string {
  const end = Math.max(...report.scenarios.flatMap((scenario) => scenario.timeline.map((event) => event.atMs)), Number.MIN_VALUE);
  const x = (atMs: number) => PLOT_LEFT + ((PLOT_RIGHT - PLOT_LEFT) * atMs) / end;
  const height = TITLE_HEIGHT + LANE_HEIGHT * report.scenarios.length + FOOTER_HEIGHT;
  const escaped = report.scenarios.filter((scenario) => scenario.outcome === "escaped").length;
  const lines = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeMarkup(`TOCTOU, deterministic: the ${report.tools} tools, ${escaped} of ${report.scenarios.length} calls escaped`)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="${MARGIN}" y="24" font-size="15" font-weight="bold">${escapeMarkup(`TOCTOU, deterministic: the ${report.tools} tools`)}</text>`,
    `<text x="${MARGIN}" y="42" fill="#555">${escapeMarkup("the attacker swaps a directory for a symlink to outside right after the tool's check; the shaded window is checked but not yet used")}</text>`,
    ...report.scenarios.map((scenario, index) => lane(scenario, TITLE_HEIGHT + index * LANE_HEIGHT, x)),
    `<text x="${PLOT_LEFT}" y="${height - 12}" fill="#555">${escapeMarkup(`milliseconds since each tool was called (one run; 0 to ${formatMs(end)})`)}</text>`,
    "</svg>",
  ];
  return `${lines.join("\n")}\n`;
}

function lane(scenario: DeterministicScenario, top: number, x: (atMs: number) => number): string {
  const axisY = top + 112;
  const at = (step: TimelineEvent["step"]) => scenario.timeline.find((event) => event.step === step);
  const check = at("check");
  const answer = at("answer");
  const verdict = scenario.outcome === "escaped" ? "ESCAPED" : scenario.outcome === "contained" ? "contained" : "no check seen";
  const verdictColour = scenario.outcome === "escaped" ? COLOURS.swap : scenario.outcome === "contained" ? COLOURS.contained : COLOURS.call;
  const parts = [
    `<g data-tool="${scenario.tool}" data-outcome="${scenario.outcome}">`,
    `<text x="${MARGIN}" y="${top + 18}" font-weight="bold">${escapeMarkup(`${scenario.tool} ${JSON.stringify(scenario.input.path)}`)}</text>`,
    `<text data-verdict="" x="${MARGIN}" y="${top + 36}" font-weight="bold" fill="${verdictColour}">${escapeMarkup(`${verdict}: ${scenario.evidence}`)}</text>`,
  ];
  if (check !== undefined && answer !== undefined) {
    parts.push(`<rect data-window="" x="${x(check.atMs)}" y="${axisY - 10}" width="${Math.max(x(answer.atMs) - x(check.atMs), 1)}" height="20" fill="${verdictColour}" fill-opacity="0.12"/>`);
  }
  parts.push(`<line x1="${PLOT_LEFT}" y1="${axisY}" x2="${PLOT_RIGHT}" y2="${axisY}" stroke="#999"/>`);
  for (const event of scenario.timeline) {
    const cx = x(event.atMs);
    const colour = event.step === "answer" ? verdictColour : COLOURS[event.step];
    const labelY = axisY + LABEL_OFFSET[event.step];
    const anchor = cx > PLOT_RIGHT - 160 ? "end" : cx < PLOT_LEFT + 160 ? "start" : "middle";
    parts.push(
      `<circle data-step="${event.step}" cx="${cx}" cy="${axisY}" r="6" fill="${colour}"><title>${escapeMarkup(event.what)}</title></circle>`,
      `<text data-label="${event.step}" x="${cx}" y="${labelY}" text-anchor="${anchor}" fill="${colour}">${escapeMarkup(`${LABELS[event.step]} at ${formatMs(event.atMs)}`)}</text>`,
      `<text x="${cx}" y="${labelY + 14}" text-anchor="${anchor}" fill="#555" font-size="11">${escapeMarkup(event.what)}</text>`,
    );
  }
  parts.push("</g>");
  return parts.join("\n");
}

function formatMs(ms: number): string {
  return `${ms.toFixed(2)} ms`;
}
