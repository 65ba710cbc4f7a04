// What the toctou tests share: a sandbox made as the demo makes its own, and a poll with a deadline.
import { existsSync } from "node:fs";
import { afterEach, beforeEach, expect } from "vitest";
import { type Sandbox, createSandbox } from "../../src/kit/sandbox/sandbox.js";
import { TEMP_PREFIX } from "../../src/kit/toctou/command.js";

export /** Polls `ready` every 10 ms; throws after `ms` so a broken command fails instead of hanging. */
async function until(ready: () => boolean, ms: number): Promise<void> {
  for (let waited = 0; !ready(); waited += 10) {
    if (waited >= ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A sandbox per test, as the demo makes them (same prefix), and proof that disposing removes it. */
export function useDemoSandbox(): { readonly current: Sandbox } {
  const holder = {} as { current: Sandbox };
  beforeEach(async () => {
    holder.current = await createSandbox(TEMP_PREFIX);
  });
  afterEach(async () => {
    await holder.current.dispose();
    expect(existsSync(holder.current.base)).toBe(false);
  });
  return holder;
}
