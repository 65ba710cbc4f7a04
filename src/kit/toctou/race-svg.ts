/**
 * `workspace-gates toctou --mode race --svg FILE`: the race as a picture, the escapes over time of the
 * target beside those of its control (the chapter's tools raced for the same budget), each a step line
 * of the running count on one time scale. Raced with `--tools verified`, it is the chapter against
 * the verified tools: one line climbing, one flat at zero.
 *
 * Promises: a standalone SVG document (no script, no external reference); each line carries its tool
 * set in `data-tools` and its escapes in `data-escapes`, and each step its time in `data-at-ms`, so a
 * test can read the picture back; all text is XML-escaped.
 * Does not promise: that the times mean anything beyond one run on one machine.
 */
import { escapeMarkup } from "../markup.js";
import type { RaceReport } from "./race.js";

const WIDTH = 720;
const LEFT = 64;
const RIGHT = WIDTH - 24;
const TOP = 56;
const BOTTOM = 312;
// The key sits under the axis, one line per tool set across the whole width: at the lines' ends it
// was cut off at the picture's edge for any name longer than "chapter".
const KEY_TOP = BOTTOM + 60;
const KEY_LINE = 18;
const COLOURS = ["#d1242f", "#1f6feb"] as const;

/** One raced tool set: its name, how long it raced, and when each escape came. */
interface RacedLine {
  tools: string;
  elapsedMs: number;
  escapesAtMs: readonly number[];
}

export function renderRaceSvg(report: RaceReport, control: { tools: string; elapsedMs?: number | undefined; escapesAtMs?: readonly number[] | undefined } | undefined): string {
  const lines: RacedLine[] = [
    { tools: report.tools, elapsedMs: report.elapsedMs, escapesAtMs: report.escapesAtMs },
    ...(control === undefined ? [] : [{ tools: `${control.tools} (control)`, elapsedMs: control.elapsedMs ?? 0, escapesAtMs: control.escapesAtMs ?? [] }]),
  ];
  const endMs = Math.max(1, ...lines.map((line) => line.elapsedMs));
  const most = Math.max(1, ...lines.map((line) => line.escapesAtMs.length));
  const x = (atMs: number) => LEFT + ((RIGHT - LEFT) * atMs) / endMs;
  const y = (count: number) => BOTTOM - ((BOTTOM - TOP) * count) / most;
  const drawn = lines.map((line, index) => {
    const colour = COLOURS[index % COLOURS.length] as string;
    // A step line: flat until an escape, then one up.
    const points = [`${x(0)},${y(0)}`, ...line.escapesAtMs.flatMap((atMs, seen) => [`${x(atMs)},${y(seen)}`, `${x(atMs)},${y(seen + 1)}`]), `${x(line.elapsedMs)},${y(line.escapesAtMs.length)}`];
    const steps = line.escapesAtMs.map((atMs, seen) => `<circle cx="${x(atMs)}" cy="${y(seen + 1)}" r="2" fill="${colour}" data-at-ms="${atMs.toFixed(1)}"/>`);
    const label = `${line.tools}: ${line.escapesAtMs.length} escape${line.escapesAtMs.length === 1 ? "" : "s"} in ${(line.elapsedMs / 1000).toFixed(1)} s`;
    return `<g data-tools="${escapeMarkup(line.tools)}" data-escapes="${line.escapesAtMs.length}">
<polyline points="${points.join(" ")}" fill="none" stroke="${colour}" stroke-width="2"/>
${steps.join("\n")}
<line x1="${LEFT}" y1="${KEY_TOP + index * KEY_LINE - 4}" x2="${LEFT + 20}" y2="${KEY_TOP + index * KEY_LINE - 4}" stroke="${colour}" stroke-width="2"/>
<text x="${LEFT + 28}" y="${KEY_TOP + index * KEY_LINE}" fill="${colour}">${escapeMarkup(label)}</text>
</g>`;
  });
  const height = KEY_TOP + (lines.length - 1) * KEY_LINE + 16;
  return `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" font-size="12">
<title>${escapeMarkup(`TOCTOU race: escapes over time, ${lines.map((line) => line.tools).join(" against ")}`)}</title>
<rect width="${WIDTH}" height="${height}" fill="#fff"/>
<text x="${LEFT}" y="24" font-size="15" font-weight="600">Escapes over time: a racer swapping directories for links to outside</text>
<text x="${LEFT}" y="42" fill="#555">${escapeMarkup(`${report.total.attempts} calls of ${report.tools} in ${(report.elapsedMs / 1000).toFixed(1)} s, ${report.racer.swaps} swaps`)}</text>
<line x1="${LEFT}" y1="${BOTTOM}" x2="${RIGHT}" y2="${BOTTOM}" stroke="#999"/>
<line x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${BOTTOM}" stroke="#999"/>
<text x="${LEFT}" y="${BOTTOM + 18}" fill="#555">0 s</text>
<text x="${RIGHT}" y="${BOTTOM + 18}" fill="#555" text-anchor="end">${(endMs / 1000).toFixed(1)} s</text>
<text x="${LEFT - 8}" y="${TOP + 4}" fill="#555" text-anchor="end">${most}</text>
<text x="${LEFT - 8}" y="${BOTTOM + 4}" fill="#555" text-anchor="end">0</text>
<text x="${(LEFT + RIGHT) / 2}" y="${BOTTOM + 36}" fill="#555" text-anchor="middle">time since the race began; each step up is one escape seen on the disk</text>
${drawn.join("\n")}
</svg>
`;
}
