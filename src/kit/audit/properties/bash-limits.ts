/**
 * Gate 4's execution limits, against the defaults a target ships (`createWorkspaceTools(root)` with no
 * options; the chapter's are 10 s, 64 KiB per stream, 64 KiB of output):
 *
 * - `bashLimits.output`: a flood on stdout, stderr or both that passes 64 KiB on one stream is stopped:
 *   answered `isError` (not the success of a command that ran to its end), with the limit and the
 *   stream that flooded named (of a flood just over the limit on both, either: see namedStreams),
 *   and the answer is at most 64 KiB and a line; output under 64 KiB per stream but over it together
 *   is cut to 64 KiB, and the answer says how many characters it dropped.
 *   Not checked: that nothing after the flood ran. The overflow is seen when the tool reads the pipe,
 *   and a flood that fits in the pipe's 64 KiB beyond what was read is written in full before that, so
 *   the shell may start the next command first (`flood; touch f` left `f` behind in 2 of 60 runs of
 *   the chapter's tool at load 20; docs/limits.md).
 * - `bashLimits.timeout`: a command that outlives 10 s is stopped, answered `isError` with the timeout
 *   named. One case, and it costs what the target's timeout costs: 10 s of the audit's time for the
 *   chapter's tools (`maxRuns: 1`); a target that has not answered 5 s later has failed.
 * A limit that did not hold is `unavailable`, and output cut without saying how much breaks a
 * defence; an answer that stops the flood or the command but names the limit (65536 bytes, the
 * stream, the timeout) in words of its own departs from the chapter's convention, a warning unless
 * `--strict`.
 */
import fc from "fast-check";
import { type AuditProperty, Departures, execute, inSandbox, toolsOf, violation } from "../runner/property.js";

/** The chapter's limits, which the audit holds a target's defaults to. */
const OUTPUT_LIMIT = 64 * 1024;
const TIMEOUT_MS = 10_000;
/** How long past the timeout a target may take to answer: the kill and the reading of what is left. */
const TIMEOUT_GRACE_MS = 5_000;
/** Room for the line that names the rule or the cut, beside the 64 KiB of output. */
const ANSWER_SLACK = 512;

type Stream = "stdout" | "stderr";

type OutputCase =
  /** One stream (or both, one after the other) passes the limit: the command must be stopped. */
  | { kind: "flood"; streams: readonly Stream[]; bytes: number }
  /** Each stream stays under the limit, together they pass it: the answer must be cut, and say so. */
  | { kind: "together"; stdoutBytes: number; stderrBytes: number };

/** A flood no tool reads to its end in the time of a case unless nothing stops it. */
const FAR_FLOOD = 16 * 1024 * 1024;

const streams = fc.constantFrom<readonly Stream[]>(["stdout"], ["stderr"], ["stdout", "stderr"], ["stderr", "stdout"]);

const outputCase: fc.Arbitrary<OutputCase> = fc.oneof(
  fc.record({
    kind: fc.constant("flood" as const),
    streams,
    bytes: fc.oneof(fc.integer({ min: OUTPUT_LIMIT + 1, max: OUTPUT_LIMIT + 4096 }), fc.constant(FAR_FLOOD)),
  }),
  fc
    .tuple(fc.integer({ min: OUTPUT_LIMIT / 2 + 1, max: OUTPUT_LIMIT }), fc.integer({ min: OUTPUT_LIMIT / 2 + 1, max: OUTPUT_LIMIT }))
    .map(([stdoutBytes, stderrBytes]) => ({ kind: "together" as const, stdoutBytes, stderrBytes })),
);

/** `bytes` characters of `char` on `stream`, made by the shell's own tools. */
function emit(stream: Stream, bytes: number, char: string): string {
  return `head -c ${bytes} /dev/zero | tr '\\0' ${char}${stream === "stderr" ? " >&2" : ""}`;
}

