/**
 * The agent loop's protocol and bounds, attacked through the target's `runAgent` over real tools.
 *
 * - protocol (model-based, `fc.commands`): the model answers turn by turn, with generated names
 *   (exact, folded spellings, names of nothing), ids (empty, duplicated, object keys) and inputs
 *   (hostile ones included), and a small model says what the transcript must be before each request:
 *   every call followed by exactly one tool message with its id and name, in order; a name that is not
 *   exactly a tool's reaches no tool and is answered with an error; after `maxTurns` requests the loop
 *   ends with `max_turns`, whatever the model keeps asking; a turn without calls ends it with `done`.
 * - abort: once the run's signal aborts (after the model's answer, inside a call's hook, inside a
 *   call's tool), no call that had not started runs, in this turn or any later one, and the loop ends
 *   within a bounded wait.
 */
import fc from "fast-check";
import { type CallSpec, TOOL_NAMES, callName, hostileInput, inputFor, knownName, marker, turns } from "../agent-calls.js";
import {
  type AgentRun,
  type Message,
  type NumberedCall,
  type Provider,
  type ProviderTurn,
  type Settled,
  type ToolCall,
  type ToolUse,
  approveAll,
  numbered,
  reportingTools,
  requireNotRun,
  requireTranscript,
  scriptedProvider,
  settleAfterAbort,
  traces,
  withoutRunAgent,
} from "../agent-harness.js";
import { type AuditProperty, inSandbox, violation } from "../runner/property.js";
import type { AuditTarget } from "../../operations/target.js";
import type { Sandbox } from "../../sandbox/sandbox.js";

/** One line per message, as the model of the transcript writes it. */
function shape(message: Message): string {
  if (message.role === "user") return "user";
  if (message.role === "assistant") return `assistant ${JSON.stringify(message.toolCalls.map((call) => [call.id, call.name]))}`;
  return `tool ${JSON.stringify([message.toolCallId, message.name])}`;
}

/** A provider the commands answer one request at a time. */
class SteppedProvider implements Provider {
  readonly requests: Message[][] = [];
  private answer: ((turn: ProviderTurn) => void) | undefined;
  private onRequest: (() => void) | undefined;

  next({ messages }: { messages: readonly Message[] }): Promise<ProviderTurn> {
    this.requests.push([...messages]);
    return new Promise((resolve) => {
      this.answer = resolve;
      this.onRequest?.();
    });
  }

  /** Resolves once a request is waiting for its answer. */
  waiting(): Promise<void> {
    return this.answer !== undefined ? Promise.resolve() : new Promise((resolve) => (this.onRequest = resolve));
  }

  reply(turn: ProviderTurn): void {
    const answer = this.answer;
    this.answer = undefined;
    this.onRequest = undefined;
    answer?.(turn);
  }
}

interface TranscriptModel {
  lines: string[];
  turns: number;
  readonly maxTurns: number;
  ended: boolean;
}

interface LoopUnderTest {
  provider: SteppedProvider;
  run: Promise<Settled<AgentRun>>;
  uses: ToolUse[];
  nextIndex: number;
}

/** Waits for the loop's next request; a violation if the run ended instead. */
async function nextRequest(model: TranscriptModel, real: LoopUnderTest): Promise<Message[]> {
  const ended = await Promise.race([real.provider.waiting().then(() => undefined), real.run]);
  if (ended !== undefined) violation(`after ${model.turns} turns (maxTurns ${model.maxTurns}) the loop ended (${ended.ok ? ended.value.stopReason : String(ended.error)}) instead of asking the model again`);
  const request = real.provider.requests.at(-1) as Message[];
  const got = request.map(shape);
  if (JSON.stringify(got) !== JSON.stringify(model.lines)) violation(`request ${model.turns + 1} carries the transcript\n  ${got.join("\n  ")}\nexpected\n  ${model.lines.join("\n  ")}`);
  return request;
}

async function requireEnd(model: TranscriptModel, real: LoopUnderTest, stopReason: AgentRun["stopReason"]): Promise<Message[]> {
  const ended = await Promise.race([real.run, real.provider.waiting().then(() => undefined)]);
  if (ended === undefined) violation(`after ${model.turns} turns (maxTurns ${model.maxTurns}) the loop asked the model again instead of ending with ${stopReason}`);
  if (!ended.ok) violation(`the run rejected with ${String(ended.error)} instead of ending with ${stopReason}`);
  if (ended.value.stopReason !== stopReason) violation(`the run ended with ${ended.value.stopReason}, expected ${stopReason} after ${model.turns} turns (maxTurns ${model.maxTurns})`);
  requireTranscript(ended.value.messages);
  const got = ended.value.messages.map(shape);
  if (JSON.stringify(got) !== JSON.stringify(model.lines)) violation(`the final transcript is\n  ${got.join("\n  ")}\nexpected\n  ${model.lines.join("\n  ")}`);
  return ended.value.messages;
}

