// A fresh sandbox per test, with the canaries beside the workspace checked after each.
import { afterEach, beforeEach, expect } from "vitest";
import { type Sandbox, createSandbox } from "../../src/kit/sandbox/sandbox.js";

/**
 * A fresh sandbox for every test of the calling file. After each test the canaries beside the
 * workspace must be unchanged; the tree is removed even when that check or the test fails.
 */
export function useSandbox(): { readonly current: Sandbox } {
  const holder = {} as { current: Sandbox };
  beforeEach(async () => {
    holder.current = await createSandbox();
  });
  afterEach(async () => {
    try {
      expect(await holder.current.canaryChanges()).toEqual([]);
    } finally {
      await holder.current.dispose();
    }
  });
  return holder;
}
