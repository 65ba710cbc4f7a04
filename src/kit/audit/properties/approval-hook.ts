/**
 * The approval layer, attacked through the target's `runAgent` over real tools in the sandbox: the
 * hook decides whether a call runs, and nothing but exactly `{ approved: true, input? }` may let it.
 *
 * - refused: any other answer (loose values, thenables, a Promise of garbage, a hook that throws,
 *   rejects or never settles) means no tool is reached, no trace is left, and, when the run ends
 *   normally, one error tool message for the call. A hook that never settles is answered by aborting
 *   the run's signal; the loop must then end within a bounded wait.
 * - bash by default: without a hook, no spelling of a call reaches the bash tool, so the dispatcher
 *   and the default policy agree on names.
 * - ordering: with `fc.scheduler` settling every hook answer and every tool result, no tool is reached
 *   before its own call's approval settled, and never on a call that was denied.
 * - input: the tool gets the approved input (the hook's replacement when it gives one, otherwise the
 *   model's), and a replacement still passes the tool's own gates.
 */
import fc from "fast-check";
import { type CallSpec, BASH_SPELLINGS, UNKNOWN_NAMES, knownName, marker, turns } from "../agent-calls.js";
import { type HookAnswer, ANSWER_VALUES, approves, hookAnswer, renderAnswer, scriptedHook } from "../agent-hooks.js";
import {
  type NumberedCall,
  type ToolCall,
  type ToolUse,
  numbered,
  reportingTools,
  scriptedProvider,
  requireNotRun,
  requireTranscript,
  settleAfterAbort,
  toolMessageOf,
  traces,
  withoutRunAgent,
} from "../agent-harness.js";
import { type AuditProperty, inSandbox, violation } from "../runner/property.js";

type AnsweredCall = CallSpec & { answer: HookAnswer };

const renderTurns = <T extends CallSpec>(calls: readonly (readonly NumberedCall<T>[])[], extra: (call: NumberedCall<T>) => string = () => "") =>
  calls
    .map((turn, at) => `turn ${at + 1}:\n${turn.map((call) => `  ${JSON.stringify(call.call.name)} id ${JSON.stringify(call.call.id)} input ${JSON.stringify(call.call.input)}${extra(call)}`).join("\n")}`)
    .join("\n");

const providerFor = (calls: readonly (readonly NumberedCall[])[]) =>
  scriptedProvider([...calls.map((turn) => ({ toolCalls: turn.map((call): ToolCall => ({ ...call.call })) })), { text: "done" }]);

export const approvalRefused: AuditProperty<AnsweredCall[][]> = {
  id: "approval.refused",
  gate: "approval",
  kind: "guarantee",
  title: "a call whose approval is anything but exactly { approved: true, input? } never runs and gets one error message",
  needs: [],
  consequence: "approval bypassed",
  threat: () => "the model's input alone",
  notApplicable: withoutRunAgent,
  arbitrary: turns({ call: fc.record({ name: knownName, aim: knownName, answer: hookAnswer() }), maxTurns: 2, maxCalls: 3 }),
  render: (value) => renderTurns(numbered(value), (call) => `, hook answers ${renderAnswer(call.spec.answer)}`),
  async check(target, value) {
    await inSandbox(async (box) => {
      const calls = numbered(value);
      const controller = new AbortController();
      const uses: ToolUse[] = [];
      const answers = new Map(calls.flat().map((call) => [call.call.id, call.spec.answer]));
      const running = target.runAgent!("audit", {
        provider: providerFor(calls),
        tools: reportingTools(target, box.root, (use) => uses.push(use)),
        beforeToolCall: scriptedHook(answers, () => setTimeout(() => controller.abort(), 5)),
        signal: controller.signal,
      });
      const outcome = await settleAfterAbort(running, controller.signal);
      const refused = calls.flat().filter((call) => !approves(call.spec.answer));
      requireNotRun(refused, uses, await traces(box.root), (call) => `its hook answered ${renderAnswer(call.spec.answer)}`);
      if (!outcome.ok) return; // a broken hook may stop the run: what matters is that nothing ran
      requireTranscript(outcome.value.messages);
      for (const call of refused) {
        const message = toolMessageOf(outcome.value.messages, call.call.id);
        if (message !== undefined && !message.isError) violation(`call ${call.call.id} was refused (${renderAnswer(call.spec.answer)}) but its tool message is no error: ${message.content}`, "hardening broken");
      }
    });
  },
};

/** Names a call to bash may carry: the exact one, and every spelling a lenient lookup folds onto it. */
const bashName = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...BASH_SPELLINGS) }, { weight: 1, arbitrary: fc.constantFrom("bash", ...UNKNOWN_NAMES) }, { weight: 1, arbitrary: knownName });

export const approvalBashDefault: AuditProperty<CallSpec[][]> = {
  id: "approval.bashDefault",
  gate: "approval",
  kind: "guarantee",
  title: "with no hook, no call reaches the bash tool, whatever the spelling of its name",
  needs: [],
  consequence: "approval bypassed",
  threat: () => "the model's input alone",
  notApplicable: withoutRunAgent,
  arbitrary: turns({ call: fc.record({ name: bashName, aim: fc.constant("bash" as const) }), maxTurns: 2, maxCalls: 4 }),
  render: (value) => renderTurns(numbered(value)),
  async check(target, value) {
    await inSandbox(async (box) => {
      const calls = numbered(value);
      const uses: ToolUse[] = [];
      const run = await target.runAgent!("audit", { provider: providerFor(calls), tools: reportingTools(target, box.root, (use) => uses.push(use)) });
      const bash = uses.filter((use) => use.tool === "bash");
      requireNotRun(calls.flat(), bash, await traces(box.root), () => "no hook was given, so bash must be denied");
      requireTranscript(run.messages);
    });
  },
};

