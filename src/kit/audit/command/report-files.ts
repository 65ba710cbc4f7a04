/**
 * The report files an audit writes besides its text (`--json`, `--junit`, `--sarif`, `--html`), and
 * the checks that find a file or directory it cannot write before a long run rather than after it.
 */
import { constants } from "node:fs";
import { access, mkdir, stat } from "node:fs/promises";
import type { AuditReport, ReplayPrefix, TargetWords } from "../reports/report.js";
import { toJson } from "../reports/report-json.js";
import { toJUnit, toSarif } from "../reports/report-formats.js";
import { toHtml } from "../reports/report-html.js";
import type { AuditArgs } from "./flags.js";
import { messageOf } from "../../cli-command.js";

export interface ReportFile {
  flag: string;
  file: string;
  render: (report: AuditReport, prefix: ReplayPrefix, target: TargetWords) => string;
}
export function reportFiles(options: AuditArgs): ReportFile[] {
  const files: ReportFile[] = [];
  if (options.json !== undefined)
    files.push({ flag: "--json", file: options.json, render: (report, prefix, target) => `${JSON.stringify(toJson(report, prefix, target), null, 2)}\n` });
  if (options.junit !== undefined) files.push({ flag: "--junit", file: options.junit, render: (report, prefix, target) => toJUnit(toJson(report, prefix, target)) });
  if (options.sarif !== undefined) files.push({ flag: "--sarif", file: options.sarif, render: (report, prefix, target) => toSarif(toJson(report, prefix, target)) });
  if (options.html !== undefined) files.push({ flag: "--html", file: options.html, render: (report, prefix, target) => toHtml(toJson(report, prefix, target)) });
  return files;
}


/** Makes `dir` (and its parents) unless it exists; answers why it cannot hold the regression tests, or undefined. */
export async function notAWritableDirectory(dir: string): Promise<string | undefined> {
  try {
    await mkdir(dir, { recursive: true });
    if (!(await stat(dir)).isDirectory()) return "not a directory";
    await access(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    return messageOf(error);
  }
}