type ModelCall = CallSpec & { id: string; hostile: ((index: number) => unknown) | undefined };

class ToolTurn implements fc.AsyncCommand<TranscriptModel, LoopUnderTest> {
  constructor(readonly calls: readonly ModelCall[]) {}
  check(model: Readonly<TranscriptModel>) {
    return !model.ended;
  }
  async run(model: TranscriptModel, real: LoopUnderTest) {
    await nextRequest(model, real);
    const made = this.calls.map((spec, at) => {
      const index = real.nextIndex + at;
      return { index, spec, call: { id: spec.id, name: spec.name, input: spec.hostile?.(index) ?? inputFor(spec.aim, index) } };
    });
    real.nextIndex += made.length;
    real.provider.reply({ toolCalls: made.map((call): ToolCall => ({ ...call.call })) });
    model.turns++;
    model.lines.push(`assistant ${JSON.stringify(made.map((call) => [call.call.id, call.call.name]))}`, ...made.map((call) => `tool ${JSON.stringify([call.call.id, call.call.name])}`));
    let transcript: Message[];
    if (model.turns >= model.maxTurns) {
      model.ended = true;
      transcript = await requireEnd(model, real, "max_turns");
    } else transcript = await nextRequest(model, real);
    // The transcript matched the model, so it ends with this turn's tool messages, one per call.
    const answers = transcript.slice(-made.length);
    for (const [at, call] of made.entries()) {
      if ((TOOL_NAMES as readonly string[]).includes(call.call.name)) continue;
      requireNotRun([call], real.uses, new Set(), () => `no tool is named ${JSON.stringify(call.call.name)}`);
      const answer = answers[at];
      if (answer?.role === "tool" && !answer.isError) violation(`call ${JSON.stringify(call.call.id)} to the unknown tool ${JSON.stringify(call.call.name)} was answered as a success: ${answer.content}`);
    }
  }
  toString() {
    return `model calls ${this.calls.map((call) => `${JSON.stringify(call.name)}#${JSON.stringify(call.id)}${call.hostile === undefined ? "" : " (hostile input)"}`).join(", ")}`;
  }
}

class TextTurn implements fc.AsyncCommand<TranscriptModel, LoopUnderTest> {
  check(model: Readonly<TranscriptModel>) {
    return !model.ended;
  }
  async run(model: TranscriptModel, real: LoopUnderTest) {
    await nextRequest(model, real);
    real.provider.reply({ text: "done" });
    model.turns++;
    model.ended = true;
    model.lines.push("assistant []");
    await requireEnd(model, real, "done");
  }
  toString() {
    return "model answers without calls";
  }
}

const modelCall: fc.Arbitrary<ModelCall> = fc.record({
  name: callName,
  aim: knownName,
  id: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("a", "b", "c") }, { weight: 1, arbitrary: fc.constantFrom("", "__proto__", "toString", "call 1\n") }),
  hostile: fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileInput }),
});

type Turn = fc.AsyncCommand<TranscriptModel, LoopUnderTest>;

/**
 * The model's turns, in order. A plain list, not `fc.commands`: a list shrinks without knowing which
 * turns ran, so the path of a shrunk case replays it (`--path`), where `fc.commands` shrinks by what
 * its last run executed and cannot replay without its own replay path.
 */
interface ProtocolCase {
  maxTurns: number;
  turns: readonly Turn[];
}

/** The turns the loop is asked for: none after a turn without calls, none past `maxTurns` (as `check` says of each). */
function turnsTaken({ maxTurns, turns }: ProtocolCase): Turn[] {
  const model: TranscriptModel = { lines: [], turns: 0, maxTurns, ended: false };
  return turns.filter((turn) => {
    if (!turn.check(model)) return false;
    model.turns++;
    model.ended = turn instanceof TextTurn || model.turns >= maxTurns;
    return true;
  });
}