interface OrderingCase {
  calls: (CallSpec & { approve: boolean })[][];
  scheduler: fc.Scheduler;
}

export const approvalOrdering: AuditProperty<OrderingCase> = {
  id: "approval.ordering",
  gate: "approval",
  kind: "guarantee",
  title: "whatever order hooks and tools settle in, a tool runs only after its own call's approval",
  needs: [],
  consequence: "approval bypassed",
  threat: () => "the model's input alone",
  notApplicable: withoutRunAgent,
  arbitrary: fc.record({
    calls: turns({ call: fc.record({ name: knownName, aim: knownName, approve: fc.boolean() }), maxTurns: 2, minCalls: 2, maxCalls: 4 }),
    scheduler: fc.scheduler(),
  }),
  render: ({ calls, scheduler }) => `${renderTurns(numbered(calls), (call) => (call.spec.approve ? ", approved" : ", denied"))}\n${String(scheduler)}`,
  async check(target, { calls: value, scheduler }) {
    await inSandbox(async (box) => {
      const calls = numbered(value);
      const byId = new Map(calls.flat().map((call) => [call.call.id, call]));
      const events: string[] = [];
      const hook = (call: ToolCall) => {
        const known = byId.get(call.id);
        const answer = known?.spec.approve === true ? ANSWER_VALUES.approve : ANSWER_VALUES.deny;
        const settling = scheduler.schedule(Promise.resolve(answer), `hook of ${call.id}`);
        void settling.then(() => events.push(`answered ${call.id}`));
        return settling;
      };
      const uses: ToolUse[] = [];
      const tools = reportingTools(
        target,
        box.root,
        (use) => {
          uses.push(use);
          events.push(`ran ${use.marker === undefined ? "?" : marker(use.marker)}`);
        },
        // The result settles when the scheduler says; its value stays out of the report (it names host paths).
        (result) => result.then((answer) => scheduler.schedule(Promise.resolve(), "a tool's result").then(() => answer)),
      );
      await scheduler.waitFor(target.runAgent!("audit", { provider: providerFor(calls), tools, beforeToolCall: hook }));
      for (const [at, event] of events.entries()) {
        if (!event.startsWith("ran ")) continue;
        const id = event.slice("ran ".length);
        const call = byId.get(id);
        if (call === undefined) violation(`a tool ran with an input of no call: ${event}`);
        if (!events.slice(0, at).includes(`answered ${id}`)) violation(`call ${id} reached its tool before its own approval settled (events: ${events.join(", ")})`);
        if (!call.spec.approve) violation(`call ${id} ran although its hook denied it (events: ${events.join(", ")})`);
      }
    });
  },
};

/** What a hook puts in place of a write's input: a file inside, or a path the tool must refuse. */
type Replacement = "none" | "inside" | "parent escape" | "absolute outside" | "similar prefix";

const replacementInput = (replacement: Replacement, index: number, outside: string): unknown => {
  const content = `replaced ${marker(index)}`;
  if (replacement === "inside") return { path: `${marker(index)}-replaced.txt`, content };
  if (replacement === "parent escape") return { path: `../outside/${marker(index)}.txt`, content };
  if (replacement === "absolute outside") return { path: `${outside}/${marker(index)}.txt`, content };
  return { path: `../ws-other/${marker(index)}.txt`, content };
};

export const approvalInput: AuditProperty<(CallSpec & { replacement: Replacement })[][]> = {
  id: "approval.input",
  gate: "approval",
  kind: "guarantee",
  title: "the tool gets the approved input, and a hook's replacement still passes the tool's gates",
  needs: [],
  consequence: "approval bypassed",
  threat: () => "the model's input alone",
  notApplicable: withoutRunAgent,
  arbitrary: turns({
    call: fc.record({
      name: fc.constant("write"),
      aim: fc.constant("write" as const),
      replacement: fc.constantFrom<Replacement>("none", "inside", "parent escape", "absolute outside", "similar prefix"),
    }),
    maxTurns: 2,
    maxCalls: 3,
  }),
  render: (value) => renderTurns(numbered(value), (call) => `, hook replaces the input: ${call.spec.replacement}`),
  async check(target, value) {
    await inSandbox(async (box) => {
      const calls = numbered(value);
      const expected = new Map(calls.flat().map((call) => [call.call.id, call.spec.replacement === "none" ? call.call.input : replacementInput(call.spec.replacement, call.index, box.outside)]));
      const hook = (call: ToolCall) => {
        const known = calls.flat().find((candidate) => candidate.call.id === call.id);
        if (known === undefined || known.spec.replacement === "none") return ANSWER_VALUES.approve;
        return { approved: true as const, input: expected.get(call.id) };
      };
      const uses: ToolUse[] = [];
      const run = await target.runAgent!("audit", { provider: providerFor(calls), tools: reportingTools(target, box.root, (use) => uses.push(use)), beforeToolCall: hook });
      requireTranscript(run.messages);
      for (const call of calls.flat()) {
        const got = uses.filter((use) => use.marker === call.index).map((use) => JSON.stringify(use.input));
        const want = JSON.stringify(expected.get(call.call.id));
        if (got.length !== 1 || got[0] !== want) violation(`call ${call.call.id}: the tool should get ${want} once, got ${got.join(" and ") || "nothing"}`);
        const escapes = call.spec.replacement !== "none" && call.spec.replacement !== "inside";
        if (escapes && toolMessageOf(run.messages, call.call.id)?.isError !== true) violation(`call ${call.call.id}: the replacement ${want} leaves the workspace, yet the call did not fail`, "hardening broken");
      }
    });
  },
};
