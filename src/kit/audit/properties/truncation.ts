/**
 * Gate 4 for size, through the read tool, for any length of file up to four times the budget:
 * - `truncation.read` (guarantee): up to 16 000 characters the answer is the whole file; beyond, it
 *   starts with exactly the first 8 000 characters, ends with exactly the last 8 000, and between them
 *   says how many were dropped (the exact count, as a number) in at most `MAX_NOTICE_CHARS`
 *   characters: the dropped text itself is not there.
 *   A file cut otherwise (another head and tail, a long notice, a refusal of a file over the
 *   budget) departs from the chapter's convention, a warning unless `--strict`; however it is cut, the
 *   answer must still say how many characters it dropped (its digits are the notice's: the files hold
 *   none), or the cut breaks a defence; an answer that keeps the whole file floods the model's context.
 * - `conformance.truncation` (conformance): what stands between them is exactly the chapter's
 *   `\n[truncated N characters]\n` (`truncationMarker` in src/gates/truncate.ts).
 */
import fc from "fast-check";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AuditProperty, Departures, execute, inSandbox, toolsOf, violation } from "../runner/property.js";
import type { Sandbox } from "../../sandbox/sandbox.js";
import { showDifference, showValue } from "../runner/show.js";
import type { Scene } from "../runner/counterexample.js";
import type { AuditTarget } from "../../operations/target.js";
import { MAX_READ_CHARS, truncationMarker } from "../../../gates/truncate.js";

const HEAD_CHARS = 8_000;
const TAIL_CHARS = MAX_READ_CHARS - HEAD_CHARS;
/** Room for a notice in any wording; far less than the smallest cut (one character past the budget is 8 001 short). */
export const MAX_NOTICE_CHARS = 200;

interface TruncationCase {
  length: number;
  alphabet: string[];
}

const length = fc.oneof(
  fc.integer({ min: 0, max: 200 }),
  fc.integer({ min: 15_990, max: 16_010 }),
  fc.integer({ min: 16_011, max: 60_000 }),
);
// Whole characters only (a lone surrogate does not survive UTF-8); 😀 is two UTF-16 units, so cuts
// can fall inside it, as they do for the chapter's slice().
const alphabet = fc.array(fc.constantFrom("a", "b", "\n", "é", "日", "😀", " "), { minLength: 1, maxLength: 4 });

function contentOf({ length: size, alphabet: chars }: TruncationCase): string {
  let text = "";
  for (let index = 0; text.length < size; index++) text += chars[index % chars.length];
  return text.slice(0, size).replace(/[\uD800-\uDBFF]$/, "a");
}

/** The file the case reads, with its content: the call is what the case made. */
const render = (value: TruncationCase): Scene => ({ workspace: { name: "ws", spelling: "canonical", tree: [], written: [{ path: READ_FILE, content: contentOf(value) }] } });

const READ_FILE = "file.txt";

/** Reads a file of the case's content through the target's read tool. */
async function readBack(target: AuditTarget, value: TruncationCase, judge: (content: string, answer: unknown, isError: boolean, box: Sandbox) => void): Promise<void> {
  await inSandbox(async (box) => {
    const content = contentOf(value);
    await writeFile(join(box.root, READ_FILE), content);
    const result = await execute(toolsOf(target, box.root).read, { path: READ_FILE });
    judge(content, result.content, result.isError === true, box);
  });
}

/** Whether `answer` names a count of dropped characters that fits it: at least what is missing, at most that and a notice. */
function saysHowMany(content: string, answer: string): boolean {
  const least = content.length - answer.length;
  return (answer.match(/\d+/g) ?? []).map(Number).some((count) => count >= least && count <= least + MAX_NOTICE_CHARS);
}

export const truncationRead: AuditProperty<TruncationCase> = {
  id: "truncation.read",
  gate: "truncation",
  kind: "guarantee",
  title: "read keeps the first and last 8 000 characters and says how many it dropped",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "the model's input alone",
  arbitrary: fc.record({ length, alphabet }),
  render,
  async check(target, value) {
    const departures = new Departures();
    await readBack(target, value, (content, answer, isError, box) => {
      const over = content.length > MAX_READ_CHARS;
      if (isError && over && typeof answer === "string") return departures.note(box, `refused a file of ${content.length} characters instead of cutting it: ${showValue(answer.slice(0, 200))}`);
      if (isError || typeof answer !== "string") violation(`answered ${showValue({ content: answer, isError })} instead of the file`);
      if (!over) {
        if (answer !== content) violation(`a file within the budget came back changed, ${showDifference(content, answer)}`);
        return;
      }
      if (answer.includes(content)) violation(`a file of ${content.length} characters came back whole: nothing was cut`, "unavailable");
      const head = content.slice(0, HEAD_CHARS);
      const tail = content.slice(content.length - TAIL_CHARS);
      const cutOtherwise = !answer.startsWith(head) || !answer.endsWith(tail);
      if (!answer.startsWith(head)) departures.note(box, `the head is not the file's first ${HEAD_CHARS} characters, ${showDifference(head, answer)}`);
      else if (!answer.endsWith(tail))
        departures.note(box, `the tail is not the file's last ${TAIL_CHARS} characters, ${showDifference([...tail].reverse().join(""), [...answer].reverse().join(""))} (both read backwards)`);
      if (cutOtherwise) {
        if (!saysHowMany(content, answer)) violation(`cut ${content.length} characters to ${answer.length} without saying how many it dropped`);
        return;
      }
      const notice = answer.slice(HEAD_CHARS, answer.length - TAIL_CHARS);
      const dropped = content.length - MAX_READ_CHARS;
      if (!new RegExp(`(^|\\D)${dropped}(\\D|$)`).test(notice))
        violation(`dropped ${dropped} characters without saying how many: between the head and the tail stands ${showValue(notice.slice(0, MAX_NOTICE_CHARS))}`);
      if (notice.length > MAX_NOTICE_CHARS) departures.note(box, `${notice.length} characters between the head and the tail, more than a notice (${MAX_NOTICE_CHARS})`);
    });
    departures.settle();
  },
};

export const conformanceTruncation: AuditProperty<TruncationCase> = {
  id: "conformance.truncation",
  gate: "truncation",
  kind: "conformance",
  title: "a cut read carries the reference's exact marker line between head and tail",
  needs: ["createWorkspaceTools"],
  consequence: "wording differs",
  threat: () => "the model's input alone",
  arbitrary: fc.record({ length: fc.integer({ min: 16_001, max: 40_000 }), alphabet }),
  render,
  async check(target, value) {
    await readBack(target, value, (content, answer) => {
      const dropped = content.length - MAX_READ_CHARS;
      const expected = `${content.slice(0, HEAD_CHARS)}\n${truncationMarker(dropped)}\n${content.slice(content.length - TAIL_CHARS)}`;
      if (answer !== expected) violation(`expected the marker ${showValue(`\n${truncationMarker(dropped)}\n`)} after the head, ${showDifference(expected, String(answer))}`);
    });
  },
};