function commandFor(value: OutputCase): string {
  if (value.kind === "together") return `${emit("stdout", value.stdoutBytes, "o")}; ${emit("stderr", value.stderrBytes, "e")}`;
  return value.streams.map((stream) => emit(stream, value.bytes, stream === "stdout" ? "o" : "e")).join("; ");
}

/**
 * The streams the answer may name. A first flood just over the limit fits in the pipe (64 KiB on
 * Linux) beside what the tool has read, so the shell may start the second before the tool reads the
 * first past the limit: then either may be read over it first. A far flood cannot finish before the
 * tool has read it far past the limit: its stream is the one.
 */
function namedStreams(value: Extract<OutputCase, { kind: "flood" }>): readonly Stream[] {
  return value.bytes === FAR_FLOOD ? value.streams.slice(0, 1) : value.streams;
}

export const bashLimitsOutput: AuditProperty<OutputCase> = {
  id: "bashLimits.output",
  gate: "bash limits",
  kind: "guarantee",
  title: "an output flood is stopped at 64 KiB per stream, and output over 64 KiB is cut, saying how much",
  needs: ["createWorkspaceTools"],
  consequence: "unavailable",
  threat: () => "the model's input alone",
  budgetScale: 0.4,
  arbitrary: outputCase,
  render: () => ({}),
  async check(target, value) {
    const departures = new Departures();
    await inSandbox(async (box) => {
      const result = await execute(toolsOf(target, box.root).bash, { command: commandFor(value) });
      const content = String(result.content);
      if (content.length > OUTPUT_LIMIT + ANSWER_SLACK) violation(`answered ${content.length} characters, over 64 KiB and a line`);
      if (value.kind === "together") {
        const dropped = value.stdoutBytes + value.stderrBytes - OUTPUT_LIMIT;
        if (!content.includes(String(dropped))) violation(`cut ${value.stdoutBytes + value.stderrBytes} characters of output without saying that ${dropped} were dropped`, "hardening broken");
        return;
      }
      if (result.isError !== true) violation(`a ${value.bytes}-byte flood on ${value.streams.join(" then ")} was answered as a success`);
      const rule = content.split("\n", 1)[0] ?? "";
      const named = namedStreams(value);
      if (!/65536|64 ?KiB/i.test(rule) || !named.some((stream) => rule.includes(stream)))
        departures.note(box, `the answer's first line does not name the limit (65536 bytes) and the stream that flooded (${named.join(" or ")}): ${JSON.stringify(rule.slice(0, 200))}`);
    });
    departures.settle();
  },
};

export const bashLimitsTimeout: AuditProperty<null> = {
  id: "bashLimits.timeout",
  gate: "bash limits",
  kind: "guarantee",
  title: "a command that outlives 10 s is stopped, with the timeout named (one case, 10 s)",
  needs: ["createWorkspaceTools"],
  consequence: "unavailable",
  threat: () => "the model's input alone",
  maxRuns: 1,
  waitsMs: TIMEOUT_MS + TIMEOUT_GRACE_MS,
  arbitrary: fc.constant(null),
  render: () => ({}),
  async check(target) {
    const departures = new Departures();
    await inSandbox(async (box) => {
      const giveUp = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), TIMEOUT_MS + TIMEOUT_GRACE_MS);
      });
      const answer = execute(toolsOf(target, box.root).bash, { command: `exec sleep ${(2 * TIMEOUT_MS) / 1000}` }, giveUp.signal);
      const result = await Promise.race([answer, late]).finally(() => clearTimeout(timer));
      if (result === "late") {
        giveUp.abort();
        await answer;
        violation(`no answer ${(TIMEOUT_MS + TIMEOUT_GRACE_MS) / 1000} s after the start of a command that outlives 10 s: it was not stopped`);
      }
      if (result.isError !== true) violation(`answered a command that outlived the timeout as a success: ${JSON.stringify(result)}`);
      if (!/time ?out|timed out/i.test(String(result.content))) departures.note(box, `the answer does not name the timeout: ${JSON.stringify(String(result.content).slice(0, 200))}`);
    });
    departures.settle();
  },
};
