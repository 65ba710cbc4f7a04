/**
 * Generated approval hooks: what a `beforeToolCall` answers for each call, including the answers that
 * slip through loose checks (`{ approved: "true" }`, `{ approved: 1 }`, `true`, nothing), delivered at
 * once, as a Promise or as a bare thenable, and hooks that throw, reject or never settle.
 *
 * Answers are symbolic (a label per value), so a shrunk counterexample reads as what the hook said.
 * Only `approve` and `approve with input` approve; everything else must refuse the call.
 */
import fc from "fast-check";
import type { BeforeToolCall, ToolCall } from "../../index.js";

export const DENIAL_REASON = "denied by the audit's hook";

/** Every value a hook may answer, by the label a counterexample shows. */
export const ANSWER_VALUES = {
  approve: { approved: true },
  deny: { approved: false, reason: DENIAL_REASON },
  'approved: "true"': { approved: "true" },
  "approved: 1": { approved: 1 },
  'approved: "yes"': { approved: "yes" },
  "approved: [true]": { approved: [true] },
  "approved: false, no reason": { approved: false },
  true: true,
  '"approved"': "approved",
  undefined,
  null: null,
  "{}": {},
} as const satisfies Record<string, unknown>;

export type AnswerLabel = keyof typeof ANSWER_VALUES;

export type HookAnswer =
  | { kind: "answers"; value: AnswerLabel; delivery: "at once" | "as a Promise" | "as a thenable" }
  /** Approves with a replacement input (the property decides which). */
  | { kind: "approves with input"; input: unknown }
  | { kind: "throws" }
  | { kind: "rejects" }
  | { kind: "never settles" };

export const approves = (answer: HookAnswer) => answer.kind === "approves with input" || (answer.kind === "answers" && answer.value === "approve");

/** Any answer; `refusing` leaves out the approving ones. */
export function hookAnswer(constraints: { refusing?: boolean } = {}): fc.Arbitrary<HookAnswer> {
  const labels = (Object.keys(ANSWER_VALUES) as AnswerLabel[]).filter((label) => constraints.refusing !== true || label !== "approve");
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("answers" as const), value: fc.constantFrom(...labels), delivery: fc.constantFrom("at once" as const, "as a Promise" as const, "as a thenable" as const) }) },
    { weight: 1, arbitrary: fc.constantFrom<HookAnswer>({ kind: "throws" }, { kind: "rejects" }, { kind: "never settles" }) },
  );
}

export function renderAnswer(answer: HookAnswer): string {
  if (answer.kind === "answers") return `${answer.value} (${answer.delivery})`;
  if (answer.kind === "approves with input") return `approve with input ${JSON.stringify(answer.input)}`;
  return answer.kind;
}

/**
 * A hook that gives each call the answer at its id (and refuses a call it does not know);
 * `onNeverSettles` runs when it hands out a promise that never settles.
 */
export function scriptedHook(answers: ReadonlyMap<string, HookAnswer>, onNeverSettles: () => void): BeforeToolCall {
  return (call: ToolCall) => {
    const answer = answers.get(call.id) ?? { kind: "answers", value: "deny", delivery: "at once" };
    switch (answer.kind) {
      case "throws":
        throw new Error("the audit's hook throws");
      case "rejects": {
        const rejecting = Promise.reject(new Error("the audit's hook rejects"));
        // Handled here too, so a loop that never awaits it fails the property instead of crashing the audit.
        rejecting.catch(() => undefined);
        return rejecting;
      }
      case "never settles":
        onNeverSettles();
        return new Promise<never>(() => undefined);
      case "approves with input":
        return { approved: true, input: answer.input };
      case "answers": {
        const value = ANSWER_VALUES[answer.value] as never;
        if (answer.delivery === "at once") return value;
        if (answer.delivery === "as a Promise") return Promise.resolve(value);
        return { then: (resolve: (value: unknown) => void) => queueMicrotask(() => resolve(value)) } as never;
      }
    }
  };
}
