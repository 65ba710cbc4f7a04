/**
 * Runs audit properties against a target and collects one result per property.
 *
 * Promises: a property whose exports are missing is `skipped`; otherwise fast-check runs it with the
 * given seed and budget, and a failure carries the shrunk counterexample (rendered for a reader), the
 * reason, and the seed and path that replay exactly that case. A run that exceeds `timeoutMs` fails
 * rather than hanging the audit.
 * Does not promise: isolation from a target that corrupts process state (a fork that `chdir`s or
 * patches globals affects later properties).
 */
import fc from "fast-check";
import { type AuditProperty, type Gate, disposeIdleSandboxes } from "./property.js";
import type { AuditTarget } from "./target.js";

export interface RunOptions {
  seed: number;
  runs: number;
  /** Replays one shrunk case (fast-check's counterexample path), with `seed`. */
  path?: string;
  /** Stop at the first failing case without shrinking it: enough to prove a property catches a bug. */
  stopAtFirstFailure?: boolean;
  timeoutMs?: number;
}

export interface PropertyResult {
  id: string;
  gate: Gate;
  kind: "guarantee" | "limit";
  title: string;
  status: "passed" | "failed" | "skipped";
  runs: number;
  timeMs: number;
  seed: number;
  counterexample?: string;
  reason?: string;
  /** fast-check's path to the shrunk counterexample, for `--path` replays. */
  path?: string;
  missing?: string[];
}

// Long enough for a run of sequences.bash on a loaded 2-core machine; short enough that a fork whose
// tool hangs (a FIFO read without O_NONBLOCK) fails instead of stalling the audit.
export const DEFAULT_RUN_TIMEOUT_MS = 60_000;

export async function runProperty<T>(property: AuditProperty<T>, target: AuditTarget, options: RunOptions): Promise<PropertyResult> {
  const common = { id: property.id, gate: property.gate, kind: property.kind, title: property.title, seed: options.seed };
  const missing = property.needs.filter((name) => target[name] === undefined);
  if (missing.length > 0) return { ...common, status: "skipped", runs: 0, timeMs: 0, missing };
  const started = performance.now();
  const details = await fc
    .check(fc.asyncProperty(property.arbitrary, (value) => property.check(target, value)), {
      seed: options.seed,
      numRuns: property.deterministic === true ? 1 : options.runs,
      timeout: options.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
      ...(options.path === undefined ? {} : { path: options.path }),
      ...(options.path !== undefined || options.stopAtFirstFailure === true ? { endOnFailure: true } : {}),
    })
    .finally(disposeIdleSandboxes);
  const timeMs = Math.round(performance.now() - started);
  if (!details.failed) return { ...common, status: "passed", runs: details.numRuns, timeMs };
  const [value] = details.counterexample ?? [];
  return {
    ...common,
    status: "failed",
    runs: details.numRuns,
    timeMs,
    counterexample: value === undefined ? "(none)" : property.render(value),
    reason: describeFailure(details.errorInstance),
    ...(details.counterexamplePath === null ? {} : { path: details.counterexamplePath }),
  };
}

function describeFailure(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