export const agentProtocol: AuditProperty<ProtocolCase> = {
  id: "agent.protocol",
  gate: "agent loop",
  kind: "guarantee",
  title: "every call gets exactly one tool message with its id, in order; unknown tools are refused; maxTurns holds",
  needs: [],
  consequence: "hardening broken",
  threat: () => "the model's input alone",
  notApplicable: withoutRunAgent,
  budgetScale: 0.5,
  arbitrary: fc.record({
    maxTurns: fc.integer({ min: 1, max: 4 }),
    turns: fc.array(
      // Mostly turns with calls, so that runs reach maxTurns: the first turn without calls ends the run.
      fc.oneof(
        { weight: 4, arbitrary: fc.array(modelCall, { minLength: 1, maxLength: 3 }).map((calls): Turn => new ToolTurn(calls)) },
        { weight: 1, arbitrary: fc.constant<Turn>(new TextTurn()) },
      ),
      { maxLength: 6 },
    ),
  }),
  render: (value) => `maxTurns ${value.maxTurns}\n  ${turnsTaken(value).map(String).join("\n  ")}`,
  async check(target, { maxTurns, turns }) {
    await inSandbox(async (box) => {
      const provider = new SteppedProvider();
      const uses: ToolUse[] = [];
      const running = target.runAgent!("audit", { provider, tools: reportingTools(target, box.root, (use) => uses.push(use)), beforeToolCall: approveAll, maxTurns });
      const real: LoopUnderTest = { provider, uses, nextIndex: 0, run: running.then((value) => ({ ok: true, value }), (error: unknown) => ({ ok: false, error })) };
      const model: TranscriptModel = { lines: ["user"], turns: 0, maxTurns, ended: false };
      for (const turn of turns) if (turn.check(model)) await turn.run(model, real);
      if (!model.ended) await new TextTurn().run(model, real);
    });
  },
};

/** Where the signal aborts: right after the model's answer, or inside the hook or the tool of a call of the first turn. */
type AbortPoint = { moment: "after the model's answer" } | { moment: "in the hook of" | "in the tool of"; call: number };

interface AbortCase {
  calls: CallSpec[][];
  at: AbortPoint;
}

const abortCase: fc.Arbitrary<AbortCase> = turns({ call: fc.record({ name: knownName, aim: knownName }), maxTurns: 2, maxCalls: 3 })
  .map((calls) => (calls.length === 1 ? [...calls, [{ name: "write", aim: "write" as const }]] : calls))
  .chain((calls) =>
    fc.record({
      calls: fc.constant(calls),
      at: fc.oneof(
        fc.constant<AbortPoint>({ moment: "after the model's answer" }),
        fc.record({ moment: fc.constantFrom("in the hook of" as const, "in the tool of" as const), call: fc.nat({ max: (calls[0]?.length ?? 1) - 1 }) }),
      ),
    }),
  );

/** Aborts `controller` at the point, and says which calls may have run by then. */
function abortingRun(target: AuditTarget, box: Sandbox, calls: NumberedCall[][], at: AbortPoint, controller: AbortController, uses: ToolUse[]) {
  const first = calls[0] ?? [];
  const aimed = at.moment === "after the model's answer" ? undefined : first[at.call];
  const script = scriptedProvider([...calls.map((turn) => ({ toolCalls: turn.map((call): ToolCall => ({ ...call.call })) })), { text: "done" }]);
  const provider: Provider = {
    async next(request) {
      const turn = await script.next(request);
      if (at.moment === "after the model's answer") controller.abort();
      return turn;
    },
  };
  const beforeToolCall = (call: ToolCall) => {
    if (at.moment === "in the hook of" && call.id === aimed?.call.id) controller.abort();
    return approveAll(call);
  };
  const tools = reportingTools(target, box.root, (use) => {
    uses.push(use);
    if (at.moment === "in the tool of" && use.marker === aimed?.index) controller.abort();
  });
  const started = aimed === undefined ? 0 : at.moment === "in the tool of" ? aimed.index + 1 : aimed.index;
  const running = target.runAgent!("audit", { provider, tools, beforeToolCall, signal: controller.signal });
  return { running, mayHaveRun: (call: NumberedCall) => call.index < started };
}

export const agentAbort: AuditProperty<AbortCase> = {
  id: "agent.abort",
  gate: "agent loop",
  kind: "guarantee",
  title: "once the signal aborts, no call that had not started runs, and the loop ends",
  needs: [],
  consequence: "hardening broken",
  threat: () => "the model's input alone",
  notApplicable: withoutRunAgent,
  arbitrary: abortCase,
  render: ({ calls, at }) =>
    `${numbered(calls)
      .map((turn, index) => `turn ${index + 1}: ${turn.map((call) => `${call.call.name} ${marker(call.index)}`).join(", ")}`)
      .join("\n")}\nabort ${at.moment}${"call" in at ? ` ${marker(at.call)}` : ""}`,
  async check(target, { calls: value, at }) {
    await inSandbox(async (box) => {
      const calls = numbered(value);
      const controller = new AbortController();
      const uses: ToolUse[] = [];
      const { running, mayHaveRun } = abortingRun(target, box, calls, at, controller, uses);
      const outcome = await settleAfterAbort(running, controller.signal);
      if (!controller.signal.aborted) violation("the loop ended before it reached the point where the signal aborts");
      const notStarted = calls.flat().filter((call) => !mayHaveRun(call));
      requireNotRun(notStarted, uses, await traces(box.root), () => `the signal had aborted before it started`);
      if (outcome.ok) requireTranscript(outcome.value.messages);
    });
  },
};
